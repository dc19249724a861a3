// `flagwire refs scan` over a generated source tree (issue 99 item 4): FILES files (default 10,000) in the
// eight language files of the test corpus (test/helpers/code-refs-corpus.ts), each with three blocks of
// planted references and decoys, written to a temporary folder, then scanned in this process as the
// command scans (scanTree: grammars loaded on first use, every file parsed). Prints the seconds of the
// scan, the references found and the machine's load.
// Run: npm run build && node dist/bench/code-refs-scan.bench.js [FILES]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { scanTree } from '../src/code-refs/scan-tree.js';
import { writeCorpus } from '../test/helpers/code-refs-corpus.js';

const kFiles = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'flagwire-refs-bench-'));
try {
  const corpus = writeCorpus(dir, kFiles, 3);
  const loadBefore = loadavg()[0]!;
  const started = performance.now();
  const result = await scanTree(dir);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      files: result.filesScanned,
      planted: corpus.planted.length,
      references: result.references.length,
      seconds: Number(seconds.toFixed(1)),
      filesPerSecond: Math.round(result.filesScanned / seconds),
      load: [Number(loadBefore.toFixed(1)), Number(loadavg()[0]!.toFixed(1))],
      date: new Date().toISOString(),
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// Raw events exported as JSON lines against another project's evaluations (issue 96, item 8): project A
// keeps EVENTS raw events of about 1.4 KB each (random details, sent 600 a batch); project B (Org B's) is
// evaluated one request at a time throughout. Prints B's GET p50/p99 in a quiet phase (the baseline),
// while one export of A's events is read as fast as the client can, and while two are, each export's
// bytes and time, every 5xx, and the node's RSS before and at its peak.
// Run: npm run build && EVENTS=40000 node dist/bench/raw-export.bench.js
import type { Test } from 'tap';
import { call, type Reply } from '../test/helpers/http.js';
import { nodeWithRawEvents } from '../test/helpers/raw-events-node.js';
import { runHeader } from './environment.js';
import { percentile } from './stats.js';
import { peakRssKb, resetPeakRss, rssSplitKb } from './processes.js';

const kEvents = Number(process.env.EVENTS ?? 40_000);
const kQuietMs = 5000;

interface Tally {
  evals: number[];
  fivexx: number;
}

async function main(): Promise<void> {
  console.log(runHeader({ events: kEvents }));
  const teardowns: (() => Promise<unknown>)[] = [];
  // The helper's test is only asked to tear down (and, by its export reader, unused here, to check a status).
  const t = { teardown: (fn: () => Promise<unknown>) => teardowns.push(fn) } as unknown as Test;
  try {
    const seeding = performance.now();
    const { base, world, server } = await nodeWithRawEvents(t, kEvents, true, {
      FLAGWIRE_EVAL_WORKERS: '2',
      FLAGWIRE_RATE_LIMIT: '1000000000',
      FLAGWIRE_EVENTS_PER_SECOND: '10000000',
      FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT: String(4 * 1024 ** 3),
      FLAGWIRE_LOG_LEVEL: 'warn',
    });
    const pid = server.proc.pid!;
    console.log(JSON.stringify({ seededSeconds: ((performance.now() - seeding) / 1000).toFixed(1) }));
    const { ids, secrets } = world;

    const victim = async (tally: Tally, over: () => boolean) => {
      for (let i = 0; !over(); i++) {
        const started = performance.now();
        const reply: Reply = await call(base, 'GET', `/v1/flags/${ids.flagB}?targetingKey=u${i}`);
        if (reply.status >= 500) tally.fivexx++;
        tally.evals.push(performance.now() - started);
      }
    };
    const exportOnce = async () => {
      const started = performance.now();
      const r = await fetch(`${base}/api/v1/events/export?format=jsonl`, { headers: { authorization: `Bearer ${secrets.read}` } });
      let bytes = 0;
      const reader = r.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) bytes += read.value.byteLength;
      return { status: r.status, mb: bytes / 1e6, seconds: (performance.now() - started) / 1000 };
    };
    const phase = async (exports: number) => {
      const tally: Tally = { evals: [], fivexx: 0 };
      let done = false;
      const running = victim(tally, () => done);
      let results: Awaited<ReturnType<typeof exportOnce>>[] = [];
      if (exports === 0) await new Promise((resolve) => setTimeout(resolve, kQuietMs));
      else results = await Promise.all(Array.from({ length: exports }, exportOnce));
      done = true;
      await running;
      return { tally, results };
    };

    await phase(0); // warm-up
    const rssBefore = rssSplitKb(pid).rss;
    resetPeakRss(pid);
    const quiet = await phase(0);
    const one = await phase(1);
    const two = await phase(2);
    const ms = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return `${percentile(sorted, 50).toFixed(1)} / ${percentile(sorted, 99).toFixed(1)}`;
    };
    const exports = (results: { status: number; mb: number; seconds: number }[]) =>
      results.map((r) => `${r.status}: ${r.mb.toFixed(1)} MB in ${r.seconds.toFixed(2)} s`).join('; ');
    console.log(
      JSON.stringify({
        'B GET p50/p99 quiet (ms)': ms(quiet.tally.evals),
        'B GET p50/p99 during one export (ms)': ms(one.tally.evals),
        'B GET p50/p99 during two exports (ms)': ms(two.tally.evals),
        'B GET max during one / two exports (ms)': `${Math.max(...one.tally.evals).toFixed(1)} / ${Math.max(...two.tally.evals).toFixed(1)}`,
        'one export': exports(one.results),
        'two exports': exports(two.results),
        '5xx (B)': quiet.tally.fivexx + one.tally.fivexx + two.tally.fivexx,
        'RSS before / peak (MiB)': `${(rssBefore / 1024).toFixed(0)} / ${(peakRssKb(pid) / 1024).toFixed(0)}`,
      }),
    );
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
}

await main();

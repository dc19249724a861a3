// Run by `npm run build` before tsc. tsc builds incrementally (tsconfig.json: dist/.tsbuildinfo), and an
// incremental tsc trusts its saved state: a file whose output was deleted from dist/ by hand, with its
// source unchanged, is never emitted again (nor by `tsc -b`, which compares with the state file alone).
// So if any TypeScript source's output is missing, the saved state is forgotten and this build emits
// every file, as a build from nothing does.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const kRoot = fileURLToPath(new URL('..', import.meta.url));
const kConfig = JSON.parse(readFileSync(join(kRoot, 'tsconfig.json'), 'utf8'));
// The folders tsc compiles, as tsconfig.json includes them.
const kSourceDirs = kConfig.include;
const kState = join(kRoot, kConfig.compilerOptions.tsBuildInfoFile);

function firstMissing(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const missing = firstMissing(path);
      if (missing !== null) return missing;
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const output = join(kRoot, 'dist', relative(kRoot, path)).replace(/\.ts$/, '.js');
      if (!existsSync(output)) return output;
    }
  }
  return null;
}

if (existsSync(kState)) {
  const missing = kSourceDirs.map((dir) => firstMissing(join(kRoot, dir))).find((m) => m !== null) ?? null;
  if (missing !== null) {
    console.log(`${relative(kRoot, missing)} is missing: tsc emits every file this build`);
    rmSync(kState);
  }
}

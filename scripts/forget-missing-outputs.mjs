// Run by `npm run build` before tsc. tsc builds incrementally (tsconfig.json: dist/.tsbuildinfo), and an
// incremental tsc trusts its saved state: a file whose output was deleted from dist/ by hand, with its
// source unchanged, is never emitted again (nor by `tsc -b`, which compares with the state file alone).
// So if any TypeScript source's output is missing, the saved state is forgotten and this build emits
// every file, as a build from nothing does.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledOutputs } from './build-inputs.mjs';

const kRoot = fileURLToPath(new URL('..', import.meta.url));
const kConfig = JSON.parse(readFileSync(join(kRoot, 'tsconfig.json'), 'utf8'));
const kState = join(kRoot, kConfig.compilerOptions.tsBuildInfoFile);

if (existsSync(kState)) {
  const missing = [...compiledOutputs(kRoot)].find((output) => !existsSync(output));
  if (missing !== undefined) {
    console.log(`${relative(kRoot, missing)} is missing: tsc emits every file this build`);
    rmSync(kState);
  }
}

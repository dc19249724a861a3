// Bundles src/typebox.ts, with the TypeBox modules it re-exports, into the one file tsc made of it,
// dist/src/typebox.js (why: the comment atop src/typebox.ts). Run by `npm run build` after tsc. The
// command line's entry, so every command and every node's main thread, loads it (costly to compile as a
// module at every start): it is a script V8 caches (scripts/script-bundle.mjs), typebox.script.js,
// run by the module dist/src/typebox.js.
//
// From the source, not from tsc's output: tsc builds incrementally (tsconfig.json), so a build where
// src/typebox.ts did not change leaves the previous build's bundle in place, and bundling that again
// would wrap it once more on every build.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeScriptBundle } from './script-bundle.mjs';

const kOutdir = fileURLToPath(new URL('../dist/src/', import.meta.url));
const { outputFiles } = await build({
  entryPoints: { typebox: fileURLToPath(new URL('../src/typebox.ts', import.meta.url)) },
  outdir: kOutdir,
  write: false,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
writeScriptBundle(outputFiles, 'typebox', kOutdir);

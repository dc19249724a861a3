// Bundles src/typebox.ts, with the TypeBox modules it re-exports, into the one file tsc made of it,
// dist/src/typebox.js (why: the comment atop src/typebox.ts). Run by `npm run build` after tsc.
//
// From the source, not from tsc's output: tsc builds incrementally (tsconfig.json), so a build where
// src/typebox.ts did not change leaves the previous build's bundle in place, and bundling that again
// would wrap it once more on every build.
import { build } from 'esbuild';

await build({
  entryPoints: [new URL('../src/typebox.ts', import.meta.url).pathname],
  outfile: new URL('../dist/src/typebox.js', import.meta.url).pathname,
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});

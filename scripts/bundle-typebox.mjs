// Bundles tsc's output of src/typebox.ts, with the TypeBox modules it re-exports, into that one
// file, in place (why: the comment atop src/typebox.ts). Run by `npm run build` after tsc.
import { build } from 'esbuild';

const file = new URL('../dist/src/typebox.js', import.meta.url).pathname;
await build({
  entryPoints: [file],
  outfile: file,
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});

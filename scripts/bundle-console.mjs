// The web console's browser code as the server serves it: one script, made by esbuild from the modules tsc
// wrote (dist/src/web-console/browser/, app.js and what it imports), with a source map that leads to their
// TypeScript. Run by `npm run build` after the browser check (scripts/check-browser-code.mjs).
//
// Why one script: a browser finds the page's modules a level of imports at a time, and asked for 46 of
// them on every load. The flag page first draws in about half the time from this script
// (bench/RESULTS.md, console-first-draw.bench).
//
// A browser module may import only its siblings and the words the server says too (src/words: pure
// modules that import only each other, and the server's code only as types, which tsc erases): an
// import of anything else fails the bundle, naming the module and what it imports, so server code never
// reaches a page.
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const kBrowser = fileURLToPath(new URL('../dist/src/web-console/browser', import.meta.url));
/** The modules the server and the browser share (the audit log's sentences, times as they read). */
const kWords = fileURLToPath(new URL('../dist/src/words', import.meta.url));
/** Where the server reads the script and its map (src/web-console/assets.ts). */
const kConsoleScript = fileURLToPath(new URL('../dist/src/web-console/console.js', import.meta.url));

const browserOnly = {
  name: 'browser-only',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const path = /^\.{1,2}\//.test(args.path) ? resolve(args.resolveDir, args.path) : args.path;
      if (dirname(path) === kBrowser || dirname(path) === kWords) return undefined;
      const importer = relative(kBrowser, args.importer);
      return { errors: [{ text: `${importer} imports '${args.path}', which is not a browser module of the console` }] };
    });
  },
};

/**
 * Bundles `entry` (app.js unless given) and what it imports into `outfile` with its map; `write: false`
 * answers esbuild's result without writing. A module that imports anything but a browser module or
 * the shared words fails.
 */
export function bundleConsole({ entry = join(kBrowser, 'app.js'), outfile = kConsoleScript, write = true } = {}) {
  return build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    // What the browser tsconfig compiles to (src/web-console/browser/tsconfig.json: ES2022 and the DOM).
    target: 'es2022',
    platform: 'browser',
    sourcemap: 'linked',
    write,
    logLevel: write ? 'warning' : 'silent',
    plugins: [browserOnly],
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await bundleConsole();

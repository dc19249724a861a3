// Bundles the test framework (tap, which every test file imports) into one file that the compiled
// tests load instead of the package: dist/node_modules/tap. Run by `npm run build` after tsc.
//
// Why: tap loads some 270 modules (its plugins, yaml, diff, react for its snapshot formatting) before a
// test file's first line, about 0.45 CPU s at Node 20's cost per module; from one file, about 0.25. The
// suite runs some 370 files: 41 in-process files took 57.4 CPU s with the package and 48.9 with the
// bundle (bench/RESULTS.md, issue 57 item 5). Node resolves `import t from 'tap'` in dist/test/** by
// walking up from the importing file, so it finds dist/node_modules/tap before the project's
// node_modules/tap: no test file names the bundle, and a file run alone (`node dist/test/x.test.js`)
// loads the same tap as the runner's. The types stay the package's (tsc resolves from test/, not dist/).
// The bundle is made from the installed tap, so it is the lockfile's version.
import { mkdirSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const kOut = new URL('../dist/node_modules/tap/', import.meta.url);
mkdirSync(kOut, { recursive: true });
writeFileSync(new URL('package.json', kOut), `${JSON.stringify({ name: 'tap', type: 'module', exports: './index.js' })}\n`);
await build({
  stdin: {
    // tap leaves its own frames out of a failure's stack and location by their folder (node_modules/@tapjs
    // and a few more): the bundle's folder is one more, or a subtest's failure would point into it.
    contents: [
      "import { addIgnoredPackage } from '@tapjs/stack';",
      "addIgnoredPackage('tap');",
      "export * from 'tap';",
      "export { default } from 'tap';",
    ].join('\n'),
    resolveDir: new URL('..', import.meta.url).pathname,
  },
  outfile: new URL('index.js', kOut).pathname,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // tap's CommonJS dependencies call require(), which an ES module bundle has only if it makes one.
  banner: {
    js: "import { createRequire as flagwireCreateRequire } from 'node:module'; const require = flagwireCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// Bundles the test framework (tap, which every test file imports) into one file that the compiled
// tests load instead of the package: dist/node_modules/tap. Run by `npm run build` after tsc.
//
// Why: tap loads some 270 modules (its plugins, yaml, diff, react for its snapshot formatting) before a
// test file's first line, each at Node 20's cost per module; from one file, about half of that, and the
// suite runs every test file as a process of its own (issue 57 item 5). Node resolves `import t from 'tap'` in dist/test/** by
// walking up from the importing file, so it finds dist/node_modules/tap before the project's
// node_modules/tap: no test file names the bundle, and a file run alone (`node dist/test/x.test.js`)
// loads the same tap as the runner's. The types stay the package's (tsc resolves from test/, not dist/).
// The bundle is made from the installed tap, so it is the lockfile's version.
//
// The bundle is a script V8 caches (scripts/script-bundle.mjs: index.script.js, run by the module
// index.js), as the service's bundles are: Node 20 compiles an ES module afresh in every process, and
// every test file is a process. Its frames are then index.script.js's, in the same folder, so tap's
// filter still leaves them out of a failure's location. tcompare's formatter of React elements (react,
// react-is, react-element-to-jsx-string: CommonJS packages tap requires as it loads) is required when a
// React element is first formatted, which no test of this suite does, instead of by every test process.
// tap's per-test error domains come from scripts/tap-domain.mjs instead of async-hook-domain (it says why).
//
// tap's plugins that no test uses are left out (kUnusedPlugins): each is imported by @tapjs/test's class
// of a test, which adds what its `plugin` answers to every `t`, so a plugin left out is one that answers
// nothing, as tap itself builds its Test without a plugin removed from its config (its exports of that
// plugin's methods are then undefined: tap/dist/esm/main.js). Their modules loaded in every test process
// for methods no file calls: an empty test file 0.076-0.096 CPU s with them, 0.063-0.076 without (three
// rounds of ten runs of each, in turns; `node -e 0` 0.018-0.022). The build fails if a test calls a
// method of one.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { kRequireBanner, writeScriptBundle } from './script-bundle.mjs';

const kOut = new URL('../dist/node_modules/tap/', import.meta.url);
mkdirSync(kOut, { recursive: true });
writeFileSync(new URL('package.json', kOut), `${JSON.stringify({ name: 'tap', type: 'module', exports: './index.js' })}\n`);
/** tcompare's module that requires react-element-to-jsx-string as it loads, made to require it on first use. */
const lazyReactFormatter = {
  name: 'lazy-react-formatter',
  setup(b) {
    b.onLoad({ filter: /[/\\]tcompare[/\\]dist[/\\]esm[/\\]react-element-to-jsx-string\.js$/ }, () => ({
      contents: [
        "import { createRequire } from 'node:module';",
        'const require = createRequire(import.meta.url);',
        "export default (...args) => require('react-element-to-jsx-string').default(...args);",
      ].join('\n'),
      loader: 'js',
    }));
  },
};
/**
 * The plugins left out. Some add no method to a test (node-serialize and typescript only serialize for
 * node:test's runner or read tap's runner's settings, neither of which runs a file of this suite).
 */
const kUnusedPlugins = [
  '@tapjs/fixture',
  '@tapjs/intercept',
  '@tapjs/mock',
  '@tapjs/node-serialize',
  '@tapjs/snapshot',
  '@tapjs/spawn',
  '@tapjs/stdin',
  '@tapjs/typescript',
  '@tapjs/worker',
];
/**
 * What those plugins add to a test, read from the packages as installed: every member of the classes each
 * exports (a plugin's `plugin` answers an instance of one, whose members tap puts on `t`).
 */
async function unusedPluginMethods() {
  const names = new Set();
  for (const name of kUnusedPlugins) {
    for (const value of Object.values(await import(name))) {
      if (typeof value !== 'function' || !/^class\b/.test(Function.prototype.toString.call(value))) continue;
      for (const member of Object.getOwnPropertyNames(value.prototype)) if (member !== 'constructor') names.add(member);
    }
  }
  return [...names];
}
const kTestDir = fileURLToPath(new URL('../test/', import.meta.url));
/** `t.METHOD` (or a named import of it from tap) for a method of a plugin left out, in any test source. */
function unusedPluginCalls(methods) {
  const pattern = new RegExp(`\\bt\\.(${methods.join('|')})\\b|import \\{[^}]*\\b(${methods.join('|')})\\b[^}]*\\} from 'tap'`);
  const found = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') && pattern.test(readFileSync(path, 'utf8'))) found.push(path);
    }
  };
  visit(kTestDir);
  return found;
}
const calls = unusedPluginCalls(await unusedPluginMethods());
if (calls.length > 0) {
  throw new Error(`bundle-tap: ${calls.join(', ')} call a method of a tap plugin the bundle leaves out (kUnusedPlugins)`);
}
/** Each plugin left out, as a module whose `plugin` adds nothing to a test. */
const unusedPluginsLeftOut = {
  name: 'unused-plugins-left-out',
  setup(b) {
    const names = kUnusedPlugins.map((name) => name.replace('/', '\\/'));
    b.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => ({ path: args.path, namespace: 'unused-plugin' }));
    b.onLoad({ filter: /.*/, namespace: 'unused-plugin' }, () => ({ contents: 'export const plugin = () => ({});', loader: 'js' }));
  },
};
/** async-hook-domain, which tap makes each test's domain with, replaced by ours (scripts/tap-domain.mjs says why). */
const domainOnAsyncLocalStorage = {
  name: 'domain-on-async-local-storage',
  setup(b) {
    b.onResolve({ filter: /^async-hook-domain$/ }, () => ({ path: fileURLToPath(new URL('tap-domain.mjs', import.meta.url)) }));
  },
};
const { outputFiles } = await build({
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
  entryNames: 'index',
  outdir: fileURLToPath(kOut),
  write: false,
  sourcemap: true,
  plugins: [lazyReactFormatter, domainOnAsyncLocalStorage, unusedPluginsLeftOut],
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // tap's CommonJS dependencies call require(), which an ES module bundle has only if it makes one.
  banner: {
    js: kRequireBanner,
  },
  logLevel: 'warning',
});
writeScriptBundle(outputFiles, 'index', fileURLToPath(kOut));

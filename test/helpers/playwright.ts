// playwright-core for the browser tests and the suite's runner, its two bundles (lib/coreBundle.js and
// lib/utilsBundle.js, 7 MB of script) run with V8's code cache, as the service's own bundles are
// (src/cli/bundle-script.ts): Node 20 compiles a CommonJS module's code on every load, and playwright's
// took about 0.2 of the 0.63 CPU s a process spent loading it, connecting and driving a page. The cache
// is kept under dist/ (the build's, git-ignored), headed by each bundle's inode, size and modification
// time, so an upgraded playwright-core is never run with the old one's code.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants } from 'node:vm';
import { cachedScript } from '../../src/cli/bundle-script.js';

const kCacheDir = fileURLToPath(new URL('../../.v8-cache/', import.meta.url));
const kBundles = /[\\/]playwright-core[\\/]lib[\\/](coreBundle|utilsBundle)\.js$/;

/** What Node's CommonJS loader runs a `.js` file with (node:module's `_extensions`, not in its types). */
type Loader = (module: { exports: unknown }, filename: string) => void;
type Extensions = Record<string, Loader>;

let loaded: typeof import('playwright-core') | undefined;

/**
 * playwright-core, loaded once per process. Required, not imported: Node's import() of a CommonJS package
 * pre-parses every module it requires for its named exports (cjs-module-lexer over the two bundles), which
 * made a process that loads it cost 0.96-0.99 CPU s instead of 0.62-0.65.
 */
export function playwright(): typeof import('playwright-core') {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  const extensions = (require('node:module') as { _extensions: Extensions })._extensions;
  const plain = extensions['.js']!;
  mkdirSync(kCacheDir, { recursive: true });
  // Only while playwright-core itself is required: its bundles, as Node's loader would run them (the same
  // wrapper, `this` and arguments), from a script V8 caches; every other file as Node runs it.
  extensions['.js'] = (module, filename) => {
    if (!kBundles.test(filename)) return plain(module, filename);
    const source = `(function (exports, require, module, __filename, __dirname) { ${readFileSync(filename, 'utf8')}\n});`;
    const script = cachedScript(filename, source, `${kCacheDir}playwright-core-${basename(filename)}.v8-cache`, {
      importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    const run = script.runInThisContext() as (...args: unknown[]) => void;
    run.call(module.exports, module.exports, createRequire(filename), module, filename, dirname(filename));
  };
  try {
    loaded = require('playwright-core') as typeof import('playwright-core');
  } finally {
    extensions['.js'] = plain;
  }
  return loaded;
}

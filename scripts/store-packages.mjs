// Where the built code finds the packages it takes from files the build makes (scripts/build-cli.mjs
// makes them), named once for the scripts that make or import them: the command line's and serve's
// bundles (build-cli.mjs) and the tests' copies (bundle-tests.mjs).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { namedExports, specifierFrom, stubPath } from './script-bundle.mjs';

/** Where build-cli.mjs writes the command line's, serve's and the threads' bundles, and these packages' files. */
export const kBundleDir = fileURLToPath(new URL('../dist/src/cli/bundle/', import.meta.url));
const kRequire = createRequire(new URL('../package.json', import.meta.url));

/**
 * lmdb and msgpackr, with the packages they require, as one script V8 caches (build-cli.mjs,
 * buildStorePackages): every thread of a node and every store command takes them from it.
 */
export const kStorePackages = ['lmdb', 'msgpackr'];
export const kStorePackagesName = 'store-packages';
/** The module that runs the store packages' script: its exports are the packages, by name. */
export const kStorePackagesModule = stubPath(kBundleDir, kStorePackagesName, 'module');
/** Its CommonJS twin, which a thread or process started from CommonJS requires instead (build-cli.mjs, kStartedStub). */
export const kStorePackagesTwin = stubPath(kBundleDir, kStorePackagesName, 'commonjs');
/** uWebSockets.js, an ES module only, as CommonJS (build-cli.mjs, writeUwsTwin). */
export const kUwsTwin = join(kBundleDir, 'uws.cjs');

/**
 * The source of a module at `dir` whose exports are the store package `name`'s, taken from the store
 * packages' module where it runs (awaited there, as a require would be: a command loads them on use).
 */
export function storePackageSource(name, dir) {
  const names = namedExports(Object.keys(kRequire(name)));
  return [
    `const required = (await import(${JSON.stringify(specifierFrom(dir, kStorePackagesModule))}))[${JSON.stringify(name)}];`,
    ...names.map((key) => `export const ${key} = required.${key};`),
    'export default required;',
  ].join('\n');
}

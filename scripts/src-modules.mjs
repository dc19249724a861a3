// The entry of dist/test-run/src-modules.script.js (scripts/bundle-tests.mjs): Flagwire's modules that the
// test files' copies import, each run on its first use, in one script V8 caches. `flagwire:src-loaders`
// is the build's table of them: each module's path under dist/src, and an import() of it, which esbuild
// makes a call of the module's wrapper in the script (a module runs once, when first imported).
import { loaders } from 'flagwire:src-loaders';

const loaded = new Map();

/**
 * Exports as esbuild's import of CommonJS (a copy's import of a module of dist/src) reads a module's, its
 * default export included.
 */
function asModule(exports) {
  if (Object.isExtensible(exports)) return Object.defineProperty(exports, '__esModule', { value: true });
  // A module the script imports as it is (TypeBox's): its namespace, which takes no new property.
  const getters = Object.keys(exports).map((key) => [key, { get: () => exports[key], enumerable: true }]);
  return Object.defineProperties({}, { __esModule: { value: true }, ...Object.fromEntries(getters) });
}

/** Runs the modules at `paths` (under dist/src), in order, each once: a copy's imports, before its code. */
export async function srcModules(paths) {
  for (const path of paths) {
    if (loaded.has(path)) continue;
    const load = loaders[path];
    if (load === undefined) throw new Error(`dist/src/${path} is not in the script: run npm run build`);
    loaded.set(path, asModule(await load()));
  }
}

/** The exports of dist/src/PATH, which srcModules has run. */
export function srcModule(path) {
  const exports = loaded.get(path);
  if (exports === undefined) throw new Error(`dist/src/${path} was not loaded before the code that imports it`);
  return exports;
}

/** A copy's import() of dist/src/PATH. */
export async function srcImport(path) {
  await srcModules([path]);
  return loaded.get(path);
}

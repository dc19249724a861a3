// `node --import THIS_FILE`: registers module-log-hooks.ts, so the process names every module it loads on stderr,
// Node's built-ins as `loaded node:NAME`.
// CommonJS modules loaded by require() (createRequire: lmdb and msgpackr in the bundles, pg and
// nodemailer on use) never reach those hooks in Node 20, so Module._load is wrapped to name them too, in
// each thread (a worker thread runs this file as the main thread does).
import Module, { register } from 'node:module';
import { pathToFileURL } from 'node:url';

register(new URL('./module-log-hooks.js', import.meta.url));

type Load = (request: string, parent: unknown, isMain: boolean) => unknown;
const internals = Module as unknown as { _load: Load; _resolveFilename: (request: string, parent: unknown, isMain: boolean) => string };
const load = internals._load;
const builtins = new Set<string>();
internals._load = function (this: unknown, request: string, parent: unknown, isMain: boolean) {
  const exports = load.call(this, request, parent, isMain);
  if (Module.isBuiltin(request)) {
    const name = request.replace(/^node:/, '');
    // Once a thread: the bundles require a built-in where each module that uses it runs.
    if (!builtins.has(name)) process.stderr.write(`loaded node:${name}\n`);
    builtins.add(name);
  } else process.stderr.write(`loaded ${pathToFileURL(internals._resolveFilename(request, parent, isMain)).href}\n`);
  return exports;
};

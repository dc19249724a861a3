// What the test bundle (scripts/bundle-tap.mjs) gives tap in place of the package async-hook-domain: the
// same class, `new Domain(onerror)` and `destroy()`, which tap makes for each test so that an error thrown
// or a promise rejected in a test's asynchronous work, and caught by nothing, fails that test, not the
// process. The package finds that test by an async hook with `init` and `destroy` callbacks on every
// resource, promises included; a `destroy` callback makes V8 track each promise until it is collected.
// An awaited call inside a domain cost some twenty times its bare cost (bench/test-domains.bench.ts:
// 1,000,000 of them, 0.27 CPU s bare, 5.5 in the package's domain, 0.76 in this one's), and the test
// processes await Flagwire's code, HTTP clients and PostgreSQL's driver throughout. Here the test's
// domain is an AsyncLocalStorage's store: work started inside a test carries it, and an error is the first
// live domain's up the chain from the store of the context that threw (Node runs an unhandled
// rejection's handlers in its promise's context).
//
// Its behaviour is the package's (4.x) where tap relies on it: a domain made in a context owns the work
// started from it after; a destroyed domain's work falls to its nearest live parent; an error no domain
// owns, or one raised while a process handler for it is installed, is left to Node; the hooks on the
// process are removed when the last domain is destroyed. test/scripts/tap-domain.test.ts proves it.
import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage();
let live = 0;
const originalEmit = process.emit;
/**
 * Node's `--unhandled-rejections` mode: under `strict`, a rejection is raised as an uncaught exception.
 * The last one given counts, as for Node and the package.
 */
const kRejectionMode = (() => {
  let mode = 'throw';
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    if (args[i].startsWith('--unhandled-rejections=')) mode = args[i].slice('--unhandled-rejections='.length);
    else if (args[i] === '--unhandled-rejections') mode = args[i + 1];
  }
  return mode;
})();

/** The live domain that owns the running context: its own, or its nearest live parent's. */
function currentDomain() {
  let domain = storage.getStore();
  while (domain?.destroyed) domain = domain.parent;
  return domain;
}

/** Hands `er` to the owning domain; true when one took it. */
function handle(er, event, rejection) {
  if (process.hasUncaughtExceptionCaptureCallback() || process.listeners('uncaughtException').length > 0) return false;
  const domain = currentDomain();
  if (domain === undefined) return false;
  try {
    domain.onerror(er, event);
  } catch (thrown) {
    domain.destroy();
    if (handle(thrown, 'uncaughtException', false)) return true;
    throw thrown;
  }
  if (!rejection) {
    // The monitor only watches: this callback, set now and cleared by its one call, is what keeps Node from
    // ending the process for the exception just handled.
    process.setUncaughtExceptionCaptureCallback(() => process.setUncaughtExceptionCaptureCallback(null));
    if (kRejectionMode === 'strict') process.once('unhandledRejection', () => {});
  }
  return true;
}

/** Watches every uncaught exception (`origin` is 'unhandledRejection' for one raised by the strict mode). */
const onException = (er, origin) => {
  handle(er, origin, false);
};
/** process.emit while domains live: an unhandled rejection nothing else listens for goes to its domain. */
function emitWithDomains(event, ...args) {
  if (event !== 'unhandledRejection' || process.listeners('unhandledRejection').length > 0) {
    return originalEmit.call(process, event, ...args);
  }
  return handle(args[0], 'unhandledRejection', true);
}

function activate() {
  if (live++ > 0) return;
  process.on('uncaughtExceptionMonitor', onException);
  if (kRejectionMode !== 'strict') process.emit = emitWithDomains;
}

function deactivate() {
  if (--live > 0) return;
  process.removeListener('uncaughtExceptionMonitor', onException);
  process.emit = originalEmit;
  storage.disable();
}

export class Domain {
  constructor(onerror) {
    if (typeof onerror !== 'function') throw new TypeError('onerror must be a function');
    this.onerror = onerror;
    this.parent = currentDomain();
    this.destroyed = false;
    // The running context and all the work it starts from now on carry this domain.
    storage.enterWith(this);
    activate();
  }

  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    deactivate();
  }
}

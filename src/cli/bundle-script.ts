// A bundle run as a classic script with V8's code cache (issue 57, items 1 and 2). Node 20 caches no
// compiled ES module (`module.enableCompileCache` came with Node 22), and compiling was about a third of
// a node's start and of a command's. So the build (scripts/script-bundle.mjs) writes the command line's
// bundle, serve's, each thread's, TypeBox's and the tests' tap as a script, `NAME.script.js`: one async
// function of the bundle's code that takes what the bundle imported (`imports`, in the order its import
// statements had), its `import.meta` and an `import()` of the bundle's place, and returns its exports.
// `NAME.js` beside it is a small module that imports what the script needs and runs it here, so that
// whoever imported or started the bundle before gets the same exports from the same path.
//
// The first run of a script compiles it as any module's code is compiled. Once the script has run for
// kCacheDelayMs (what a node's start and its first requests compiled by then), or as its thread exits
// first (a command), V8's code for the script is written beside it (`NAME.script.js.v8-cache`); each
// later run of the same script reads it instead of compiling. V8 refuses a cache of another V8 or other
// flags (then the script is compiled and the cache written again), but checks only a script's length:
// the file's inode, size and modification time head the cache, so a script changed in place is never
// run with another's code (test/cli/bundle-script.test.ts). A cache that cannot be written (a read-only
// install) is left: the script runs as it would without one.
import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Script, type ScriptOptions } from 'node:vm';

/** What a bundle's script receives. */
export interface BundleLinks {
  readonly imports: readonly unknown[];
  readonly meta: ImportMeta;
  /** The script's own modules that its code imports by URL (a worker's evaluators), which the script lists. */
  readonly bundled: Map<string, unknown>;
  readonly import: (specifier: string) => Promise<unknown>;
  /** A Node built-in that only code run on use imports, required as that code first runs (scripts/script-bundle.mjs). */
  readonly builtin: (specifier: string) => unknown;
}

/** Node's built-ins by name, as BundleLinks.builtin requires them. */
export const requireBuiltin: (specifier: string) => unknown = createRequire(import.meta.url);

/** How long a script runs before its code is cached: a node's start and its first answers, at load. */
export const kCacheDelayMs = 3_000;

/** The script's identity as a line heading its cache: a script changed in place never reads another's code. */
function identity(file: string): Buffer {
  const { size, mtimeMs, ino } = statSync(file);
  return Buffer.from(`${ino} ${size} ${mtimeMs}\n`);
}

function cachedCode(cacheFile: string, key: Buffer): Buffer | undefined {
  let cache: Buffer;
  try {
    cache = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  return cache.subarray(0, key.length).equals(key) ? cache.subarray(key.length) : undefined;
}

/**
 * Writes V8's code for `script` to `cacheFile`, headed by `key`; where it cannot (a read-only install, a
 * full disk), leaves nothing, and the next run compiles as this one did. Exported for its test.
 */
export function writeCache(script: Script, cacheFile: string, key: Buffer): void {
  // Written whole, then renamed: a thread or process reading it meanwhile sees the old file or the new.
  // Named for this process and at random for this thread (node:worker_threads' threadId would load that
  // module, and its start-up CPU, into every command).
  const scratch = `${cacheFile}.${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    writeFileSync(scratch, Buffer.concat([key, script.createCachedData()]));
    renameSync(scratch, cacheFile);
  } catch {
    rmSync(scratch, { force: true });
  }
}

/**
 * `source` (the text of `file`, or a wrapping of it) compiled with V8's code for it from `cacheFile` when
 * that holds this file's; when not, the code is written there once the script has run kCacheDelayMs, or
 * as the process exits first. Also the tests' load of playwright-core (test/helpers/playwright.ts).
 */
export function cachedScript(file: string, source: string, cacheFile: string, options: ScriptOptions = {}): Script {
  const key = identity(file);
  const cachedData = cachedCode(cacheFile, key);
  const script = new Script(source, { ...options, filename: file, cachedData });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // A command ends well before kCacheDelayMs: its code is written as it exits.
    let written = false;
    const write = (): void => {
      if (written) return;
      written = true;
      writeCache(script, cacheFile, key);
    };
    setTimeout(write, kCacheDelayMs).unref();
    process.once('exit', write);
  }
  return script;
}

/**
 * The text of the script `file`. Node 20 decodes UTF-8 with V8's own decoder, a visible part of every
 * node's start for serve's script, where Latin-1 is a plain copy; and one character past ASCII makes
 * the whole text a two-byte string. The build writes
 * every script as ASCII (scripts/script-bundle.mjs), and ASCII read as Latin-1 is the same text, copied.
 */
function scriptText(file: string): string {
  const bytes = readFileSync(file);
  return bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
}

/** Runs the bundle's script at `scriptUrl` with `links`, and returns its exports. */
export function runBundleScript(scriptUrl: URL, links: BundleLinks): Promise<Record<string, unknown>> {
  const file = fileURLToPath(scriptUrl);
  const script = cachedScript(file, scriptText(file), `${file}.v8-cache`);
  return (script.runInThisContext() as (links: BundleLinks) => Promise<Record<string, unknown>>)(links);
}

// A bundle's script run with V8's code cache (src/cli/bundle-script.ts): what the script receives and
// returns, the cache written beside it and valid for it, and never read for a script changed since. V8
// itself checks only a script's length: a cache of another script of the same length would run that
// script's code (the third test fails without the cache's header).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import t from 'tap';
import { type BundleLinks, requireBuiltin, runBundleScript, writeCache } from '../../src/cli/bundle-script.js';
import { tempDir } from '../helpers/scratch-dir.js';

/** A script as the build writes one: an async function of what it imports, returning its exports. */
const scriptOf = (step: number): string =>
  `(async function (__fw) {"use strict"; const { base } = __fw.imports[0]; const path = await __fw.import("node:path");\n` +
  `return { sum: base + ${step}, sep: path.sep, at: __fw.meta.url };\n})\n`;

function links(file: string): BundleLinks {
  return {
    imports: [{ base: 40 }],
    meta: { url: pathToFileURL(file).href } as ImportMeta,
    bundled: new Map(),
    import: (s) => import(s),
    builtin: requireBuiltin,
  };
}

/** The cache beside `file`, once written (by a timer of runBundleScript's), with the identity heading it. */
async function cacheOf(file: string, identity: string): Promise<Buffer> {
  const cacheFile = `${file}.v8-cache`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (!existsSync(cacheFile)) continue;
    const cache = readFileSync(cacheFile);
    if (cache.subarray(0, identity.length).toString() === identity) return cache.subarray(identity.length);
  }
  throw new Error(`no cache for ${identity.trim()} within a minute`);
}

const identityOf = (file: string): string => {
  const { ino, size, mtimeMs } = statSync(file);
  return `${ino} ${size} ${mtimeMs}\n`;
};

t.test('a script gets its imports, its import.meta and import(), and returns its exports', async (t) => {
  const file = join(tempDir(t), 'main.script.js');
  writeFileSync(file, scriptOf(2));
  t.strictSame(await runBundleScript(pathToFileURL(file), links(file)), { sum: 42, sep: '/', at: pathToFileURL(file).href });
});

t.test("after it ran, V8's code for it is written beside it, headed by the file's identity, and V8 takes it", async (t) => {
  const file = join(tempDir(t), 'main.script.js');
  writeFileSync(file, scriptOf(2));
  await runBundleScript(pathToFileURL(file), links(file));
  const code = await cacheOf(file, identityOf(file));
  const script = new Script(readFileSync(file, 'utf8'), { filename: file, cachedData: code });
  t.equal(script.cachedDataRejected, false, 'the cache is code for this script');
  t.strictSame(
    await runBundleScript(pathToFileURL(file), links(file)),
    { sum: 42, sep: '/', at: pathToFileURL(file).href },
    'run again, with it',
  );
});

t.test('a script changed in place, to the same length, is run as it is now, not from the cache of before', async (t) => {
  const file = join(tempDir(t), 'main.script.js');
  writeFileSync(file, scriptOf(2));
  await runBundleScript(pathToFileURL(file), links(file));
  const before = await cacheOf(file, identityOf(file));
  // V8 would take that cache for the new text (it checks the length only), and run the old code.
  t.equal(new Script(scriptOf(7), { filename: file, cachedData: before }).cachedDataRejected, false, 'V8 alone would take it');
  writeFileSync(file, scriptOf(7));
  t.equal(readFileSync(file, 'utf8').length, scriptOf(2).length, 'the same length');
  t.equal((await runBundleScript(pathToFileURL(file), links(file))).sum, 47, 'the new code ran');
  await cacheOf(file, identityOf(file));
  t.pass('and a cache of the new script replaced the old');
});

t.test('a cache that cannot be written leaves nothing, and the script runs as without one', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'main.script.js');
  writeFileSync(file, scriptOf(2));
  // A directory where the cache would go: reading it fails, and so does renaming a file onto it.
  mkdirSync(`${file}.v8-cache`);
  t.equal((await runBundleScript(pathToFileURL(file), links(file))).sum, 42);
  const script = new Script(readFileSync(file, 'utf8'), { filename: file });
  t.doesNotThrow(() => writeCache(script, `${file}.v8-cache`, Buffer.from(identityOf(file))));
  t.strictSame(readdirSync(dir).sort(), ['main.script.js', 'main.script.js.v8-cache'], 'no scratch file left');
});

t.test('a script past ASCII (not one the build wrote) is read as UTF-8: its text is whole', async (t) => {
  const file = join(tempDir(t), 'main.script.js');
  // Raw UTF-8 in a string: one, two, three and four bytes a character.
  writeFileSync(file, '(async function () { return { text: "a \u00a7 \u2014 \u2713 \ud83d\ude00" }; })\n');
  t.ok(
    readFileSync(file).some((byte) => byte > 0x7f),
    'the file is past ASCII',
  );
  t.strictSame(await runBundleScript(pathToFileURL(file), links(file)), { text: 'a \u00a7 \u2014 \u2713 \ud83d\ude00' });
});

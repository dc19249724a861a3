// The test files as the suite's runner starts them (scripts/bundle-tests.mjs): dist/test-run/, copies that
// take Flagwire's modules from one cached script instead of loading dist/src/'s modules one by one, with
// what the originals do kept: one copy of each module in a process, each run when first imported, URLs
// of their own file the original's, and a failure placed in the TypeScript.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const kTests = new URL('../', import.meta.url);
const kCopies = new URL('../../test-run/', import.meta.url);
const kSrc = new URL('../../src/', import.meta.url).href;
const kModuleLog = fileURLToPath(new URL('../helpers/module-log.js', import.meta.url));
const kLazySourceMaps = fileURLToPath(new URL('../helpers/lazy-source-maps.js', import.meta.url));
const copy = (path: string) => new URL(path, kCopies).href;
const original = (path: string) => new URL(path, kTests).href;

/** Runs `code` (an ES module) in a process of its own: its stdout, stderr and the modules it loaded. */
function run(code: string, preload = kModuleLog): { stdout: string; stderr: string; loaded: string[] } {
  const r = spawnSync(process.execPath, ['--import', preload, '--input-type=module', '-e', code], { encoding: 'utf8' });
  const lines = r.stderr.split('\n');
  return {
    stdout: r.stdout,
    stderr: lines.filter((l) => !l.startsWith('loaded ')).join('\n'),
    loaded: lines.filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length)),
  };
}
const ours = (loaded: string[]) => loaded.filter((url) => url.startsWith(kSrc)).map((url) => url.slice(kSrc.length));

t.test("a copy takes Flagwire's modules from the one script, and the original its modules", async (t) => {
  const copied = run(`await import(${JSON.stringify(copy('helpers/world.js'))});`);
  t.equal(copied.stderr.trim(), '', 'the copy loads');
  // TypeBox's module is a script of its own (scripts/bundle-typebox.mjs), run by the scripts' runner.
  t.strictSame(
    ours(copied.loaded).sort(),
    ['cli/bundle-script.js', 'cli/bundle/store-packages.js', 'typebox.js'],
    "no other module of dist/src is loaded: lmdb and msgpackr come from the store packages' script",
  );
  t.notOk(
    copied.loaded.some((url) => /node_modules\/lmdb\/.*\.[cm]?js$/.test(url)),
    "no module of lmdb's package is loaded apart (a command run in-process shares the script's)",
  );
  t.ok(copied.loaded.includes(copy('src-modules.js')), 'the script is');
  const plain = run(`await import(${JSON.stringify(original('helpers/world.js'))});`);
  t.ok(ours(plain.loaded).includes('writer/thread/commands.js'), 'the original loads the modules one by one');
});

t.test("a test file's own import of lmdb or msgpackr is the store packages' script's", async (t) => {
  const { stdout, stderr, loaded } = run(
    [
      `const { lmdb, msgpackr } = await import(${JSON.stringify(`${kSrc}cli/bundle/store-packages.js`)});`,
      // store-digest.js (a helper) imports lmdb's open.
      `const digest = await import(${JSON.stringify(copy('helpers/store-digest.js'))});`,
      `const lmdbCopy = await import(${JSON.stringify(copy('packages/lmdb.js'))});`,
      `const msgpackrCopy = await import(${JSON.stringify(copy('packages/msgpackr.js'))});`,
      'console.log(JSON.stringify({ digest: typeof digest.StoreDigest, open: lmdbCopy.open === lmdb.open, packr: msgpackrCopy.Packr === msgpackr.Packr, default: lmdbCopy.default === lmdb }));',
    ].join('\n'),
  );
  t.equal(stderr.trim(), '', 'it runs');
  t.strictSame(
    JSON.parse(stdout),
    { digest: 'function', open: true, packr: true, default: true },
    "the copies' packages are the script's exports",
  );
  t.notOk(
    loaded.some((url) => /node_modules\/(lmdb|msgpackr)\/.*\.[cm]?js$/.test(url)),
    "no module of lmdb's or msgpackr's package is loaded apart",
  );
  const copied = readFileSync(new URL('helpers/store-digest.js', kCopies), 'utf8');
  t.match(copied, /from "\.\.\/packages\/lmdb\.js"/, "the helper's copy imports lmdb from the packages' module");
});

t.test('a process holds one copy of each module, each run when a file first imports it', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'flagwire-copies-'));
  const { stdout, stderr } = run(
    [
      `const { srcModule } = await import(${JSON.stringify(copy('src-modules.js'))});`,
      `const { Store } = await import(${JSON.stringify(copy('helpers/store.js'))});`,
      'const before = (() => { try { srcModule("writer/thread/commands.js"); return true; } catch { return false; } })();',
      `const { buildWorld } = await import(${JSON.stringify(copy('helpers/world.js'))});`,
      `const world = buildWorld(${JSON.stringify(dataDir)});`,
      'const { LmdbStore } = srcModule("store/lmdb-store.js");',
      'const built = world.store instanceof LmdbStore;',
      'await world.store.close();',
      `const store = Store.open(${JSON.stringify(dataDir)}, { readOnly: true });`,
      'const after = typeof srcModule("writer/thread/commands.js").runCommand;',
      'console.log(JSON.stringify({ before, after, one: built && store instanceof LmdbStore }));',
      'await store.close();',
    ].join('\n'),
  );
  t.equal(stderr.trim(), '', 'it runs');
  t.strictSame(
    JSON.parse(stdout),
    { before: false, after: 'function', one: true },
    "the writer's commands ran when world.js was imported; both files' stores are one class",
  );
});

t.test("a URL a copy makes of its own file is the original's", async (t) => {
  const { stdout } = run(`console.log((await import(${JSON.stringify(copy('helpers/widgets.js'))})).kWidgetsModule);`);
  t.equal(stdout.trim(), original('helpers/widget-capability.js'), "a server given the test capability loads the original's module");
});

t.test("a failure in a copy is placed in the test's TypeScript", async (t) => {
  const source = readFileSync(new URL('../../../test/helpers/web-console.ts', import.meta.url), 'utf8').split('\n');
  const line = source.findIndex((l) => l.includes('no console password in:')) + 1;
  t.ok(line > 0, 'the helper throws that error');
  const { stdout } = run(
    [
      `const { demoPassword } = await import(${JSON.stringify(copy('helpers/web-console.js'))});`,
      "try { demoPassword('') } catch (err) { console.log(err.stack); }",
    ].join('\n'),
    kLazySourceMaps,
  );
  t.match(
    stdout,
    `at demoPassword (${fileURLToPath(new URL('../../../test/helpers/web-console.ts', import.meta.url))}:${line}:`,
    'the stack names the line that threw',
  );
});

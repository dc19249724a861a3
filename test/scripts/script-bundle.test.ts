// What the build makes of a bundle (scripts/script-bundle.mjs): a script V8 can cache and the module that
// runs it. A Node built-in that only a module run on use imports is required as that module first runs,
// not imported with the script: the writer thread no longer loads node:http, node:http2 or node:zlib
// for code it never runs (issue 57, item 2). The first test fails where every built-in is imported with
// the script (the stub names node:http2), as the build did before.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import t from 'tap';
import { plainNode } from '../helpers/plain-process.js';
import { tempDir } from '../helpers/scratch-dir.js';

const kRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** What scripts/script-bundle.mjs exports that this file uses (a JavaScript module: its shape is declared here). */
interface ScriptBundle {
  writeScriptBundle(
    outputFiles: readonly { path: string; text: string }[],
    name: string,
    outdir: string,
    stub: { stubs: readonly ('module' | 'commonjs')[]; twins?: Record<string, string> },
  ): void;
}
const { writeScriptBundle } = (await import(`${kRoot}scripts/script-bundle.mjs`)) as ScriptBundle;

/** What runs the script: its ES module (main.js), or its CommonJS module (main.cjs) with `twins`. */
type Stub = { stubs: ['module'] } | { stubs: ['commonjs']; twins: Record<string, string> };

/**
 * Bundles `files` (entry.js first) as the build does, into `dir`/out as a script and what `stub` asks to
 * run it; `external` names files the bundle imports from where it runs.
 */
async function scriptOf(
  dir: string,
  files: Record<string, string>,
  stub: Stub = { stubs: ['module'] },
  external: string[] = [],
): Promise<string> {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const { outputFiles } = await build({
    entryPoints: { main: join(dir, 'entry.js') },
    bundle: true,
    format: 'esm',
    platform: 'node',
    outdir: join(dir, 'out'),
    sourcemap: 'external',
    write: false,
    logLevel: 'silent',
    external,
  });
  writeScriptBundle(outputFiles, 'main', join(dir, 'out'), stub);
  return join(dir, 'out', stub.stubs[0] === 'module' ? 'main.js' : 'main.cjs');
}

/** `code` run by a plain Node process after it imported the bundle's module `main` as `m`. */
const withModule = (main: string, code: string) =>
  spawnSync(...plainNode(['--input-type=module', '-e', `const m = await import(${JSON.stringify(main)});\n${code}`]), { encoding: 'utf8' });

/** The built-ins a process has loaded (Node's own list), after `code` ran. */
const kLoadedBuiltins = "process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13))";

t.test('a built-in that only code run on use imports is loaded as that code runs, and works there', async (t) => {
  const dir = tempDir(t);
  const main = await scriptOf(dir, {
    'entry.js':
      "import { cpus } from 'node:os';\nimport { sep } from 'node:path';\n" +
      'export const cores = cpus().length;\nexport const separator = sep;\n' +
      "export async function serve() { return (await import('./on-use.js')).describe(); }\n",
    'on-use.js':
      "import http2 from 'node:http2';\nimport { STATUS_CODES } from 'node:http';\nimport { gzipSync, gunzipSync } from 'node:zlib';\n" +
      'const kTeapot = STATUS_CODES[418];\n' +
      'export function describe() {\n' +
      '  const server = http2.createServer();\n' +
      "  const round = gunzipSync(gzipSync('round trip')).toString();\n" +
      '  return { server: typeof server.listen, teapot: kTeapot, round };\n}\n',
  });
  const stub = readFileSync(main, 'utf8');
  for (const builtin of ['node:os', 'node:path'])
    t.match(stub, `from "${builtin}"`, `the module imports ${builtin}, which the script runs at once`);
  for (const builtin of ['node:http2', 'node:http', 'node:zlib']) t.notMatch(stub, `"${builtin}"`, `the module does not import ${builtin}`);

  const run = withModule(
    main,
    `const before = ${kLoadedBuiltins};\nconst described = await m.serve(); const after = ${kLoadedBuiltins};\n` +
      'console.log(JSON.stringify({ cores: m.cores, separator: m.separator, before, described, after }));',
  );
  t.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout) as { cores: number; separator: string; before: string[]; described: unknown; after: string[] };
  t.ok(out.cores > 0, 'the code run at once has its built-ins');
  t.equal(out.separator, '/');
  t.notOk(out.before.includes('http2'), 'node:http2 is not loaded before the code that uses it runs');
  t.notOk(out.before.includes('zlib'), 'nor node:zlib');
  t.strictSame(out.described, { server: 'function', teapot: "I'm a Teapot", round: 'round trip' }, 'the code run on use has its built-ins');
  t.ok(out.after.includes('http2') && out.after.includes('zlib'), 'and they are loaded once it has run');
});

t.test('a thread started from CommonJS runs the script without the ES module loader, and its handler is the default export', async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'out'));
  // The twin a CommonJS module requires, as the store's packages' is: the promise of what it exports.
  writeFileSync(join(dir, 'out', 'twin.cjs'), 'module.exports = Promise.resolve({ value: 42 });\n');
  // A package's CommonJS twin that the script's static import takes, as uWebSockets.js's is.
  writeFileSync(join(dir, 'out', 'an-es-module.cjs'), "module.exports = { shape: 'round' };\n");
  const main = await scriptOf(
    dir,
    {
      'entry.js':
        "import { cpus } from 'node:os';\nimport { shape } from 'an-es-module';\n" +
        'export default async function handler(x) {\n' +
        "  const twin = await import('./twin.js');\n" +
        '  return { x, cores: cpus().length, twin: twin.value, shape, url: import.meta.url, esm: process.moduleLoadList.filter((m) => /esm\\/(translators|module_job)$/.test(m)) };\n}\n',
    },
    { stubs: ['commonjs'], twins: { './twin.js': './twin.cjs', 'an-es-module': './an-es-module.cjs' } },
    ['./twin.js', 'an-es-module'],
  );
  const run = spawnSync(
    ...plainNode([
      '-e',
      "const { Worker } = require('node:worker_threads');\n" +
        `new Worker(\`require(${JSON.stringify(main)})(7).then((r) => require('node:worker_threads').parentPort.postMessage(r))\`, { eval: true })` +
        '.once("message", (r) => console.log(JSON.stringify(r)));',
    ]),
    { encoding: 'utf8' },
  );
  t.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout) as { x: number; cores: number; twin: number; shape: string; url: string; esm: string[] };
  t.equal(out.x, 7, "the module's export calls the script's default export");
  t.ok(out.cores > 0, 'the script has its built-ins');
  t.equal(out.twin, 42, 'an import of a module with a twin takes the twin');
  t.equal(out.shape, 'round', "a static import of an ES module takes its CommonJS twin's exports");
  t.equal(out.url, pathToFileURL(main).href, "import.meta.url is the module's");
  // Node loads what reads ES modules (their translators, a job per module) at a thread's first ES module.
  t.strictSame(out.esm, [], 'the thread loaded no ES module');
});

t.test('the script is ASCII: a character past it in a comment becomes an escape, and strings keep their text', async (t) => {
  const dir = tempDir(t);
  const main = await scriptOf(dir, {
    // esbuild keeps a comment before a class member and a regular expression as they are, and escapes
    // the characters past ASCII of strings and templates.
    'entry.js':
      'export class Answer {\n  /** The context a rule reads (docs/design.md \u00a7 2b): `fwc_\u2026` \ud83d\ude00. */\n' +
      "  text() { return 'r\u00e9sum\u00e9 \u2014 \u2713 \ud83d\ude00'; }\n}\n" +
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template of the bundled module's
      'export const template = `\u00a7${1 + 1}`;\nexport const pattern = /\u00e9+/.test("\u00e9\u00e9");\n',
  });
  const script = readFileSync(join(dir, 'out', 'main.script.js'));
  t.notOk(
    script.some((byte) => byte > 0x7f),
    'no byte past ASCII',
  );
  t.match(script.toString(), '(docs/design.md \\u00a7 2b): `fwc_\\u2026` \\ud83d\\ude00', 'the comment kept, its characters as escapes');
  t.match(script.toString(), '/\\u00e9+/.test(', 'and the pattern');
  const run = withModule(main, 'console.log(JSON.stringify({ text: new m.Answer().text(), template: m.template, pattern: m.pattern }));');
  t.equal(run.status, 0, run.stderr);
  t.strictSame(JSON.parse(run.stdout), { text: 'r\u00e9sum\u00e9 \u2014 \u2713 \ud83d\ude00', template: '\u00a72', pattern: true });
});

t.test('a character past ASCII outside a comment fails the build, which never writes such a script', async (t) => {
  const dir = tempDir(t);
  // What esbuild never writes (it escapes them in code), written by hand.
  const outputFiles = [
    { path: join(dir, 'main.js'), text: 'var text = "r\u00e9sum\u00e9";\nexport {\n  text\n};\n' },
    { path: join(dir, 'main.js.map'), text: '{}' },
  ];
  t.throws(
    () => writeScriptBundle(outputFiles, 'main', join(dir, 'out'), { stubs: ['module'] }),
    /main: a character past ASCII outside a comment/,
  );
});

t.test("the writer thread's module requires no built-in that only code run on use needs", async (t) => {
  const stub = readFileSync(new URL('../../src/cli/bundle/writer/actor.cjs', import.meta.url), 'utf8');
  t.match(stub, 'require("node:fs")', 'it requires what the writer runs at once');
  for (const builtin of ['node:http', 'node:https', 'node:http2', 'node:zlib'])
    t.notMatch(stub, `"${builtin}"`, `it does not require ${builtin} (the webhook deliverer's, the relay's and the gRPC server's)`);
  const frontEnd = readFileSync(new URL('../../src/cli/bundle/frontend/frontend-thread.cjs', import.meta.url), 'utf8');
  t.match(frontEnd, 'require("./../uws.cjs")', "a front-end thread's module requires uWebSockets.js's CommonJS twin");
});

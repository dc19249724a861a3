// A flag's cleanup (src/code-refs/cleanup.ts) on a fixture project with tests of its own: after
// `refs cleanup new-pricing --keep on` and after `--keep off` (each on its own copy), the project's tests
// pass on the kept path, no rewritable call site of the flag is left, and what could not be rewritten
// (an array holding the value, a Python file) is listed.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { languageOf } from '../../src/code-refs/languages.js';
import { scanTree } from '../../src/code-refs/scan-tree.js';
import { removeUnused } from '../../src/code-refs/unused.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';

t.setTimeout(300_000);

const kFixture: Readonly<Record<string, string>> = {
  'flags.mjs': [
    '// A stand-in for an OpenFeature client: new-pricing is on when NEW_PRICING=on.',
    'export const client = {',
    '  async getBooleanValue(key, fallback) {',
    "    return key === 'new-pricing' ? process.env.NEW_PRICING === 'on' : fallback;",
    '  },',
    '};',
    '',
  ].join('\n'),
  'pricing.mjs': [
    "import { client } from './flags.mjs';",
    '',
    'export async function price(base) {',
    "  if (await client.getBooleanValue('new-pricing', false)) {",
    '    const discount = 0.1;',
    '    return base * (1 - discount);',
    '  } else {',
    '    return base;',
    '  }',
    '}',
    '',
    'export async function label() {',
    "  return (await client.getBooleanValue('new-pricing', false)) ? 'New pricing' : 'Classic pricing';",
    '}',
    '',
    'export async function banner() {',
    "  const fresh = await client.getBooleanValue('new-pricing', false);",
    '  if (!fresh) {',
    "    return 'old banner';",
    '  }',
    "  return fresh ? 'new banner' : 'unreachable';",
    '}',
    '',
    'export async function footer(lines) {',
    "  if (!(await client.getBooleanValue('new-pricing', false))) {",
    "    lines.push('classic footer');",
    '  }',
    '  return lines;',
    '}',
    '',
    'export async function both() {',
    "  const values = [await client.getBooleanValue('new-pricing', false)];",
    "  return client.getBooleanValue('other-flag', true).then((other) => [values[0], other]);",
    '}',
    '',
  ].join('\n'),
  'test.mjs': [
    "import assert from 'node:assert/strict';",
    "import { banner, both, footer, label, price } from './pricing.mjs';",
    '',
    "const on = process.env.NEW_PRICING === 'on';",
    'assert.equal(await price(100), on ? 90 : 100);',
    "assert.equal(await label(), on ? 'New pricing' : 'Classic pricing');",
    "assert.equal(await banner(), on ? 'new banner' : 'old banner');",
    "assert.deepEqual(await footer([]), on ? [] : ['classic footer']);",
    'assert.deepEqual(await both(), [on, true]);',
    "console.log('fixture tests pass');",
    '',
  ].join('\n'),
  'worker.py': [
    'from openfeature import api',
    'client = api.get_client()',
    'if client.get_boolean_value("new-pricing", False):',
    '    print("new")',
    '',
  ].join('\n'),
};

function runFixtureTests(dir: string, value: 'on' | 'off'): string {
  return execFileSync(process.execPath, ['test.mjs'], { cwd: dir, env: { ...process.env, NEW_PRICING: value }, encoding: 'utf8' });
}

/** A fixture project written once, and a test that it passes its own tests both ways before any cleanup. */
function fixtureProject(name: string, files: Readonly<Record<string, string>>): string {
  const dir = tempDir(t, `flagwire-cleanup-${name}-`);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  t.test(`the ${name} fixture passes its tests both ways before any cleanup`, async (t) => {
    t.match(runFixtureTests(dir, 'on'), /fixture tests pass/);
    t.match(runFixtureTests(dir, 'off'), /fixture tests pass/);
  });
  return dir;
}

/** A copy of a fixture project to clean up, removed with the test. */
function copyOf(t: Parameters<typeof tempDir>[0], source: string, name: string): string {
  const dir = join(tempDir(t, `flagwire-cleanup-${name}-`), 'project');
  mkdirSync(dir);
  cpSync(source, dir, { recursive: true });
  return dir;
}

const source = fixtureProject('pricing', kFixture);

for (const keep of ['on', 'off'] as const) {
  t.test(`--keep ${keep}: the project's tests pass on the kept path, and what is left is listed`, async (t) => {
    const dir = copyOf(t, source, keep);
    const out = await cli(null, ['refs', 'cleanup', 'new-pricing', '--keep', keep, dir]);
    t.equal(out.code, 0, out.stderr);
    t.strictSame(out.json.filesChanged, ['pricing.mjs']);
    t.strictSame(
      out.json.rewritten.map((p: { line: number; what: string }) => [p.line, p.what]),
      [
        [4, 'if statement'],
        [13, 'ternary'],
        [17, 'const fresh and its conditions'],
        [25, 'if statement'],
      ],
    );
    t.strictSame(
      out.json.left.map((p: { file: string; line: number; language: string }) => [p.file, p.line, p.language]),
      [
        ['pricing.mjs', 32, 'javascript'],
        ['worker.py', 3, 'python'],
      ],
    );
    t.match(runFixtureTests(dir, keep), /fixture tests pass/, 'the kept path passes');
    const left = (await scanTree(dir)).references.filter((r) => r.key === 'new-pricing').map((r) => r.file);
    t.strictSame(left, ['pricing.mjs', 'worker.py'], 'only the listed places still name the flag');
    const rewritten = readFileSync(join(dir, 'pricing.mjs'), 'utf8');
    t.notOk(rewritten.includes('const fresh'), 'the const bound to the value is gone');
    if (keep === 'on')
      t.match(rewritten, 'export async function price(base) {\n  const discount = 0.1;\n  return base * (1 - discount);\n}');
    else t.match(rewritten, 'export async function price(base) {\n  return base;\n}');
  });
}

// What the rewrite leaves unused: a file-local constant of the key and a client made only for the call
// (removed, and the import of the client's maker with them), an imported constant and client (the
// specifier removed, an import left empty removed), an exported constant (kept and listed), a constant
// still used elsewhere in its file (kept).
const kUnusedFixture: Readonly<Record<string, string>> = {
  'flags.mjs': [
    "export const makeClient = () => ({ getBooleanValue: async (key, fallback) => (key === 'new-pricing' ? process.env.NEW_PRICING === 'on' : fallback) });",
    'export const client = makeClient();',
    "export const PRICING_FLAG = 'new-pricing';",
    "export const OTHER_FLAG = 'other-flag';",
    '',
  ].join('\n'),
  'local.mjs': [
    "import { makeClient } from './flags.mjs';",
    '',
    "const NEW_PRICING = 'new-pricing';",
    'const pricingClient = makeClient();',
    '',
    'export async function local(total) {',
    '  return (await pricingClient.getBooleanValue(NEW_PRICING, false)) ? total - 1 : total;',
    '}',
    '',
  ].join('\n'),
  'imported.mjs': [
    "import { client } from './flags.mjs';",
    "import { OTHER_FLAG, PRICING_FLAG as PRICING } from './flags.mjs';",
    '',
    'export async function imported(total) {',
    '  if (await client.getBooleanValue(PRICING, false)) {',
    '    return total - 2;',
    '  }',
    '  return (await client.getBooleanValue(OTHER_FLAG, true)) ? total : 0;',
    '}',
    '',
  ].join('\n'),
  'exported.mjs': [
    "import { client } from './flags.mjs';",
    '',
    "export const EXPORTED_PRICING = 'new-pricing';",
    "const KEPT_PRICING = 'new-pricing';",
    '',
    'export async function exported(total) {',
    '  const base = (await client.getBooleanValue(EXPORTED_PRICING, false)) ? total - 3 : total;',
    "  const label = (await client.getBooleanValue(KEPT_PRICING, false)) ? 'on' : 'off';",
    "  return [base, label, KEPT_PRICING].join(' ');",
    '}',
    '',
  ].join('\n'),
  'test.mjs': [
    "import assert from 'node:assert/strict';",
    "import { exported } from './exported.mjs';",
    "import { imported } from './imported.mjs';",
    "import { local } from './local.mjs';",
    '',
    "const on = process.env.NEW_PRICING === 'on';",
    'assert.equal(await local(10), on ? 9 : 10);',
    'assert.equal(await imported(10), on ? 8 : 10);',
    "assert.equal(await exported(10), on ? '7 on new-pricing' : '10 off new-pricing');",
    "console.log('fixture tests pass');",
    '',
  ].join('\n'),
};

const unusedSource = fixtureProject('unused', kUnusedFixture);

for (const keep of ['on', 'off'] as const) {
  t.test(`--keep ${keep}: what the rewrite left unused is removed unless exported or used, and listed`, async (t) => {
    const dir = copyOf(t, unusedSource, `unused-${keep}`);
    const out = await cli(null, ['refs', 'cleanup', 'new-pricing', '--keep', keep, dir]);
    t.equal(out.code, 0, out.stderr);
    t.strictSame(out.json.filesChanged, ['exported.mjs', 'imported.mjs', 'local.mjs']);
    t.strictSame(out.json.left, []);
    t.match(runFixtureTests(dir, keep), /fixture tests pass/, 'the kept path passes');
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    t.strictSame(
      out.json.removed.map((p: { file: string; what: string }) => [p.file, p.what]),
      [
        ['exported.mjs', 'import client'],
        ['imported.mjs', 'import PRICING'],
        ['local.mjs', 'const NEW_PRICING'],
        ['local.mjs', 'const pricingClient'],
        ['local.mjs', 'import makeClient'],
      ],
    );
    t.equal(
      read('local.mjs'),
      ['', '', 'export async function local(total) {', `  return ${keep === 'on' ? '(total - 1)' : 'total'};`, '}', ''].join('\n'),
      "the constant, the client made for the call and its maker's import are gone",
    );
    t.match(
      read('imported.mjs'),
      "import { client } from './flags.mjs';\nimport { OTHER_FLAG } from './flags.mjs';\n",
      "the imported constant's specifier is gone, the client still used is kept",
    );
    const exported = read('exported.mjs');
    t.match(exported, "export const EXPORTED_PRICING = 'new-pricing';", 'an exported constant is kept');
    t.match(exported, "const KEPT_PRICING = 'new-pricing';", 'a constant still used in its file is kept');
    t.strictSame(
      out.json.unusedExports.map((p: { file: string; line: number }) => [p.file, p.line]).sort(),
      [
        ['exported.mjs', 3],
        ['flags.mjs', 3],
      ],
      'the exported constants of the key no longer used are listed',
    );
    t.notOk(exported.includes('import { client }'), 'a client import used only by the rewritten calls is gone');

    const again = copyOf(t, unusedSource, `unused-human-${keep}`);
    const human = await cli(null, ['refs', 'cleanup', 'new-pricing', '--keep', keep, again], { json: false });
    t.equal(human.code, 0, human.stderr);
    t.match(human.stdout, 'removed local.mjs:3 (const NEW_PRICING: no use left)', 'what was removed is printed');
    t.match(human.stdout, 'flags.mjs:3 const PRICING_FLAG: exported, no file uses it', 'an unused export is printed');
  });
}

t.test('entries of one list are removed one by one: a default import, specifiers, declarators, a destructured name', async (t) => {
  const text = [
    "import D, { A, B } from 'm';",
    "import E, { F } from 'e';",
    'const x = 1, y = A;',
    'const { G, H } = load();',
    'use(B, H, E);',
    '',
  ].join('\n');
  const result = await removeUnused(languageOf('a.ts')!, text, new Set(['D', 'F', 'x', 'y', 'G']));
  t.equal(result.text, ["import { B } from 'm';", "import E from 'e';", 'const { H } = load();', 'use(B, H, E);', ''].join('\n'));
  t.strictSame(result.removed.map((r) => r.what).sort(), ['const x', 'const y', 'const { G }', 'import A', 'import D', 'import F'].sort());
});

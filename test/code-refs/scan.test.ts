// Code references found in source (src/code-refs/scan.ts), on a generated corpus in every language a
// scan reads (test/helpers/code-refs-corpus.ts): every literal, constant and alias key found, at least
// 99% of what is reported planted (decoys are not), and every computed key reported unknown, never
// guessed. Then the forms one at a time, and what a walk of a folder leaves out.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { languageOf } from '../../src/code-refs/languages.js';
import { scanSource } from '../../src/code-refs/scan.js';
import { kMaxScannedFileBytes, scanTree } from '../../src/code-refs/scan-tree.js';
import { kCorpusLanguages, kDecoyPrefix, writeCorpus } from '../helpers/code-refs-corpus.js';
import { tempDir } from '../helpers/scratch-dir.js';

t.setTimeout(300_000);

t.test('a corpus in every language: recall 100% on literal, constant and alias keys, precision ≥ 99%, computed keys unknown', async (t) => {
  const dir = tempDir(t, 'flagwire-code-refs-');
  const corpus = writeCorpus(dir, kCorpusLanguages.length * 6, 3);
  const result = await scanTree(dir);
  t.equal(result.filesScanned, corpus.files, 'every file scanned');

  const found = new Map(result.references.filter((r) => r.key !== null).map((r) => [`${r.file}|${r.key}`, r]));
  for (const form of ['literal', 'constant', 'alias'] as const) {
    const planted = corpus.planted.filter((p) => p.form === form);
    const missed = planted.filter((p) => !found.has(`${p.file}|${p.key}`));
    t.strictSame(missed, [], `recall on ${form} keys: ${planted.length - missed.length}/${planted.length}`);
    const misnamed = planted.filter((p) => found.get(`${p.file}|${p.key}`)?.kind !== form && found.has(`${p.file}|${p.key}`));
    t.strictSame(misnamed, [], `each ${form} key reported as ${form}`);
  }
  const plantedKeys = new Set(corpus.planted.filter((p) => p.key !== null).map((p) => `${p.file}|${p.key}`));
  const reported = result.references.filter((r) => r.key !== null);
  const wrong = reported.filter((r) => !plantedKeys.has(`${r.file}|${r.key}`));
  t.ok(
    reported.length > 0 && (reported.length - wrong.length) / reported.length >= 0.99,
    `precision ${reported.length - wrong.length}/${reported.length}`,
  );
  t.strictSame(
    reported.filter((r) => r.key!.startsWith(kDecoyPrefix)),
    [],
    'no decoy reported',
  );

  const dynamicPerFile = new Map<string, number>();
  for (const p of corpus.planted) if (p.form === 'dynamic') dynamicPerFile.set(p.file, (dynamicPerFile.get(p.file) ?? 0) + 1);
  const unknownPerFile = new Map<string, number>();
  for (const r of result.references) if (r.kind === 'unknown') unknownPerFile.set(r.file, (unknownPerFile.get(r.file) ?? 0) + 1);
  t.strictSame(
    Object.fromEntries(unknownPerFile),
    Object.fromEntries(dynamicPerFile),
    'every computed key reported unknown, in its file, and nothing else',
  );
  t.ok(
    result.references.filter((r) => r.kind === 'unknown').every((r) => r.key === null && r.expression.length > 0 && r.line > 0),
    'an unknown key has no key, but its expression and place',
  );
  t.strictSame(
    [...new Set(result.references.map((r) => r.language))].sort(),
    ['csharp', 'go', 'java', 'javascript', 'kotlin', 'python', 'ruby', 'typescript'],
    'every language found references',
  );
});

t.test('a reference names its file, line, call and context', async (t) => {
  const text = [
    "import { OpenFeature } from '@openfeature/server-sdk';",
    'const client = OpenFeature.getClient();',
    '',
    "const on = await client.getBooleanValue('new-checkout', false);",
    'console.log(on);',
  ].join('\n');
  const [ref, ...rest] = await scanSource(languageOf('a.ts')!, 'src/a.ts', text);
  t.strictSame(rest, []);
  t.strictSame(ref, {
    file: 'src/a.ts',
    line: 4,
    column: 41,
    language: 'typescript',
    sdk: 'openfeature',
    method: 'getBooleanValue',
    kind: 'literal',
    key: 'new-checkout',
    expression: "'new-checkout'",
    context: [
      'const client = OpenFeature.getClient();',
      '',
      "const on = await client.getBooleanValue('new-checkout', false);",
      'console.log(on);',
    ],
    contextStart: 2,
  });
});

t.test('a name bound twice, a concatenation and a call are unknown; a common method on no flag client is no reference', async (t) => {
  const text = [
    "let key = 'a';",
    "key = 'b';",
    'client.getBooleanValue(key, false);',
    "client.getStringValue('x' + suffix, '');",
    'client.getNumberValue(keyOf(user), 0);',
    "button.isEnabled('not-a-flag');",
    "unleash.isEnabled('a-flag');",
    "provider.resolveBooleanEvaluation('direct', false, {});",
  ].join('\n');
  const refs = await scanSource(languageOf('a.js')!, 'a.js', text);
  t.strictSame(
    refs.map((r) => [r.line, r.kind, r.key, r.sdk]),
    [
      [3, 'unknown', null, 'openfeature'],
      [4, 'unknown', null, 'openfeature'],
      [5, 'unknown', null, 'openfeature'],
      [7, 'literal', 'a-flag', 'unleash'],
      [8, 'literal', 'direct', 'flagwire'],
    ],
  );
});

/** Each reference a file's text holds, as its line, kind and key. */
async function places(file: string, text: string): Promise<[number, string, string | null][]> {
  return (await scanSource(languageOf(file)!, file, text)).map((r) => [r.line, r.kind, r.key]);
}

t.test('a name is resolved in its scope: shadowed, hoisted, written inside, or out of sight is unknown', async (t) => {
  const js = [
    "const KEY = 'outer-key';",
    'function a(KEY) { return client.getBooleanValue(KEY, false); }',
    "function b() { const KEY = 'inner-key'; return client.getBooleanValue(KEY, false); }",
    "function c() { if (x) { var hoisted = 'hoisted-key'; } return client.getBooleanValue(hoisted, false); }",
    "function d() { let k = 'first'; items.forEach(() => { k = next(); }); return client.getBooleanValue(k, false); }",
    "function e() { { const hidden = 'hidden-key'; } return client.getBooleanValue(hidden, false); }",
    'function f() { for (const KEY of keys) client.getBooleanValue(KEY, false); }',
    'const g = ({ KEY }) => client.getBooleanValue(KEY, false);',
    'client.getBooleanValue(KEY, false);',
  ].join('\n');
  t.strictSame(await places('a.js', js), [
    [2, 'unknown', null],
    [3, 'constant', 'inner-key'],
    [4, 'constant', 'hoisted-key'],
    [5, 'unknown', null],
    [6, 'unknown', null],
    [7, 'unknown', null],
    [8, 'unknown', null],
    [9, 'constant', 'outer-key'],
  ]);
  const python = [
    'KEY = "outer-key"',
    'class Flags:',
    '    KEY = "class-key"',
    '    def check(self):',
    '        return client.get_boolean_value(KEY, False)',
    'def reset():',
    '    global KEY',
    '    KEY = "other"',
    'class Other:',
    '    KEY = "class-key"',
    '    client.get_boolean_value(KEY, False)',
  ].join('\n');
  t.strictSame(
    await places('a.py', python),
    [
      [5, 'unknown', null],
      [11, 'constant', 'class-key'],
    ],
    'a method does not see its class body; a global written elsewhere is unknown',
  );
  const ruby = [
    'key = "top-key"',
    'KEY = "const-key"',
    'def check(client)',
    '  client.fetch_boolean_value(flag_key: key, default_value: false)',
    '  client.fetch_boolean_value(flag_key: KEY, default_value: false)',
    'end',
  ].join('\n');
  t.strictSame(
    await places('a.rb', ruby),
    [
      [4, 'unknown', null],
      [5, 'constant', 'const-key'],
    ],
    "a def does not see the file's locals, and sees its constants",
  );
});

t.test('a folder walk skips dependencies, build output, .gitignore names and large files', async (t) => {
  const dir = tempDir(t, 'flagwire-code-refs-walk-');
  const call = "client.getBooleanValue('k', false);\n";
  for (const folder of ['src', 'node_modules/x', 'dist', 'vendor', '.git', 'generated']) mkdirSync(join(dir, folder), { recursive: true });
  for (const folder of ['src', 'node_modules/x', 'dist', 'vendor', '.git', 'generated']) writeFileSync(join(dir, folder, 'a.ts'), call);
  writeFileSync(join(dir, '.gitignore'), 'generated/\n*.gen.ts\n');
  writeFileSync(join(dir, 'src', 'b.gen.ts'), call);
  writeFileSync(join(dir, 'src', 'big.ts'), call + '//'.padEnd(kMaxScannedFileBytes, 'x'));
  writeFileSync(join(dir, 'src', 'notes.txt'), call);
  const result = await scanTree(dir);
  t.strictSame(
    result.references.map((r) => r.file),
    ['src/a.ts'],
  );
  t.strictSame(result.skipped, [{ file: 'src/big.ts', reason: `larger than ${kMaxScannedFileBytes} bytes` }]);
});

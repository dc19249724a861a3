// The console stores only valid Unicode, as the Management API does: an argument whose bytes are not
// UTF-8 (which Node would read with U+FFFD in their place) is refused before anything is opened, a
// lone surrogate handed to a writer command is refused by the same rule as an API body, and text of any
// script round-trips exactly, a repeated edit writing nothing.
import t from 'tap';
import { undecodableArguments } from '../../src/cli/command/args.js';
import { FlagwireError } from '../../src/errors.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { cli, expectAllRefused, inStore, ok, type CliArg } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';

const dir = tempDir(t);
const ids: Record<string, string> = {};

/** Text and single bytes in a row: `bad('dup', 0xff)` is `dup\xff`, not UTF-8. */
const bad = (...parts: (string | number)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from([p]))));
const notUtf8 = (position: number, shown: string) =>
  `usage: argument ${position} ("${shown}") is not valid UTF-8 (shown with U+FFFD for the bytes that do not decode); pass text as UTF-8 (check the encoding of the terminal or script)`;

t.before(async () => {
  const org = await cli(dir, ['org', 'create', '--name', 'Acme', '--plan', 'teams']);
  ids.org = org.json.id;
  ids.user = (await cli(dir, ['user', 'create', '--email', 'olive@acme.test'])).json.id;
  await cli(dir, ['org', 'add-member', ids.org!, ids.user!, '--role', 'owner']);
  ids.single = (await cli(dir, ['project', 'create', '--name', 'Shop', '--org', ids.org!])).json.id;
  ids.multi = (
    await cli(dir, ['project', 'create', '--name', 'Platform', '--org', ids.org!, '--kind', 'multi', '--env', 'staging'])
  ).json.id;
  ids.audience = (await cli(dir, ['audience', 'create', ids.single!, '--name', 'Beta', '--rule', 'plan=beta'])).json.id;
  await inStore(dir, (run) => {
    ids.flag = run('flagCreate', { projectId: ids.single!, body: { name: 'checkout' }, principal: kOperator }).id;
    ids.group = run('flagCreate', { projectId: ids.multi!, body: { name: 'search' }, principal: kOperator }).id;
  });
});

t.test('an argument that is not UTF-8 is refused (exit 2) by every command that stores text, and nothing changes', async (t) => {
  const dup = bad('dup', 0xff);
  // A surrogate encoded as if it were a character (CESU-8/WTF-8): three U+FFFD once decoded.
  const wtf8 = bad('vip', 0xed, 0xa0, 0x80);
  const cases: [CliArg[], RegExp][] = [
    [['org', 'create', '--name', dup], /argument 4 /],
    [['user', 'create', '--email', bad('ed', 0xfe, '@acme.test')], /argument 4 /],
    [['user', 'create', '--email', 'ed@acme.test', '--name', wtf8], /argument 6 /],
    [['project', 'create', '--name', dup, '--org', ids.org!], /argument 4 /],
    [['project', 'create', '--name', 'P', '--org', ids.org!, '--kind', 'multi', '--env', bad('st', 0xc0, 0xaf)], /argument 10 /],
    [['env', 'add', ids.multi!, bad('qa', 0x80)], /argument 4 /],
    [['env', 'rename', ids.multi!, 'staging', bad('stage', 0xe2, 0x82)], /argument 5 /],
    [['audience', 'create', ids.single!, '--name', dup, '--rule', 'plan=beta'], /argument 5 /],
    [['audience', 'create', ids.single!, '--name', 'A', '--rule', bad('plan=be', 0xff, 'ta')], /argument 7 /],
    [['audience', 'update', ids.audience!, '--name', wtf8], /argument 5 /],
    [['audience', 'update', ids.audience!, '--rule', bad('pl', 0xff, '=x')], /argument 5 /],
    [['flag', 'rename', ids.flag!, dup], /argument 4 /],
    [['flag', 'describe', ids.flag!, wtf8], /argument 4 /],
    [['flag', 'tags', ids.flag!, bad('web,', 0xff)], /argument 4 /],
    [['flag', 'cohorts', ids.group!, bad('alice,vip', 0xed, 0xa0, 0x80)], /argument 4 /],
    [['token', 'create', ids.single!, '--as', ids.user!, '--name', dup, '--permission', 'read'], /argument 7 /],
  ];
  const results = await expectAllRefused(
    t,
    dir,
    cases.map(([args, where]) => [args, { code: 2, error: 'Invalid request', detail: where }] as const),
  );
  for (const r of results) t.match(r.stderr, /^flagwire: argument \d+ \(".*"\) is not valid UTF-8/);
  t.equal(results[0]!.json.detail, notUtf8(4, 'dup\uFFFD'), 'the detail names the argument as Node read it');
  t.equal(results[12]!.json.detail, notUtf8(4, 'vip\uFFFD\uFFFD\uFFFD'));

  const twoBad = await cli(dir, ['flag', 'rename', dup, wtf8]);
  t.equal(twoBad.code, 2);
  t.match(twoBad.json.detail, /^usage: argument 3 \("dup\uFFFD"\), argument 4 \("vip\uFFFD\uFFFD\uFFFD"\) are not valid UTF-8/);
  const human = await cli(dir, ['flag', 'rename', ids.flag!, dup], { json: false });
  t.equal(human.code, 2);
  t.equal(human.stdout, '');
  t.match(human.stderr, /^flagwire: argument 4 \("dup\uFFFD"\) is not valid UTF-8 .*\n\nUsage: flagwire flag rename FLAG_ID NAME/);
});

t.test("undecodableArguments: the bytes of the command line's tail, or nothing where they do not match argv", async (t) => {
  const line = (...args: Buffer[]) => Buffer.concat(args.flatMap((a) => [a, Buffer.from([0])]));
  const raw = line(Buffer.from('node'), Buffer.from('--flag'), Buffer.from('cli.js'), Buffer.from('ok'), bad('x', 0xff), Buffer.from('né'));
  t.same(undecodableArguments(['ok', 'x\uFFFD', 'né'], raw), [1]);
  t.same(undecodableArguments(['ok', 'x\uFFFD', 'né'], null), [], 'no /proc: nothing seen');
  t.same(
    undecodableArguments(['other', 'x\uFFFD', 'né'], raw),
    [],
    'a command line that does not end in argv (a changed process title) is not trusted',
  );
  t.same(undecodableArguments(['a', 'b', 'c', 'd', 'e', 'f', 'g'], raw), [], 'more arguments than the command line holds');
  t.same(undecodableArguments([], raw), []);
});

t.test('a lone surrogate given to a writer command is refused with its path, as in an API body', async (t) => {
  const before = await exportStore(dir);
  const refusal = (fn: Parameters<typeof inStore>[1]) =>
    inStore(dir, fn).then(
      () => null,
      (err: unknown) => err,
    );
  const renamed = await refusal((run) => run('flagRename', { principal: kOperator, flagId: ids.flag!, name: 'dup\ud800' }));
  t.ok(renamed instanceof FlagwireError);
  t.match(renamed, {
    code: 'INVALID_REQUEST',
    detail: 'name is not valid Unicode: it has a lone surrogate (\\uD800); send only well-formed text (I-JSON, RFC 7493)',
  });
  const rules = await refusal((run) =>
    run('audienceCreate', {
      principal: kOperator,
      projectId: ids.single!,
      name: 'A',
      rules: [{ attribute: 'plan', values: ['ok', 'b\udc00'] }],
    }),
  );
  t.match(rules, {
    code: 'INVALID_REQUEST',
    detail: 'rules[0].values[1] is not valid Unicode: it has a lone surrogate (\\uDC00); send only well-formed text (I-JSON, RFC 7493)',
  });
  const tags = await refusal((run) => run('flagTags', { principal: kOperator, flagId: ids.flag!, tags: ['\udbff'] }));
  t.match(tags, { code: 'INVALID_REQUEST', detail: /^tags\[0\] is not valid Unicode/ });
  t.strictSame(await exportStore(dir), before, 'nothing written');
});

t.test('text of any script round-trips through the console, and the same edit again writes nothing', async (t) => {
  const org = await ok(t, dir, ['org', 'create', '--name', '新しい組織 🚀']);
  t.equal(org.name, '新しい組織 🚀');
  const user = await ok(t, dir, ['user', 'create', '--email', 'zoë@acme.test', '--name', 'Zoë Ñandú']);
  t.match(user, { email: 'zoë@acme.test', name: 'Zoë Ñandú' });
  const audience = await ok(t, dir, ['audience', 'update', ids.audience!, '--name', 'Bêta 😀', '--rule', 'país=España,日本']);
  t.match(audience, { name: 'Bêta 😀', rules: [{ attribute: 'país', values: ['España', '日本'] }] });

  const edits: [string[], Record<string, unknown>][] = [
    [['flag', 'rename', ids.flag!, 'café 🚀'], { name: 'café 🚀' }],
    // Decomposed é (e + U+0301) is kept as sent: never normalised to the precomposed form.
    [['flag', 'describe', ids.flag!, 'e\u0301 — ελληνικά, עברית'], { description: 'e\u0301 — ελληνικά, עברית' }],
    [['flag', 'tags', ids.flag!, '标签,😀,cafe\u0301'], { tags: ['标签', '😀', 'cafe\u0301'] }],
    [['flag', 'cohorts', ids.group!, '👍,ñ,👩‍👩‍👧'], { cohorts: ['👍', 'ñ', '👩‍👩‍👧'] }],
  ];
  for (const [args, expected] of edits) t.match(await ok(t, dir, args), expected, args.slice(0, 2).join(' '));
  const before = await exportStore(dir);
  for (const [args, expected] of edits) t.match(await ok(t, dir, args), expected, `${args.slice(0, 2).join(' ')} again`);
  t.strictSame(await exportStore(dir), before, 'the same edits again wrote nothing (no audit entries)');
});

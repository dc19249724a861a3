// Flags as code (issue 26) as users run it: `flagwire export` writes a project as a file, the same
// bytes for the same state, in Flagwire's format (flagd's: cli-flagd-export.test.ts); `flagwire plan` says field by field what
// applying a file would change (exit 0: nothing, 2: something); `flagwire apply` makes the project what
// the file says in one transaction, audited, and a second time changes nothing and writes nothing;
// --prune, --if-revision and --as; a refused file names the place in it and not one byte changes.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { planDigest } from '../../src/flags-as-code/plan.js';
import { cli, expectAllRefused, expectRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';
import { dataDir, exportText, ids, kColours, kRule } from './cli-world.js';

const kBeta = [{ attribute: 'plan', values: ['beta'] }];

const files = tempDir(t, 'flagwire-fac-files-');

function file(name: string, document: unknown): string {
  const path = join(files, name);
  writeFileSync(path, typeof document === 'string' ? document : fileText(document));
  return path;
}

type Entry = { seq: number; action: string; actor: string; flagId: string | null; env: string | null };
const audit = async (project: string): Promise<Entry[]> => (await ok(t, dataDir, ['audit', project, '--limit', '1000', '--json'])).entries;

/** The revision by its definition: the newest audit entry that changed a flag, an environment or an audience. */
async function revisionOf(project: string): Promise<number> {
  return (await audit(project)).find((e) => /^(flag|env|audience)\./.test(e.action))?.seq ?? 0;
}

t.test('export: the same state gives the same bytes, with environments, audiences and typed variants', async (t) => {
  const first = await exportText(ids.multi);
  const second = await exportText(ids.multi);
  t.equal(second, first, 'two exports: the same bytes');
  const child = await cli(dataDir, ['export', ids.multi], { json: false, process: true });
  t.equal(child.stdout, first, 'the binary, in a process of its own: the same bytes');
  const doc = JSON.parse(first);
  t.equal(first, fileText(doc), 'two-space JSON, a final newline');
  t.strictSame((await ok(t, dataDir, ['export', ids.multi, '--json'])) as unknown, doc, '--json: the same document');
  t.strictSame(Object.keys(doc), ['flagwire', 'kind', 'environments', 'audiences', 'flags']);
  t.match(doc, { flagwire: 1, kind: 'multi', environments: ['staging', 'production'] });
  t.strictSame(doc.audiences, { Beta: { rules: kBeta } });
  t.strictSame(Object.keys(doc.flags), ['colour', 'half', 'limit', 'search'], 'flags by name');
  t.strictSame(doc.flags.search, {
    description: '',
    tags: [],
    cohorts: ['wide-1', 'wide-2'],
    environments: {
      staging: { enabled: true, trafficPercentage: 100, cohorts: ['wide-1', 'wide-2'], audience: null },
      production: { enabled: false, trafficPercentage: 0, cohorts: ['qa'], audience: null },
    },
  });
  t.strictSame(doc.flags.colour.environments, {
    staging: {
      enabled: true,
      trafficPercentage: 100,
      cohorts: [],
      audience: null,
      variants: kColours,
      defaultVariant: 'red',
      targeting: kRule,
    },
    production: { enabled: false, trafficPercentage: 0, cohorts: [], audience: null, variants: kColours, defaultVariant: 'blue' },
  });
  t.strictSame(doc.flags.limit.environments.staging.variants, { low: 10, high: 1000 }, 'numbers stay numbers');
  t.strictSame(
    doc.flags.half.environments.staging,
    { enabled: true, trafficPercentage: 50, cohorts: [], audience: 'Beta' },
    'the audience by name',
  );

  const single = JSON.parse(await exportText(ids.single));
  t.strictSame(Object.keys(single), ['flagwire', 'kind', 'audiences', 'flags'], 'a single project: no environments');
  t.strictSame(single.flags.checkout, {
    description: '',
    tags: [],
    enabled: true,
    trafficPercentage: 50,
    cohorts: ['alice'],
    audience: null,
  });
});

t.test('plan: exit 0 when nothing would change, 2 when something would, each field before -> after', async (t) => {
  const exported = JSON.parse(await exportText(ids.multi));
  const same = await cli(dataDir, ['plan', ids.multi, '--file', file('same.json', exported)], { json: false });
  t.equal(same.code, 0, 'the export itself: exit 0');
  t.match(same.stdout, new RegExp(`^No changes: project ${ids.multi} matches the file \\(revision \\d+\\)\\.\\n$`));

  const edited = structuredClone(exported);
  edited.flags.half.environments.staging.trafficPercentage = 40;
  edited.flags.colour.environments.production.defaultVariant = 'red';
  edited.flags.fresh = { environments: { production: { enabled: true, trafficPercentage: 100 } } };
  const path = file('edited.json', edited);
  const before = await exportStore(dataDir);
  const human = await cli(dataDir, ['plan', ids.multi, '--file', path], { json: false });
  t.equal(human.code, 2, 'a change: exit 2');
  const revision = await revisionOf(ids.multi);
  t.ok(revision > 0);
  t.equal(
    human.stdout,
    [
      `Plan for project ${ids.multi} at revision ${revision} (apply --if-revision ${revision} applies it only if nothing changed since):`,
      '~ flag colour',
      '    environments.production.defaultVariant: "blue" -> "red"',
      '+ flag fresh',
      '    description: ""',
      '    tags: []',
      '    environments.staging.enabled: false',
      '    environments.staging.trafficPercentage: 0',
      '    environments.staging.cohorts: []',
      '    environments.staging.audience: null',
      '    environments.production.enabled: true',
      '    environments.production.trafficPercentage: 100',
      '    environments.production.cohorts: []',
      '    environments.production.audience: null',
      '~ flag half',
      '    environments.staging.trafficPercentage: 50 -> 40',
      '1 to create, 2 to change, 0 to delete.',
      '',
    ].join('\n'),
  );

  const json = await cli(dataDir, ['plan', ids.multi, '--file', path, '--json']);
  t.equal(json.code, 2, '--json: exit 2 as well');
  t.strictSame(Object.keys(json.json), ['projectId', 'revision', 'changed', 'changes', 'digest', 'notInFile', 'ignored']);
  t.equal(json.json.digest, planDigest(ids.multi, json.json.changes), 'the digest of its changes');
  t.match(json.json, { projectId: ids.multi, revision, changed: true, notInFile: [], ignored: [] });
  t.strictSame(
    json.json.changes.map((c: { op: string; kind: string; name: string; consoleOnly: boolean }) => [c.op, c.kind, c.name, c.consoleOnly]),
    [
      ['update', 'flag', 'colour', false],
      ['create', 'flag', 'fresh', false],
      ['update', 'flag', 'half', false],
    ],
  );
  t.strictSame(json.json.changes[2].fields, [{ path: 'environments.staging.trafficPercentage', before: 50, after: 40 }]);
  t.strictSame(await exportStore(dataDir), before, 'plan writes nothing');
});

// A project made for apply, and the file it is made from (in the order and with every key export writes).
let code = '';
const kFile = {
  flagwire: 1,
  kind: 'multi',
  environments: ['staging', 'production'],
  audiences: { 'beta-testers': { rules: kBeta } },
  flags: {
    'button-colour': {
      description: '',
      tags: [],
      cohorts: ['qa'],
      environments: {
        staging: {
          enabled: true,
          trafficPercentage: 100,
          cohorts: ['qa'],
          audience: null,
          variants: kColours,
          defaultVariant: 'red',
          targeting: kRule,
        },
        production: { enabled: false, trafficPercentage: 0, cohorts: ['qa'], audience: null, variants: kColours, defaultVariant: 'blue' },
      },
    },
    'new-checkout': {
      description: 'The new checkout',
      tags: ['checkout'],
      cohorts: [],
      environments: {
        staging: { enabled: true, trafficPercentage: 100, cohorts: [], audience: null },
        production: { enabled: true, trafficPercentage: 50, cohorts: [], audience: 'beta-testers' },
      },
    },
  },
};

t.test('apply: creates and updates, audited; the same file again changes nothing and writes no audit entry', async (t) => {
  code = (
    await ok(t, dataDir, [
      'project',
      'create',
      '--name',
      'Code',
      '--org',
      ids.orgA,
      '--kind',
      'multi',
      '--env',
      'staging,production',
      '--json',
    ])
  ).id;
  const path = file('code.json', kFile);
  const applied = await ok(t, dataDir, ['apply', code, '--file', path, '--json']);
  t.match(applied, { projectId: code, changed: true, notInFile: [], ignored: [] });
  t.strictSame(
    applied.changes.map((c: { op: string; kind: string; name: string }) => [c.op, c.kind, c.name]),
    [
      ['create', 'audience', 'beta-testers'],
      ['create', 'flag', 'button-colour'],
      ['create', 'flag', 'new-checkout'],
    ],
  );
  t.equal(applied.revision, await revisionOf(code), 'the revision it left');
  t.equal(await exportText(code), fileText(kFile), 'the project is what the file says: it exports to the same bytes');
  const entries = await audit(code);
  t.strictSame(
    entries.map((e) => e.action).sort(),
    ['audience.create', 'flag.cohorts', 'flag.create', 'flag.create'],
    'each change through its own command, audited',
  );
  t.ok(
    entries.every((e) => e.actor === 'console'),
    'as the console',
  );

  const again = await ok(t, dataDir, ['apply', code, '--file', path, '--json']);
  t.strictSame(again, {
    projectId: code,
    revision: applied.revision,
    changed: false,
    changes: [],
    digest: planDigest(code, []),
    notInFile: [],
    ignored: [],
  });
  t.strictSame(await audit(code), entries, 'no audit entry');
  const human = await cli(dataDir, ['apply', code, '--file', path], { json: false });
  t.equal(human.code, 0);
  t.equal(human.stdout, `Nothing to apply: project ${code} already matches the file (revision ${applied.revision}).\n`);

  const changed = structuredClone(kFile);
  changed.flags['new-checkout'].description = 'The checkout, rewritten';
  changed.flags['new-checkout'].environments.production.trafficPercentage = 75;
  changed.flags['button-colour'].environments.staging.variants = { red: '#f00', blue: '#0000ff' };
  const update = await cli(dataDir, ['apply', code, '--file', file('code-2.json', changed)], { json: false });
  t.equal(update.code, 0, `${update.stdout}${update.stderr}`);
  const revision = await revisionOf(code);
  t.equal(
    update.stdout,
    [
      '~ flag button-colour',
      '    environments.staging.variants: {"red":"#f00","blue":"#00f"} -> {"red":"#f00","blue":"#0000ff"}',
      '~ flag new-checkout  (console only)',
      '    description: "The new checkout" -> "The checkout, rewritten"',
      '    environments.production.trafficPercentage: 50 -> 75',
      `Applied to project ${code}, now at revision ${revision}: 0 created, 2 changed, 0 deleted.`,
      '',
    ].join('\n'),
  );
  const after = await audit(code);
  t.strictSame(
    after.slice(0, after.length - entries.length).map((e) => [e.action, e.env]),
    [
      ['flag.patch', 'production'],
      ['flag.describe', null],
      ['flag.patch', 'staging'],
    ],
    'newest first: one entry per change',
  );
  t.equal(await exportText(code), fileText(changed));
  t.equal((await cli(dataDir, ['plan', code, '--file', file('code-2.json', changed)])).code, 0, 'then plan: no change');
  // Back to the file the next tests use.
  await ok(t, dataDir, ['apply', code, '--file', path, '--json']);
});

t.test('flags the file does not name: listed and kept; --prune deletes them', async (t) => {
  const path = file('code.json', kFile);
  const extra = await ok(t, dataDir, ['flag', 'create', code, '--name', 'extra', '--json']);
  const kept = await cli(dataDir, ['plan', code, '--file', path, '--json']);
  t.equal(kept.code, 0, 'a flag only in the project changes nothing: exit 0');
  t.match(kept.json, { changed: false, changes: [], notInFile: ['extra'] });
  const human = await cli(dataDir, ['plan', code, '--file', path], { json: false });
  t.match(human.stdout, /\nNot in the file, kept \(--prune deletes them\): extra\n$/);
  const applied = await ok(t, dataDir, ['apply', code, '--file', path, '--json']);
  t.match(applied, { changed: false, notInFile: ['extra'] });
  t.ok((await ok(t, dataDir, ['flag', 'show', extra.id, '--json'])).id, 'kept');

  const pruned = await cli(dataDir, ['plan', code, '--file', path, '--prune', '--json']);
  t.equal(pruned.code, 2);
  t.strictSame(pruned.json.changes, [{ op: 'delete', kind: 'flag', name: 'extra', fields: [], consoleOnly: true }]);
  t.strictSame(pruned.json.notInFile, []);
  const prunedText = await cli(dataDir, ['plan', code, '--file', path, '--prune'], { json: false });
  t.match(prunedText.stdout, /\n- flag extra {2}\(console only\)\n0 to create, 0 to change, 1 to delete\.\n$/);
  const deleted = await ok(t, dataDir, ['apply', code, '--file', path, '--prune', '--json']);
  t.match(deleted, { changed: true, notInFile: [] });
  const flags = (await ok(t, dataDir, ['flag', 'list', code, '--json'])).flags.map((f: { name: string }) => f.name).sort();
  t.strictSame(flags, ['button-colour', 'new-checkout']);
  t.match((await audit(code))[0], { action: 'flag.delete', flagId: extra.id, actor: 'console' });
  t.equal(await exportText(code), fileText(kFile));
});

t.test('--if-revision: a stale revision is refused and nothing is written; the current one applies', async (t) => {
  const changed = structuredClone(kFile);
  changed.flags['new-checkout'].environments.staging.trafficPercentage = 10;
  const path = file('code-3.json', changed);
  const planned = await cli(dataDir, ['plan', code, '--file', path, '--json']);
  t.equal(planned.code, 2);
  const stale = planned.json.revision as number;
  t.equal(stale, await revisionOf(code));
  // A token made since does not move the revision; a console edit of a flag does.
  await ok(t, dataDir, ['token', 'create', code, '--as', ids.owner, '--name', 'ci', '--permission', 'read', '--json']);
  t.equal((await cli(dataDir, ['plan', code, '--file', path, '--json'])).json.revision, stale, 'a token made: the same revision');
  const flagId = (await ok(t, dataDir, ['flag', 'list', code, '--json'])).flags.find(
    (f: { name: string }) => f.name === 'button-colour',
  ).id;
  await ok(t, dataDir, ['flag', 'tags', flagId, 'ui', '--json']);
  const current = await revisionOf(code);
  t.ok(current > stale, 'a console edit moves the revision');

  await expectRefused(t, dataDir, ['apply', code, '--file', path, '--if-revision', String(stale), '--json'], {
    error: 'Revision conflict',
    detail: new RegExp(
      `^The project changed since revision ${stale} \\(it is at revision ${current}\\); nothing was applied\\. Plan again, review the changes, and apply with --if-revision ${current}\\.$`,
    ),
  });
  const usage = await cli(dataDir, ['apply', code, '--file', path, '--if-revision', 'latest'], { json: false });
  t.equal(usage.code, 2, 'not a number: a usage error');
  t.match(usage.stderr, /--if-revision must be a revision number/);

  const applied = await ok(t, dataDir, ['apply', code, '--file', path, '--if-revision', String(current), '--json']);
  t.equal(applied.changed, true);
  t.strictSame(
    applied.changes.map((c: { name: string; fields: { path: string }[] }) => [c.name, c.fields.map((f) => f.path)]),
    [
      ['button-colour', ['tags']],
      ['new-checkout', ['environments.staging.trafficPercentage']],
    ],
    "the console's tag is put back as the file says",
  );
  t.ok(applied.revision > current);
  t.equal(await exportText(code), fileText(changed));
  await ok(t, dataDir, ['apply', code, '--file', file('code.json', kFile), '--if-revision', String(applied.revision), '--json']);
});

t.test('a saved plan (plan --out, apply --plan): applied as saved; refused once the project moved or the changes differ', async (t) => {
  const changed = structuredClone(kFile);
  changed.flags['new-checkout'].environments.staging.trafficPercentage = 30;
  const path = file('code-4.json', changed);
  const saved = join(files, 'plan-4.json');
  const planned = await cli(dataDir, ['plan', code, '--file', path, '--out', saved], { json: false });
  t.equal(planned.code, 2, 'a change: exit 2, as without --out');
  t.match(planned.stdout, /^~ flag new-checkout$/m, 'the plan is printed');
  const plan = JSON.parse(readFileSync(saved, 'utf8'));
  t.strictSame(plan, (await cli(dataDir, ['plan', code, '--file', path, '--json'])).json, 'the saved plan is what --json prints');

  // Another file, or prune, at the same revision: other changes than the saved plan's.
  const other = structuredClone(changed);
  other.flags['new-checkout'].environments.staging.trafficPercentage = 35;
  const before = await exportStore(dataDir);
  await expectRefused(t, dataDir, ['apply', code, '--file', file('code-4b.json', other), '--plan', saved, '--json'], {
    error: 'Plan changed',
    detail: new RegExp(
      `^The changes this file makes now are not those of the plan ${plan.digest} \\(they are the plan [0-9a-f]{64}: 1 change\\); nothing was applied\\.`,
    ),
  });
  t.strictSame(await exportStore(dataDir), before, 'nothing written');

  // A project that moved since the plan: refused, nothing written.
  const flagId = (await ok(t, dataDir, ['flag', 'list', code, '--json'])).flags.find(
    (f: { name: string }) => f.name === 'button-colour',
  ).id;
  await ok(t, dataDir, ['flag', 'tags', flagId, 'moved', '--json']);
  const moved = await exportStore(dataDir);
  await expectRefused(t, dataDir, ['apply', code, '--file', path, '--plan', saved, '--json'], {
    error: 'Revision conflict',
    detail: new RegExp(`^The project changed since revision ${plan.revision} `),
  });
  t.strictSame(await exportStore(dataDir), moved, 'nothing written');

  // Planned again and saved: applied as saved, the changes and digest the saved plan's.
  await cli(dataDir, ['plan', code, '--file', path, '--out', saved], { json: false });
  const fresh = JSON.parse(readFileSync(saved, 'utf8'));
  const applied = await ok(t, dataDir, ['apply', code, '--file', path, '--plan', saved, '--json']);
  t.strictSame(applied.changes, fresh.changes);
  t.equal(applied.digest, fresh.digest);
  t.equal(await exportText(code), fileText(changed));

  const usage = async (args: string[], message: RegExp) => {
    const r = await cli(dataDir, ['apply', code, '--file', path, ...args], { json: false });
    t.equal(r.code, 2, `${args.join(' ')}: a usage error`);
    t.match(r.stderr, message);
  };
  await usage(['--plan', saved, '--if-revision', '1'], /--plan already names the revision: leave out --if-revision/);
  await usage(['--plan', path], /--plan \S+ is not a saved plan \(.*digest is required/);
  await usage(['--plan', join(files, 'absent.json')], /cannot read --plan \S+absent\.json: ENOENT/);
  await usage(
    ['--plan', file('other-project.json', JSON.stringify({ ...fresh, projectId: ids.multi }))],
    new RegExp(`is a plan of project ${ids.multi}, not ${code}`),
  );
  const unwritable = await cli(dataDir, ['plan', code, '--file', path, '--out', join(files, 'no-dir', 'p.json')], { json: false });
  t.match(unwritable.stderr, /cannot write --out \S+p\.json: ENOENT/, 'an --out that cannot be written: a usage error');
  await ok(t, dataDir, ['apply', code, '--file', file('code.json', kFile), '--json']);
});

t.test('a refused file names the place in it, and nothing is written', async (t) => {
  const variant = (edit: (f: typeof kFile) => void) => {
    const f = structuredClone(kFile);
    edit(f);
    return f;
  };
  const percentage = variant((f) => {
    f.flags['new-checkout'].environments.production.trafficPercentage = 150;
  });
  const audience = variant((f) => {
    f.flags['new-checkout'].environments.staging.audience = 'gamma-testers' as unknown as null;
  });
  const mixed = variant((f) => {
    f.flags['button-colour'].environments.staging.variants = { red: '#f00', blue: 7 } as unknown as typeof kColours;
  });
  const missingEnv = variant((f) => {
    f.environments = ['staging'];
    for (const flag of Object.values(f.flags)) delete (flag.environments as Record<string, unknown>).production;
  });
  const caseOnly = variant((f) => {
    (f.audiences as Record<string, unknown>) = { 'Beta-Testers': { rules: kBeta } };
    f.flags['new-checkout'].environments.production.audience = 'Beta-Testers';
  });
  // A good change beside the bad one: neither is written.
  const oneBad = variant((f) => {
    f.flags['new-checkout'].environments.staging.trafficPercentage = 5;
    (f.flags as Record<string, unknown>).zzz = { environments: { staging: { enabled: true, trafficPercentage: 100, cohorts: [''] } } };
  });
  const flagd = {
    $schema: 'https://flagd.dev/schema/v0/flags.json',
    flags: { x: { state: 'ENABLED', variants: { on: true }, defaultVariant: 'on' } },
  };
  const refused = /^The file cannot be applied, nothing changed: /;
  const cases: [string, unknown, RegExp][] = [
    [
      'percentage',
      percentage,
      /flags\.new-checkout\.environments\.production\.trafficPercentage must be a whole number between 0 and 100$/,
    ],
    [
      'audience',
      audience,
      /flags\.new-checkout\.environments\.staging\.audience: there is no audience "gamma-testers" in the project or the file$/,
    ],
    ['mixed', mixed, /flags\.button-colour\.environments\.staging\.variants\.blue: a number, but variant "red" is a string/],
    ['missing-env', missingEnv, /environments: the project has "production", which the file does not list; environments are never removed/],
    ['case', caseOnly, /audiences\.Beta-Testers: the project has the audience "beta-testers" \(names are compared without case\)/],
    ['one-bad', oneBad, /flags\.zzz\.environments\.staging\.cohorts\[0\] must be a non-empty string/],
    ['flagd', flagd, /this looks like a flagd flag-definition file: import it with `flagwire flags import`/],
    [
      'single',
      { flagwire: 1, kind: 'single', flags: {} },
      /the file describes a single-environment project \("kind": "single"\), and this is a multi-environment project/,
    ],
    ['version', { ...kFile, flagwire: 2 }, /flagwire must be 1/],
    ['text', '{"flagwire": 1,', /the file is not valid JSON/],
  ];
  const before = await exportText(code);
  await expectAllRefused(
    t,
    dataDir,
    cases.flatMap(([name, document, detail]) => {
      const path = file(`refused-${name}.json`, document);
      return (['plan', 'apply'] as const).map(
        (command) =>
          [
            [command, code, '--file', path, '--json'],
            { error: 'Invalid request', detail: new RegExp(refused.source + detail.source) },
          ] as const,
      );
    }),
  );
  t.equal(await exportText(code), before);
  const absent = await cli(dataDir, ['apply', code, '--file', join(files, 'absent.json')], { json: false });
  t.equal(absent.code, 2, 'a file that cannot be read: a usage error');
  t.match(absent.stderr, /cannot read --file .*absent\.json: ENOENT/);
});

t.test('--as: audited as the user; a Viewer is refused, and an Editor cannot define audiences', async (t) => {
  const changed = structuredClone(kFile);
  changed.flags['new-checkout'].environments.production.enabled = false;
  changed.flags['new-checkout'].tags = ['checkout', 'q3'];
  const path = file('code-as.json', changed);
  const before = await audit(code);
  const applied = await ok(t, dataDir, ['apply', code, '--file', path, '--as', ids.editor, '--json']);
  t.equal(applied.changed, true);
  const added = (await audit(code)).slice(0, 2);
  t.strictSame(
    added.map((e) => [e.action, e.actor]),
    [
      ['flag.patch', `user:${ids.editor}`],
      ['flag.tags', `user:${ids.editor}`],
    ],
  );
  t.equal((await audit(code)).length, before.length + 2);

  const withAudience = structuredClone(kFile) as typeof kFile & { audiences: Record<string, unknown> };
  withAudience.audiences.staff = { rules: [{ attribute: 'email', values: ['a@b.test'] }] };
  await expectAllRefused(t, dataDir, [
    [
      ['apply', code, '--file', file('code.json', kFile), '--as', ids.viewer, '--json'],
      { error: 'Forbidden', detail: /^Changing flags needs the Editor, Admin or Owner role in organisation .*; user .* is viewer\.$/ },
    ],
    [
      ['apply', code, '--file', file('code-audience.json', withAudience), '--as', ids.editor, '--json'],
      { error: 'Forbidden', detail: /^Changing environments and audiences needs the Admin or Owner role/ },
    ],
    [['apply', code, '--file', file('code.json', kFile), '--as', 'usr_nobody', '--json'], { error: 'Not found' }],
  ]);
  const count = (await audit(code)).length;
  const back = await ok(t, dataDir, ['apply', code, '--file', file('code-audience.json', withAudience), '--as', ids.admin, '--json']);
  t.match(back, { changed: true });
  const byAdmin = await audit(code);
  t.strictSame(
    byAdmin.slice(0, byAdmin.length - count).map((e) => [e.action, e.actor]),
    [
      ['flag.patch', `user:${ids.admin}`],
      ['flag.tags', `user:${ids.admin}`],
      ['audience.create', `user:${ids.admin}`],
    ],
    'an Admin may: the audience first, then the flag',
  );
});

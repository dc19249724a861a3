// `flagwire flags import` (issue 25, item 3), run as users run it: a flagd file creates and updates
// flags by key in one transaction, audited; importing it again changes nothing; a bad file is refused
// naming the flag and the place in it, and not one byte of the store changes, flags before it included.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { cli, expectAllRefused, inStore, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
const { ids } = world;
await world.store.close();
const files = tempDir(t, 'flagwire-import-');

function file(name: string, document: unknown): string {
  const path = join(files, name);
  writeFileSync(path, typeof document === 'string' ? document : JSON.stringify(document, null, 2));
  return path;
}

const kDocument = {
  $schema: 'https://flagd.dev/schema/v0/flags.json',
  flags: {
    'welcome-banner': {
      state: 'ENABLED',
      variants: { on: true, off: false },
      defaultVariant: 'off',
      targeting: { if: [{ $ref: 'is-staff' }, 'on', null] },
      metadata: { version: 2 },
    },
    'checkout-colour': {
      state: 'DISABLED',
      variants: { red: '#f00', blue: '#00f' },
      defaultVariant: 'red',
      targeting: {
        fractional: [
          ['red', 50],
          ['blue', 50],
        ],
      },
    },
  },
  $evaluators: { 'is-staff': { ends_with: [{ var: 'email' }, '@example.com'] } },
  metadata: { team: 'growth', version: 1 },
};

const audit = async (project = ids.single) => (await ok(t, dataDir, ['audit', project, '--json'])).entries;

t.test(
  "a file creates its flags by key, with state, variants and rule ($ref kept), at 100%, and its $evaluators as the project's shared fragments",
  async (t) => {
    const before = (await audit()).length;
    const result = await ok(t, dataDir, ['flags', 'import', ids.single, '--file', file('flags.json', kDocument), '--json']);
    t.same(
      result.flags.map((f: { key: string; outcome: string }) => [f.key, f.outcome]),
      [
        ['welcome-banner', 'created'],
        ['checkout-colour', 'created'],
      ],
    );
    t.same(result.fragments, [{ name: 'is-staff', outcome: 'created' }], 'the evaluator is made a shared fragment');
    const fragments = await ok(t, dataDir, ['fragment', 'list', ids.single, '--json']);
    t.match(fragments.fragments, [{ name: 'is-staff', rule: { ends_with: [{ var: 'email' }, '@example.com'] } }]);
    const banner = await ok(t, dataDir, ['flag', 'show', result.flags[0].id, '--json']);
    t.match(banner, {
      name: 'welcome-banner',
      enabled: true,
      trafficPercentage: 100,
      cohorts: [],
      audienceId: null,
      variants: { on: true, off: false },
      defaultVariant: 'off',
      targeting: { if: [{ $ref: 'is-staff' }, 'on', null] },
      metadata: { team: 'growth', version: 2 },
    });
    const colour = await ok(t, dataDir, ['flag', 'show', result.flags[1].id, '--json']);
    t.same([colour.enabled, colour.variants], [false, { red: '#f00', blue: '#00f' }], 'DISABLED is enabled: false');
    const entries = await audit();
    t.equal(entries.length, before + 3, 'one audit entry per fragment and flag created');
    t.same(
      entries.slice(0, 3).map((e: { action: string; actor: string }) => [e.action, e.actor]),
      [
        ['flag.create', 'console'],
        ['flag.create', 'console'],
        ['fragment.create', 'console'],
      ],
    );
  },
);

t.test('importing the same file again changes nothing and writes no audit entry', async (t) => {
  const before = await audit();
  const result = await ok(t, dataDir, ['flags', 'import', ids.single, '--file', file('flags.json', kDocument), '--json']);
  t.same(
    result.flags.map((f: { outcome: string }) => f.outcome),
    ['unchanged', 'unchanged'],
  );
  t.same(result.fragments, [{ name: 'is-staff', outcome: 'unchanged' }]);
  t.same(await audit(), before);
});

t.test("a changed file updates by key, audited as the user named, keeping Flagwire's own gate", async (t) => {
  const [, colour] = (await ok(t, dataDir, ['flags', 'import', ids.single, '--file', file('flags.json', kDocument), '--json'])).flags;
  // The percentage and cohorts are Flagwire's; the file cannot express them, so an update keeps them.
  await inStore(dataDir, (run) =>
    run('flagPatch', {
      flagId: colour.id,
      env: null,
      principal: kOperator,
      patch: { trafficPercentage: 30, cohorts: ['qa'] },
    }),
  );
  const changed = structuredClone(kDocument) as typeof kDocument;
  changed.flags['checkout-colour'].state = 'ENABLED';
  changed.flags['checkout-colour'].variants.blue = '#0000ff';
  const result = await ok(t, dataDir, [
    'flags',
    'import',
    ids.single,
    '--file',
    file('changed.json', changed),
    '--as',
    ids.editor,
    '--json',
  ]);
  t.same(
    result.flags.map((f: { outcome: string }) => f.outcome),
    ['unchanged', 'updated'],
  );
  const [entry] = await audit();
  t.match(entry, {
    action: 'flag.patch',
    actor: `user:${ids.editor}`,
    flagId: colour.id,
    changes: {
      enabled: { before: false, after: true },
      variants: { before: { red: '#f00', blue: '#00f' }, after: { red: '#f00', blue: '#0000ff' } },
    },
  });
  const shown = await ok(t, dataDir, ['flag', 'show', colour.id, '--json']);
  t.same([shown.trafficPercentage, shown.cohorts], [30, ['qa']]);
});

t.test('a multi-environment project: --env names the environment the file sets; the others stay as they are', async (t) => {
  const result = await ok(t, dataDir, [
    'flags',
    'import',
    ids.multi,
    '--env',
    'staging',
    '--file',
    file('flags.json', kDocument),
    '--json',
  ]);
  const flag = await ok(t, dataDir, ['flag', 'show', result.flags[0].id, '--json']);
  t.match(flag.environments.staging, { enabled: true, trafficPercentage: 100, variants: { on: true, off: false }, defaultVariant: 'off' });
  t.match(flag.environments.production, { enabled: false, trafficPercentage: 0 });
  t.notOk('variants' in flag.environments.production, 'production is still a boolean flag');
});

t.test('a bad file is refused naming the flag and the place, and nothing changes', async (t) => {
  const broken = structuredClone(kDocument) as Record<string, any>;
  broken.flags['welcome-banner'].targeting = { if: [{ starts_wit: [{ var: 'email' }, 'a'] }, 'on', null] };
  const mixed = structuredClone(kDocument) as Record<string, any>;
  mixed.flags['checkout-colour'].variants.green = 7;
  // The first flag is valid and new; the second passes flagd's rules but is no valid Flagwire flag name:
  // refused whole, the first one is not created either.
  const lateFailure = {
    flags: {
      'brand-new-flag': { state: 'ENABLED', variants: { a: 'A' }, defaultVariant: 'a' },
      ['n'.repeat(500)]: { state: 'ENABLED', variants: { a: 'A' }, defaultVariant: 'a' },
    },
  };
  await expectAllRefused(t, dataDir, [
    [
      ['flags', 'import', ids.single, '--file', file('broken.json', broken), '--json'],
      {
        error: 'Invalid request',
        detail: /^The file was not imported, nothing changed: flags\.welcome-banner\.targeting\.if\[0\]: unknown operator "starts_wit"/,
      },
    ],
    [
      ['flags', 'import', ids.single, '--file', file('mixed.json', mixed), '--json'],
      { error: 'Invalid request', detail: /flags\.checkout-colour\.variants\.green: a number, but variant "red" is a string/ },
    ],
    [
      ['flags', 'import', ids.single, '--file', file('late.json', lateFailure), '--json'],
      { error: 'Invalid request', detail: /flags\.n{500}: .*name/ },
    ],
    [
      ['flags', 'import', ids.single, '--file', file('text.json', '{"flags": '), '--json'],
      { error: 'Invalid request', detail: /not valid JSON/ },
    ],
    [
      ['flags', 'import', ids.multi, '--file', file('flags.json', kDocument), '--json'],
      {
        error: 'Invalid request',
        detail:
          /^This project is a multi-environment project: name the environment the file sets with --env \(valid environments: staging, production\)\.$/,
      },
    ],
    [
      ['flags', 'import', ids.multi, '--env', 'qa', '--file', file('flags.json', kDocument), '--json'],
      { error: 'Invalid request', detail: /^Unknown environment "qa"; valid environments: staging, production\.$/ },
    ],
    [
      ['flags', 'import', ids.single, '--env', 'staging', '--file', file('flags.json', kDocument), '--json'],
      { error: 'Invalid request', detail: /single-environment project, which has no environments; drop --env\.$/ },
    ],
    [['flags', 'import', ids.single, '--file', file('flags.json', kDocument), '--as', ids.viewer, '--json'], { error: 'Forbidden' }],
  ]);
});

t.test('a file that cannot be read is a usage error (exit 2) naming it', async (t) => {
  const r = await cli(dataDir, ['flags', 'import', ids.single, '--file', join(files, 'absent.json')]);
  t.equal(r.code, 2);
  t.match(r.stderr, /cannot read --file .*absent\.json: ENOENT/);
});

t.test('flag variants: sets variants, default and rule with the API rules, shows them, and refuses what the API refuses', async (t) => {
  const created = await ok(t, dataDir, ['flags', 'import', ids.single, '--file', file('flags.json', kDocument), '--json']);
  const id = created.flags[1].id;
  const set = await ok(t, dataDir, [
    'flag',
    'variants',
    id,
    '--variants',
    '{"small": 1, "large": 100}',
    '--default-variant',
    'small',
    '--targeting',
    '{"if": [{"in": [{"var": "plan"}, ["pro"]]}, "large", null]}',
    '--json',
  ]);
  t.equal(set.changed, true);
  t.match(set.flag, {
    variants: { small: 1, large: 100 },
    defaultVariant: 'small',
    targeting: { if: [{ in: [{ var: 'plan' }, ['pro']] }, 'large', null] },
  });
  const shown = await cli(dataDir, ['flag', 'show', id], { json: false });
  t.match(shown.stdout, /variants: \{"small":1,"large":100\}, default: small, rule: \{"if":/);
  const meta = await ok(t, dataDir, ['flag', 'variants', id, '--metadata', '{"owner": "growth"}', '--json']);
  t.same(meta.flag.metadata, { owner: 'growth' }, '--metadata replaces the metadata');
  const none = await ok(t, dataDir, ['flag', 'variants', id, '--default-variant', '', '--json']);
  t.equal(none.flag.defaultVariant, null, '"" is no default variant');
  await expectAllRefused(t, dataDir, [
    [
      ['flag', 'variants', id, '--targeting', '{"if": [{"var": "plan"}, "huge", null]', '--json'],
      { code: 2, error: 'Invalid request', detail: /--targeting must be JSON/ },
    ],
    [
      ['flag', 'variants', id, '--targeting', '{"bogus": []}', '--json'],
      { error: 'Invalid request', detail: /"targeting": unknown operator "bogus"/ },
    ],
    [
      ['flag', 'variants', id, '--default-variant', 'medium', '--json'],
      { error: 'Invalid request', detail: /default variant "medium" is not one of the variants/ },
    ],
  ]);
});

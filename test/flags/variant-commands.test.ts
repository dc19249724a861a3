// Typed variants (issue 25) through the writer's own command functions, in process: create and patch
// carry variants, defaultVariant and targeting (per environment on a group flag), refusals name the
// place and change nothing, the audit has before and after, and a flag without variants is stored and
// shown exactly as before.
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { FlagwireError } from '../../src/errors.js';
import type { Flag } from '../../src/model/flags.js';
import { representFlag } from '../../src/flags/representation.js';
import type { FlagCreate, FlagPatch } from '../../src/model/schemas.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { kEnvironmentEntryKeys, kFlatFlagKeys } from '../helpers/flag-keys.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { getProject } from '../../src/model/records/project-records.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());

const kColours = { red: '#f00', green: '#0f0', blue: '#00f' };
const kRule = { if: [{ '==': [{ var: 'plan' }, 'beta'] }, 'green', null] };

const create = (projectId: string, body: FlagCreate) => world.run('flagCreate', { projectId, body, principal: kOperator });
const patch = (flag: Flag, body: FlagPatch | Record<string, unknown>, env: string | null = null) =>
  world.run('flagPatch', { flagId: flag.id, env, principal: kOperator, patch: body });
const stored = (id: string) => {
  world.store.resetReadTxn();
  return getFlag(world.store, id)!;
};
const lastAudit = (projectId: string) => {
  world.store.resetReadTxn();
  return world.store.listAudit(projectId, { limit: 1, before: null })[0]!;
};
const shown = (flag: Flag, env: string | null = null) =>
  JSON.parse(JSON.stringify(representFlag(flag, getProject(world.store, flag.projectId)!, env, undefined)));

/** The detail of a refused command, after checking that nothing was written. */
function refusal(t: Test, run: () => unknown): string {
  const before = world.snapshot();
  let detail = '';
  t.throws(() => {
    try {
      run();
    } catch (err) {
      detail = (err as FlagwireError).detail;
      t.equal((err as FlagwireError).code, 'INVALID_REQUEST');
      throw err;
    }
  });
  t.equal(world.snapshot(), before, 'nothing changed');
  return detail;
}

t.test('a single flag created with variants: stored as sent, shown with the three fields', async (t) => {
  const flag = create(world.ids.single, { name: 'colour', variants: kColours, defaultVariant: 'red', targeting: kRule, enabled: true });
  const record = stored(flag.id);
  t.strictSame(record.kind === 'flag' && record.state, {
    enabled: true,
    trafficPercentage: 0,
    audienceId: null,
    typed: { variants: kColours, defaultVariant: 'red', targeting: kRule },
  });
  t.match(shown(flag), { variants: kColours, defaultVariant: 'red', targeting: kRule, enabled: true, cohorts: [] });
  const bare = create(world.ids.single, { name: 'numbers', variants: { one: 1, two: 2 } });
  t.match(shown(bare), { variants: { one: 1, two: 2 }, defaultVariant: null, targeting: {} }, 'defaults: no default variant, no rule');
});

t.test('a flag without variants is stored and shown with exactly the keys it had before', async (t) => {
  const flag = create(world.ids.single, { name: 'plain', enabled: true, trafficPercentage: 20 });
  const record = stored(flag.id);
  t.strictSame(Object.keys(record.kind === 'flag' ? record.state : {}), ['enabled', 'trafficPercentage', 'audienceId']);
  t.strictSame(Object.keys(shown(flag)), kFlatFlagKeys);
  const group = create(world.ids.multi, { name: 'plain-group', environments: { staging: { enabled: true } } });
  t.strictSame(Object.keys(shown(group).environments.staging), kEnvironmentEntryKeys);
  const g = stored(group.id);
  t.strictSame(g.kind === 'groupflag' && Object.keys(g.environments.staging!), ['enabled', 'trafficPercentage', 'audienceId', 'cohorts']);
  // A patch of the spec's keys leaves it without the key too.
  const patched = patch(flag, { trafficPercentage: 30 }).flag;
  t.notOk('typed' in (patched.kind === 'flag' ? patched.state : {}));
});

t.test('a group flag holds variants per environment', async (t) => {
  const flag = create(world.ids.multi, {
    name: 'g-colour',
    environments: { staging: { enabled: true, variants: kColours, defaultVariant: 'blue', targeting: kRule }, production: {} },
  });
  const record = stored(flag.id);
  t.ok(record.kind === 'groupflag' && record.environments.staging!.typed !== undefined);
  t.notOk(record.kind === 'groupflag' && 'typed' in record.environments.production!, 'an environment without variants has no key');
  const envs = shown(flag).environments;
  t.match(envs.staging, { variants: kColours, defaultVariant: 'blue', targeting: kRule });
  t.notOk('variants' in envs.production);
  t.match(shown(flag, 'staging'), { environment: 'staging', variants: kColours, defaultVariant: 'blue' });
  t.notOk('variants' in shown(flag, 'production'));

  const out = patch(flag, { variants: { small: 1, large: 100 }, defaultVariant: 'small' }, 'production');
  t.equal(out.changed, true);
  t.match(shown(out.flag).environments, { production: { variants: { small: 1, large: 100 }, defaultVariant: 'small', targeting: {} } });
  t.match(shown(out.flag).environments.staging, { variants: kColours }, 'the other environment keeps its own');
  t.match(lastAudit(world.ids.multi), { action: 'flag.patch', env: 'production', flagId: flag.id });
});

t.test('patch: each key replaces, absent keys stay, the audit has before and after', async (t) => {
  const flag = create(world.ids.single, { name: 'p-colour', variants: kColours, defaultVariant: 'red' });
  const ruled = patch(flag, { targeting: kRule });
  t.equal(ruled.changed, true);
  t.match(shown(ruled.flag), { variants: kColours, defaultVariant: 'red', targeting: kRule });
  t.strictSame(lastAudit(world.ids.single).changes, { targeting: { before: {}, after: kRule } });

  const retyped = patch(ruled.flag, { variants: { green: 'G' }, defaultVariant: 'green' });
  t.strictSame(lastAudit(world.ids.single).changes, {
    variants: { before: kColours, after: { green: 'G' } },
    defaultVariant: { before: 'red', after: 'green' },
  });
  t.ok(retyped.flag.updatedAt > ruled.flag.updatedAt);

  const none = patch(retyped.flag, { defaultVariant: null });
  t.match(shown(none.flag), { defaultVariant: null });
  t.strictSame(lastAudit(world.ids.single).changes, { defaultVariant: { before: 'green', after: null } });
});

t.test('patch: the same variants, default and rule again is changed: false, nothing written', async (t) => {
  const flag = create(world.ids.single, { name: 'noop', variants: kColours, defaultVariant: 'red', targeting: kRule });
  const before = world.snapshot();
  // The same values, keys in another order: JSON objects carry no order.
  const reordered = { blue: '#00f', green: '#0f0', red: '#f00' };
  const out = patch(flag, { variants: reordered, defaultVariant: 'red', targeting: kRule, enabled: false });
  t.equal(out.changed, false);
  t.equal(world.snapshot(), before);
});

t.test('patch: variants {} makes it a boolean flag again, exactly as one never given variants', async (t) => {
  const flag = create(world.ids.single, { name: 'back', variants: kColours, defaultVariant: 'red' });
  const out = patch(flag, { variants: {} });
  t.equal(out.changed, true);
  const record = stored(flag.id);
  t.strictSame(record.kind === 'flag' && record.state, { enabled: false, trafficPercentage: 0, audienceId: null });
  t.notOk('variants' in shown(out.flag));
  t.strictSame(lastAudit(world.ids.single).changes, {
    variants: { before: kColours, after: null },
    defaultVariant: { before: 'red', after: null },
    targeting: { before: {}, after: null },
  });
  t.equal(patch(out.flag, { variants: {} }).changed, false, 'again: nothing to change');
});

t.test('refusals name the field and the place, and change nothing', async (t) => {
  const flag = create(world.ids.single, { name: 'r-colour', variants: kColours, defaultVariant: 'red' });
  t.equal(
    refusal(t, () => patch(flag, { targeting: { if: [{ foo: [1] }, 'red'] } })),
    '"targeting.if[0]": unknown operator "foo"',
  );
  t.equal(
    refusal(t, () => patch(flag, { variants: { a: 1, b: 'two' } })),
    '"variants.b": a string, but variant "a" is a number: a flag\'s variants are all of one type; "defaultVariant": default variant "red" is not one of the variants ("a", "b")',
    'every problem of the variants the patch leaves, the stored default variant included',
  );
  t.equal(
    refusal(t, () => patch(flag, { variants: { on: true, off: false } })),
    '"defaultVariant": default variant "red" is not one of the variants ("on", "off")',
    'a new set of variants must keep the stored default variant, or name another',
  );
  t.equal(
    refusal(t, () => patch(flag, { defaultVariant: 7 })),
    '"defaultVariant" must be a variant name (string) or null',
  );
  t.equal(
    refusal(t, () => patch(flag, { targeting: null })),
    '"targeting" cannot be null',
  );
  t.equal(
    refusal(t, () => patch(flag, { variants: { x: [1] } })),
    '"variants.x" must be a boolean, a string, a number or a JSON object',
  );
  const plain = create(world.ids.single, { name: 'r-plain' });
  t.equal(
    refusal(t, () => patch(plain, { defaultVariant: 'on', enabled: true })),
    '"defaultVariant": this flag has no variants: send "variants" with it, or drop it',
  );
  t.equal(
    refusal(t, () => create(world.ids.single, { name: 'r-new', variants: { a: 'A' }, targeting: { in: ['x'] } })),
    'targeting.in: in takes 2 arguments, got 1',
  );
  const multi = refusal(t, () =>
    create(world.ids.multi, {
      name: 'r-group',
      environments: { staging: { variants: { a: 'A' }, defaultVariant: 'b' }, production: { targeting: { var: 'x' } } },
    }),
  );
  t.equal(
    multi,
    'environments.staging.defaultVariant: default variant "b" is not one of the variants ("a"); environments.production.targeting: this flag has no variants: send "variants" with it, or drop it',
  );
  const flat = refusal(t, () => create(world.ids.multi, { name: 'r-flat', variants: { a: 'A' } }));
  t.match(flat, /multi-environment project: move variants under "environments"/);
});

t.test('refusals of what the store cannot keep as sent: depth, __proto__, infinite numbers', async (t) => {
  const flag = create(world.ids.single, { name: 's-colour', variants: kColours });
  let deep: unknown = 'red';
  for (let i = 0; i < 100_000; i++) deep = { if: [true, deep, null] };
  t.match(
    refusal(t, () => patch(flag, { targeting: deep as Record<string, unknown> })),
    /^"targeting": nests deeper than 64 levels$/,
  );
  t.match(
    refusal(t, () => patch(flag, { variants: JSON.parse('{"__proto__": "x", "a": "y"}') })),
    '"variants": has the key "__proto__", which cannot be stored',
  );
  t.match(
    refusal(t, () => patch(flag, { variants: { a: { n: JSON.parse('1e400') } } })),
    '"variants.a.n": is not a finite number',
  );
});

t.test("refusals of the metadata key Flagwire's flagd export writes: flagwireExposureMarker", async (t) => {
  const why = "is Flagwire's own: its flagd export names a flag's exposure variants with it, so a flag's metadata cannot hold it";
  // A patch's problems quote their path, a create's do not (as the other refusals above).
  const reserved = `"metadata.flagwireExposureMarker": ${why}`;
  const flag = create(world.ids.single, { name: 'm-colour', variants: kColours, metadata: { team: 'web' } });
  t.equal(
    refusal(t, () => patch(flag, { metadata: { team: 'web', flagwireExposureMarker: '~' } })),
    reserved,
    'on a patch',
  );
  t.equal(
    refusal(t, () => create(world.ids.single, { name: 'm-new', variants: kColours, metadata: { flagwireExposureMarker: '~' } })),
    `metadata.flagwireExposureMarker: ${why}`,
    'on a create',
  );
  t.equal(
    refusal(t, () =>
      create(world.ids.multi, {
        name: 'm-group',
        environments: { staging: { variants: kColours, metadata: { flagwireExposureMarker: '~1' } } },
      }),
    ),
    `environments.staging.metadata.flagwireExposureMarker: ${why}`,
    'per environment, with its place',
  );
  const after = stored(flag.id);
  t.same(after.kind === 'flag' ? after.state.typed?.metadata : null, { team: 'web' }, 'the stored metadata is as it was');
});

// A shared fragment's cost does not multiply with the flags that name it (issue 55, item 1), in process:
// what a project's references add to its flags' rules is counted against the documented limit (1 MiB,
// docs/operations.md: Rules: resolved size) and a write past it (a flag create, a flag PATCH, a fragment
// change) refused in PATCH's words with nothing changed, while a write that adds nothing passes; and the
// engine resolves and compiles a fragment once per store revision for every flag that names it (counted
// by the compiler's count of shared sub-rules, and seen as the one object in every flag's rule), and
// answers as the fragment says.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { Clock } from '../../src/clock.js';
import { EvalEngine, type FlagEntry } from '../../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../../src/evaluation/engine/protocol.js';
import { kFragmentRecords } from '../../src/flags/records/fragment-records.js';
import { jsonBody } from '../../src/model/request-body.js';
import { sharedRuleCompiles } from '../../src/targeting/compile-rule.js';
import { kMaxAddedRuleBytes } from '../../src/targeting/refs.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld, type World } from '../helpers/world.js';
import { findFlagByName } from '../../src/flags/records/flag-store.js';

/** A fragment of `items` plan names: about 11 bytes each as compact JSON. */
const plans = (items: number, prefix = 'plan') => ({
  in: [{ var: 'plan' }, Array.from({ length: items }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`)],
});
const bytes = (rule: unknown) => Buffer.byteLength(JSON.stringify(rule));
const mib = (n: number) => `${n} bytes (${(n / 1048576).toFixed(1)} MiB)`;
/** What one `{"$ref": "big"}` adds resolved: the fragment less the reference's `{"$ref":"big"}`. */
const addedByOne = (rule: unknown) => bytes(rule) - bytes({ $ref: 'big' });
const typed = (targeting: unknown) => ({ variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting });
const kUsesBig = typed({ if: [{ $ref: 'big' }, 'a', 'b'] });

function fragment(world: World, projectId: string, name: string, rule: unknown, update = false) {
  return update
    ? world.run('fragmentUpdate', { principal: kOperator, projectId, name, received: jsonBody(JSON.stringify({ rule })) })
    : world.run('fragmentCreate', { principal: kOperator, projectId, received: jsonBody(JSON.stringify({ name, rule })) });
}

/** Every record a refused write could change, fragments included, read fresh. */
const state = (world: World) => world.snapshot() + JSON.stringify(world.store.listKeyed(kFragmentRecords));

t.test("the project's references counted against the limit: each write past it refused in PATCH's words, nothing changed", async (t) => {
  const world = buildWorld(tempDataDir());
  t.teardown(() => world.store.close());
  const { ids } = world;
  const big = plans(9000); // about 117 KB
  fragment(world, ids.single, 'big', big);
  // As many flags naming it as the limit allows, then one more.
  const fit = Math.floor(kMaxAddedRuleBytes / addedByOne(big));
  t.ok(fit >= 5 && fit < 20, `${fit} flags fit`);
  for (let i = 0; i < fit; i++)
    world.run('flagCreate', { principal: kOperator, projectId: ids.single, body: { name: `uses-${i}`, ...kUsesBig } });
  const total = fit * addedByOne(big);

  const before = state(world);
  const create = refusedCommand(t, world, 'INVALID_REQUEST', () =>
    world.run('flagCreate', { principal: kOperator, projectId: ids.single, body: { name: 'one-more', ...kUsesBig } }),
  );
  t.equal(
    create,
    `targeting: its $refs add ${mib(addedByOne(big))} to it, and the project's references would add ${mib(total + addedByOne(big))} to its flags' rules in all (each use of a shared fragment counts its size); they may add at most 1048576 bytes (1 MiB)`,
  );

  // A PATCH that adds a reference to a flag that had none: the PATCH's path, from the state.
  const patch = refusedCommand(t, world, 'INVALID_REQUEST', () =>
    world.run('flagPatch', { principal: kOperator, flagId: ids.flag, env: null, patch: kUsesBig }),
  );
  t.match(
    patch,
    /^"targeting": its \$refs add \d+ bytes \(0\.1 MiB\) to it, and the project's references would add \d+ bytes .* at most 1048576 bytes \(1 MiB\)$/,
  );

  // The fragment grown: every use counts its new size.
  const grown = refusedCommand(t, world, 'INVALID_REQUEST', () => fragment(world, ids.single, 'big', plans(10500), true));
  t.match(
    grown,
    /^used by flag "uses-0", flag "uses-1", .*: with this rule the project's references would add \d+ bytes .* at most 1048576 bytes/,
  );
  t.equal(state(world), before, 'nothing changed by the three refusals');

  // A write that adds nothing passes, and so does one that takes references away.
  const first = findFlagByName(world.store, ids.single, 'uses-0')!;
  t.match(world.run('flagPatch', { principal: kOperator, flagId: first.id, env: null, patch: { trafficPercentage: 50 } }), {
    changed: true,
  });
  fragment(world, ids.single, 'big', plans(8000), true);
  world.run('flagPatch', { principal: kOperator, flagId: first.id, env: null, patch: { targeting: {} } });
  world.run('flagCreate', { principal: kOperator, projectId: ids.single, body: { name: 'one-more', ...kUsesBig } });
  t.pass('within the limit again once a use is gone');
});

t.test("a group flag's environments each count, and another project's references are its own", async (t) => {
  const world = buildWorld(tempDataDir());
  t.teardown(() => world.store.close());
  const { ids } = world;
  const big = plans(25000); // about 325 KB: three uses fit, four do not
  fragment(world, ids.multi, 'big', big);
  fragment(world, ids.single, 'big', big);
  world.run('flagPatch', { principal: kOperator, flagId: ids.groupFlag, env: 'staging', patch: kUsesBig });
  world.run('flagPatch', { principal: kOperator, flagId: ids.groupFlag, env: 'production', patch: kUsesBig });
  // The single project's three uses are not the multi project's.
  for (let i = 0; i < 3; i++)
    world.run('flagCreate', { principal: kOperator, projectId: ids.single, body: { name: `s-${i}`, ...kUsesBig } });
  world.run('flagCreate', {
    principal: kOperator,
    projectId: ids.multi,
    body: { name: 'third', environments: { staging: kUsesBig } },
  });
  const refused = refusedCommand(t, world, 'INVALID_REQUEST', () =>
    world.run('flagCreate', {
      principal: kOperator,
      projectId: ids.multi,
      body: { name: 'fourth', environments: { production: kUsesBig } },
    }),
  );
  t.match(
    refused,
    /^environments\.production\.targeting: its \$refs add \d+ bytes \(0\.\d MiB\) to it, and the project's references would add/,
  );
});

/** An engine over the world's store, and a project evaluation's answers, as a worker answers a batch of one. */
function engineOf(world: World) {
  const clock = Clock.create();
  const engine = new EvalEngine(world.store, () => clock.now());
  const evaluateProject = (projectId: string, query: string) => {
    engine.beginBatch();
    const out = new ResultWriter(new ArrayBuffer(16), 1);
    engine.evaluateProject(projectId, query, out);
    const reader = new ResultReader(out.finish());
    return { status: reader.status(0), body: JSON.parse(reader.bodyText(0)) as { variant?: string }[] };
  };
  return { engine, evaluateProject };
}

t.test('the engine resolves and compiles a fragment once per store revision, for all the flags that name it', async (t) => {
  const world = buildWorld(tempDataDir());
  t.teardown(() => world.store.close());
  const { ids } = world;
  const rule = plans(2000, 'pro'); // 22 KB: 20 uses add about 440 KB
  fragment(world, ids.single, 'big', rule);
  for (let i = 0; i < 20; i++)
    world.run('flagCreate', {
      principal: kOperator,
      projectId: ids.single,
      // Two flags name it twice: a rule's second use is compiled anew, as before (SharedRules says why).
      body: {
        name: `uses-${i}`,
        enabled: true,
        trafficPercentage: 100,
        ...typed({ if: [i < 2 ? { and: [{ $ref: 'big' }, { $ref: 'big' }] } : { $ref: 'big' }, 'a', 'b'] }),
      },
    });
  const { engine, evaluateProject } = engineOf(world);

  const compiles = sharedRuleCompiles();
  const pro = evaluateProject(ids.single, 'targetingKey=u1&plan=pro-01999');
  t.equal(pro.status, 200);
  const answers = pro.body.filter((_, i) => i >= pro.body.length - 20);
  t.same(
    answers.map((a) => a.variant),
    Array(20).fill('a'),
    'every flag answers as the fragment says',
  );
  t.equal(sharedRuleCompiles() - compiles, 1, 'the fragment compiled once for the 20 flags');
  const free = evaluateProject(ids.single, 'targetingKey=u1&plan=free');
  t.same(
    free.body.slice(-20).map((a) => a.variant),
    Array(20).fill('b'),
  );
  t.equal(sharedRuleCompiles() - compiles, 1, 'and not again while the store does not move');

  // One object in every flag's rule resolved: the fragment resolved once, never copied per flag.
  const flagEntries = ['uses-3', 'uses-4', 'uses-19'].map((name) => engine.lookupFlagByName(ids.single, name) as FlagEntry);
  const fragmentIn = (entry: FlagEntry) => (entry.state!.variants!.targeting as { if: unknown[] }).if[0];
  t.same(fragmentIn(flagEntries[0]!), rule);
  t.equal(fragmentIn(flagEntries[0]!), fragmentIn(flagEntries[1]!), 'the same object');
  t.equal(fragmentIn(flagEntries[0]!), fragmentIn(flagEntries[2]!), 'the same object');

  // A write moves the store: the next batch compiles it again, once.
  world.run('flagPatch', { principal: kOperator, flagId: ids.flag, env: null, patch: { trafficPercentage: 40 } });
  evaluateProject(ids.single, 'targetingKey=u1&plan=pro-00001');
  t.equal(sharedRuleCompiles() - compiles, 2, 'once more after the store moved');
});

// A fragment's making or change prepared before the writer's transaction (issue 96, item 8;
// src/fragments/fragment-prepare.ts): what the side thread finds from the body and the store is what the
// writer would find in its transaction (the same record, audit entry, answer and refusals); a project
// changed between the preparation and the writer is never written on the old checks (refused as out of
// date, then prepared again by the routes, 409 past their tries); and the side thread is closed at shutdown.
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { FlagwireError } from '../../src/errors.js';
import { kFragmentCommands } from '../../src/fragments/command-table.js';
import {
  type FragmentPutJob,
  kFragmentPutJob,
  type PreparedFragmentPut,
  prepareFragmentPut,
  putPrepared,
} from '../../src/fragments/fragment-prepare.js';
import { type Fragment, fragmentRule, projectFragments } from '../../src/flags/records/fragment-records.js';
import { jsonBody } from '../../src/model/request-body.js';
import { SideThread } from '../../src/side-work/side-thread.js';
import type { WriterClient } from '../../src/writer/client.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld, type World } from '../helpers/world.js';

const kPro = { '==': [{ var: 'plan' }, 'pro'] };
const kTeam = { '==': [{ var: 'plan' }, 'team'] };
const kBad = { if: [{ nope: [1] }, true, false] };
/** A rule that uses fragment "pro" 20 times: with a 60 KiB "pro", 1.2 MiB resolved, past the project's limit. */
const kHeavy = { if: [...Array.from({ length: 20 }, (): unknown => ({ $ref: 'pro' })), 'a', 'b'] };
const kBig = { in: [{ var: 'plan' }, Array.from({ length: 6000 }, (_, i) => `plan-${String(i).padStart(4, '0')}`)] };
const kTyped = { variants: { a: 'A', b: 'B' }, defaultVariant: 'b' };
const kNow = 1_800_000_000_000;

function world(t: Test, dataDir = tempDataDir()): World {
  const w = buildWorld(dataDir);
  t.teardown(() => w.store.close());
  w.run(
    'fragmentCreate',
    { principal: kOperator, projectId: w.ids.single, received: jsonBody(JSON.stringify({ name: 'pro', rule: kPro })) },
    kNow,
  );
  return w;
}

const body = (value: unknown) => jsonBody(JSON.stringify(value));

/** The change of `name` to `rule`, applied in `w` by the writer from the body, or from what was prepared. */
function update(w: World, rule: unknown, prepared: boolean, now = kNow + 1000): Fragment {
  const base = { principal: kOperator, projectId: w.ids.single, name: 'pro' };
  const received = body({ rule });
  if (!prepared) return w.run('fragmentUpdate', { ...base, received }, now);
  const ready = prepareFragmentPut(w.store, { projectId: w.ids.single, name: 'pro', received });
  if (ready === null) return w.run('fragmentUpdate', { ...base, received }, now);
  return w.run('fragmentUpdate', { ...base, prepared: ready }, now);
}

/** The project's first fragment's rule, as stored. */
function storedRule(w: World): Record<string, unknown> | undefined {
  const fragment: Fragment | undefined = projectFragments(w.store, w.ids.single)?.fragments[0];
  return fragment === undefined ? undefined : fragmentRule(fragment);
}

/** What a write left: the fragments record and the project's newest audit entry, ids left out. */
function written(w: World) {
  const record = projectFragments(w.store, w.ids.single);
  const entry = w.store.listAudit(w.ids.single, { limit: 100, before: null }).find((e) => e.action.startsWith('fragment.'));
  return { fragments: record?.fragments, updatedAt: record?.updatedAt, audit: { ...entry, seq: 0, projectId: '' } };
}

/** The refusal's code and detail, or the answer. */
function outcome(fn: () => unknown): unknown {
  try {
    return { answer: fn() };
  } catch (err) {
    return { refused: (err as FlagwireError).code, detail: (err as FlagwireError).detail };
  }
}

t.test('a prepared change has the outcome of the one checked in the transaction', async (t) => {
  const cases: [string, unknown][] = [
    ['a new rule', kTeam],
    ['the same rule', kPro],
    ['a rule of its own problem', kBad],
    ['a $ref', { $ref: 'x' }],
    ['a large rule', kBig],
  ];
  for (const [what, rule] of cases) {
    const a = world(t);
    const b = world(t);
    t.same(
      outcome(() => update(b, rule, true)),
      outcome(() => update(a, rule, false)),
      `${what}: the same answer`,
    );
    t.same(written(b), written(a), `${what}: the same record and audit entry`);
  }
  // A flag that uses the fragment 20 times: a large rule takes the project's references past their limit.
  const a = world(t);
  const b = world(t);
  for (const w of [a, b])
    w.run('flagCreate', { principal: kOperator, projectId: w.ids.single, body: { name: 'uses-pro', ...kTyped, targeting: kHeavy } });
  const refused = outcome(() => update(b, kBig, true));
  t.same(
    refused,
    outcome(() => update(a, kBig, false)),
    'a flag that uses it: the same refusal',
  );
  t.match(refused, { refused: 'INVALID_REQUEST', detail: /^used by flag "uses-pro": / });
  t.same(written(b), written(a), 'nothing written in either');

  // A making: from the body's name and rule, a taken name included.
  for (const [what, made] of [
    ['a new fragment', { name: 'team', rule: kTeam }],
    ['a taken name', { name: 'pro', rule: kBad }],
    ['a rule of its own problem', { name: 'team', rule: kBad }],
  ] as const) {
    const x = world(t);
    const y = world(t);
    const job: FragmentPutJob = { projectId: y.ids.single, name: null, received: body(made) };
    const prepared = prepareFragmentPut(y.store, job);
    t.not(prepared, null, `${what}: prepared`);
    t.same(
      outcome(() => y.run('fragmentCreate', { principal: kOperator, projectId: y.ids.single, prepared: prepared! }, kNow + 1000)),
      outcome(() => x.run('fragmentCreate', { principal: kOperator, projectId: x.ids.single, received: body(made) }, kNow + 1000)),
      `${what}: the same answer`,
    );
    t.same(written(y), written(x), `${what}: the same record and audit entry`);
  }

  // Left to the writer, which answers as it always did: a body refused before its rule is read, no such fragment.
  const w = world(t);
  t.equal(prepareFragmentPut(w.store, { projectId: w.ids.single, name: 'pro', received: jsonBody('{"rule": ') }), null);
  t.equal(prepareFragmentPut(w.store, { projectId: w.ids.single, name: 'none', received: body({ rule: kTeam }) }), null);
});

t.test('a project changed between the preparation and the writer is not written on the old checks', async (t) => {
  const w = world(t);
  const received = body({ rule: kBig });
  const prepared = prepareFragmentPut(w.store, { projectId: w.ids.single, name: 'pro', received })!;
  t.same(prepared.check, { kind: 'change' }, 'no flag uses it yet: a change');
  // In between, a flag starts using the fragment: with the new rule, it would pass the project's limit.
  w.run('flagCreate', { principal: kOperator, projectId: w.ids.single, body: { name: 'uses-pro', ...kTyped, targeting: kHeavy } });
  const input = { principal: kOperator, projectId: w.ids.single, name: 'pro', prepared };
  t.match(
    refusedCommand(t, w, 'REVISION_CONFLICT', () => w.run('fragmentUpdate', input)),
    /changed while this change was being checked/,
  );
  t.same(storedRule(w), kPro, 'the fragment as it was');
  // Another project's change does not make it out of date.
  const again = prepareFragmentPut(w.store, { projectId: w.ids.single, name: 'pro', received: body({ rule: kTeam }) })!;
  w.run('flagPatch', { principal: kOperator, flagId: w.ids.flagB, env: null, patch: { trafficPercentage: 50 } });
  w.run('fragmentUpdate', { principal: kOperator, projectId: w.ids.single, name: 'pro', prepared: again });
  t.same(storedRule(w), kTeam, 'applied');
});

/**
 * putPrepared with the side thread and the writer in process: the preparation is the side thread's job
 * read from `w`, the call the writer's command run on it; `between` runs after each preparation.
 */
function inProcess(w: World, between: (tries: number) => void) {
  let tries = 0;
  const sideThread = {
    run: async (job: unknown, input: FragmentPutJob) => {
      t.equal(job, kFragmentPutJob);
      const value = prepareFragmentPut(w.store, input);
      between(++tries);
      return { value, storeRevision: 0 };
    },
  } as unknown as SideThread;
  const writer = {
    call: async (command: { name: string }, input: never) => w.run(command.name as 'fragmentUpdate', input),
  } as unknown as WriterClient;
  return { deps: { sideThread, writer }, tries: () => tries };
}

t.test('the routes prepare a change again when its project changed, and answer 409 past their tries', async (t) => {
  const w = world(t);
  const input = { principal: kOperator, projectId: w.ids.single, name: 'pro' };
  // Raced once: a flag that uses the fragment is made after the first preparation. Prepared again, the
  // change is checked with that flag, and refused: no change lost, none applied on the old checks.
  const raced = inProcess(w, (tries) => {
    if (tries === 1)
      w.run('flagCreate', { principal: kOperator, projectId: w.ids.single, body: { name: 'uses-pro', ...kTyped, targeting: kHeavy } });
  });
  let released = 0;
  await t.rejects(
    putPrepared(raced.deps, kFragmentCommands.fragmentUpdate, input, body({ rule: kBig }), () => released++),
    {
      code: 'INVALID_REQUEST',
      detail: /^used by flag "uses-pro": /,
    },
  );
  t.equal(raced.tries(), 2, 'prepared again');
  t.equal(released, 1, 'the body released once');
  t.same(storedRule(w), kPro);

  // Raced once by a change that leaves the new rule valid: applied on the second preparation.
  const once = inProcess(w, (tries) => {
    if (tries === 1) w.run('flagPatch', { principal: kOperator, flagId: w.ids.flag, env: null, patch: { trafficPercentage: 40 } });
  });
  const answer = await putPrepared(once.deps, kFragmentCommands.fragmentUpdate, input, body({ rule: kTeam }), null);
  t.same(fragmentRule(answer), kTeam);
  t.equal(once.tries(), 2);
  t.same(storedRule(w), kTeam, 'applied');

  // Raced at every try: 409, and nothing written.
  const always = inProcess(w, (tries) => {
    w.run('flagPatch', { principal: kOperator, flagId: w.ids.flag, env: null, patch: { trafficPercentage: tries } });
  });
  const before = projectFragments(w.store, w.ids.single);
  await t.rejects(putPrepared(always.deps, kFragmentCommands.fragmentUpdate, input, body({ rule: kPro }), null), {
    code: 'REVISION_CONFLICT',
  });
  t.equal(always.tries(), 3);
  t.same(projectFragments(w.store, w.ids.single), before, 'nothing written');
  t.ok(new FlagwireError('REVISION_CONFLICT', '').status === 409, 'answered 409');

  // A side thread that failed: the writer reads the body and checks it itself, as before.
  const failed = inProcess(w, () => {});
  failed.deps.sideThread.run = () => Promise.reject(new Error('the side thread ended'));
  const fallback = await putPrepared(failed.deps, kFragmentCommands.fragmentUpdate, input, body({ rule: kBad }), null).catch(
    (err: FlagwireError) => err.code,
  );
  t.equal(fallback, 'INVALID_REQUEST', 'refused by the writer');
  const applied = await putPrepared(failed.deps, kFragmentCommands.fragmentUpdate, input, body({ rule: kPro }), null);
  t.same(fragmentRule(applied), kPro, 'applied by the writer');
  t.same(storedRule(w), kPro);
});

t.test('the side thread prepares from its own read of the store, and is closed at shutdown', async (t) => {
  const dataDir = tempDataDir();
  const w = world(t, dataDir);
  const side = new SideThread(dataDir);
  t.teardown(() => side.close());
  t.equal(side.running, false, 'started by its first job');
  const { value } = await side.run(kFragmentPutJob, { projectId: w.ids.single, name: 'pro', received: body({ rule: kTeam }) });
  const prepared = value as PreparedFragmentPut;
  t.same(prepared.check, { kind: 'change' });
  t.equal(prepared.at, w.store.lastAuditSeq(w.ids.single));
  t.same(JSON.parse(prepared.rule), kTeam);
  t.equal(side.running, true);
  await side.close();
  t.equal(side.running, false, 'closed');
  await t.rejects(side.run(kFragmentPutJob, { projectId: w.ids.single, name: 'pro', received: body({ rule: kTeam }) }), /closed/);
});

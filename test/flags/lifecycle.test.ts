// A flag's lifecycle stage (src/flags/lifecycle.ts), in-process: each stage's definition, and over random
// facts the rules that must always hold (issue 99): a flag evaluated in the window is never ready to
// archive, unknown usage never makes a flag unused, a permanent flag is never ready, an archived one is archived.
import t from 'tap';
import { kLifecycleWindowDays, lifecycleStage, lifetimeOf, type LifecycleFacts } from '../../src/flags/lifecycle.js';
import { random } from '../helpers/seeded-random.js';

const kDay = 24 * 3600 * 1000;
const now = 1_800_000_000_000;
const N = kLifecycleWindowDays;

/** A flag made a year ago, settled, past its lifetime, unevaluated for the window, known usage, scanned with no reference. */
const ready: LifecycleFacts = {
  now,
  createdAt: now - 365 * kDay,
  archivedAt: null,
  servesOneAnswer: true,
  unchangedSince: now - (N + 1) * kDay,
  usageKnown: true,
  lastEvaluatedAt: now - (N + 1) * kDay,
  lifetime: 40,
  codeReferences: 0,
};

t.test('each stage as defined', async (t) => {
  t.equal(lifecycleStage(ready), 'ready-to-archive');
  t.equal(lifecycleStage({ ...ready, archivedAt: now - kDay }), 'archived', 'archived comes first');
  t.equal(lifecycleStage({ ...ready, lifetime: 'permanent' }), 'unused', 'a permanent flag is never ready: unused, as it is');
  t.equal(lifecycleStage({ ...ready, lifetime: 400 }), 'unused', 'within its lifetime: unused');
  t.equal(lifecycleStage({ ...ready, codeReferences: 2 }), 'unused', 'referenced in code: not ready');
  t.equal(lifecycleStage({ ...ready, codeReferences: undefined }), 'ready-to-archive', 'never scanned, usage known: known usage vouches');
  t.equal(
    lifecycleStage({ ...ready, codeReferences: undefined, usageKnown: false }),
    'settled',
    'never scanned and usage unknown: nothing vouches, and it is not called unused',
  );
  t.equal(
    lifecycleStage({ ...ready, usageKnown: false }),
    'ready-to-archive',
    'usage unknown but a scan found no reference: settled and done',
  );
  t.equal(lifecycleStage({ ...ready, lastEvaluatedAt: now - kDay }), 'settled', 'evaluated in the window: settled, not ready');
  t.equal(lifecycleStage({ ...ready, servesOneAnswer: false }), 'ready-to-archive', 'unused is enough');
  t.equal(
    lifecycleStage({ ...ready, servesOneAnswer: false, lastEvaluatedAt: now - kDay }),
    'live',
    'evaluated, more than one answer: live',
  );
  t.equal(
    lifecycleStage({ ...ready, unchangedSince: now - kDay, lastEvaluatedAt: now - kDay }),
    'live',
    'one answer but changed within the window: not settled yet',
  );
  t.equal(
    lifecycleStage({ ...ready, createdAt: now - kDay, unchangedSince: now - kDay, lastEvaluatedAt: null, lifetime: 40 }),
    'new',
    'made within the window, never evaluated',
  );
  t.equal(
    lifecycleStage({ ...ready, createdAt: now - kDay, unchangedSince: now - kDay, lastEvaluatedAt: now - 1000 }),
    'live',
    'made within the window and evaluated: live',
  );
  t.equal(
    lifecycleStage({ ...ready, servesOneAnswer: false, lastEvaluatedAt: null, usageKnown: false }),
    'live',
    'never evaluated as far as is known, usage unknown, made long ago: live, never unused',
  );
  t.equal(
    lifecycleStage({ ...ready, servesOneAnswer: false, lastEvaluatedAt: null }),
    'ready-to-archive',
    'never evaluated, usage known: unused and past its lifetime',
  );
});

t.test('lifetimes default per type', async (t) => {
  t.equal(lifetimeOf({}), 40, 'no type: a release flag');
  t.equal(lifetimeOf({ type: 'experiment' }), 40);
  t.equal(lifetimeOf({ type: 'operational' }), 'permanent');
  t.equal(lifetimeOf({ type: 'kill-switch' }), 'permanent');
  t.equal(lifetimeOf({ type: 'permission' }), 'permanent');
  t.equal(lifetimeOf({ type: 'permission', lifetimeDays: 7 }), 7, "the flag's own lifetime wins");
  t.equal(lifetimeOf({ type: 'release', lifetimeDays: 'permanent' }), 'permanent');
});

t.test('over random facts, the rules hold', async (t) => {
  const seed = 99;
  const next = random(seed);
  const days = (most: number) => Math.floor(next() * most) * kDay + Math.floor(next() * kDay);
  let ready = 0;
  for (let i = 0; i < 20_000; i++) {
    const createdAt = now - days(400);
    const facts: LifecycleFacts = {
      now,
      createdAt,
      archivedAt: next() < 0.1 ? now - days(10) : null,
      servesOneAnswer: next() < 0.5,
      unchangedSince: Math.min(now, createdAt + days(400)),
      usageKnown: next() < 0.5,
      lastEvaluatedAt: next() < 0.3 ? null : Math.min(now, createdAt + days(400)),
      lifetime: next() < 0.2 ? 'permanent' : 1 + Math.floor(next() * 200),
      codeReferences: next() < 0.3 ? undefined : Math.floor(next() * 3),
    };
    const stage = lifecycleStage(facts);
    const where = `seed ${seed}, case ${i}: ${JSON.stringify(facts)} -> ${stage}`;
    const inWindow = facts.lastEvaluatedAt !== null && facts.lastEvaluatedAt >= now - N * kDay;
    if (stage === 'ready-to-archive') ready++;
    if (facts.archivedAt !== null) {
      if (stage !== 'archived') t.fail(where);
      continue;
    }
    if (stage === 'archived') t.fail(`not archived, yet archived: ${where}`);
    if (inWindow && stage === 'ready-to-archive') t.fail(`evaluated in the window, yet ready to archive: ${where}`);
    if (inWindow && stage === 'unused') t.fail(`evaluated in the window, yet unused: ${where}`);
    if (!facts.usageKnown && stage === 'unused') t.fail(`usage unknown, yet unused: ${where}`);
    if (facts.lifetime === 'permanent' && stage === 'ready-to-archive') t.fail(`permanent, yet ready to archive: ${where}`);
    if ((facts.codeReferences ?? 0) > 0 && stage === 'ready-to-archive') t.fail(`referenced in code, yet ready: ${where}`);
    if (stage === 'new' && (facts.lastEvaluatedAt !== null || facts.createdAt < now - N * kDay)) t.fail(`not new: ${where}`);
  }
  t.ok(ready > 100, `the draw reaches ready-to-archive (${ready} times): the property is not vacuous`);
});

import t from 'tap';
import type { GroupFlag, SingleFlag } from '../../src/model/flags.js';
import { applyFlagPatch } from '../../src/flags/patch-rules.js';

const single = (): SingleFlag => ({
  id: 'f1',
  projectId: 'p1',
  kind: 'flag',
  name: 'f',
  description: '',
  tags: [],
  cohorts: ['a', 'b'],
  createdAt: 1,
  updatedAt: 1000,
  state: { enabled: false, trafficPercentage: 10, audienceId: null },
});

const group = (): GroupFlag => ({
  id: 'g1',
  projectId: 'p2',
  kind: 'groupflag',
  name: 'g',
  description: '',
  tags: [],
  cohorts: ['wide'],
  createdAt: 1,
  updatedAt: 1000,
  environments: {
    prod: { enabled: true, trafficPercentage: 50, audienceId: null, cohorts: ['own'] },
    staging: { enabled: false, trafficPercentage: 0, audienceId: null, cohorts: null },
  },
});

t.test('rule 1: a present key replaces, an absent key is left alone', async (t) => {
  const out = applyFlagPatch(single(), null, { enabled: true }, 2000);
  t.equal(out.changed, true);
  t.same(out.flag.kind === 'flag' && out.flag.state, { enabled: true, trafficPercentage: 10, audienceId: null });
  t.same(out.flag.cohorts, ['a', 'b']);
  t.same(out.changes, { enabled: { before: false, after: true } });
});

t.test('rule 4: cohorts replaces the whole list, [] clears it', async (t) => {
  t.same(applyFlagPatch(single(), null, { cohorts: ['c'] }, 2000).flag.cohorts, ['c']);
  t.same(applyFlagPatch(single(), null, { cohorts: [] }, 2000).flag.cohorts, []);
});

t.test('rule 5: audienceId attaches, null detaches', async (t) => {
  const attached = applyFlagPatch(single(), null, { audienceId: 'aud1' }, 2000);
  t.equal(attached.flag.kind === 'flag' && attached.flag.state.audienceId, 'aud1');
  const detached = applyFlagPatch(attached.flag, null, { audienceId: null }, 3000);
  t.equal(detached.changed, true);
  t.equal(detached.flag.kind === 'flag' && detached.flag.state.audienceId, null);
});

t.test('rule 11: a patch equal to the stored state changes nothing', async (t) => {
  const flag = single();
  const out = applyFlagPatch(flag, null, { enabled: false, trafficPercentage: 10, cohorts: ['b', 'a', 'a'], audienceId: null }, 2000);
  t.equal(out.changed, false);
  t.equal(out.flag, flag, 'the stored flag object is returned untouched');
  t.equal(out.flag.updatedAt, 1000, 'updatedAt does not move');
});

t.test('updatedAt strictly increases on a real change, even if the clock did not move', async (t) => {
  const out = applyFlagPatch(single(), null, { trafficPercentage: 20 }, 500);
  t.equal(out.flag.updatedAt, 1001);
  t.equal(applyFlagPatch(single(), null, { trafficPercentage: 20 }, 5000).flag.updatedAt, 5000);
});

t.test('rule 6: on a group flag the patch applies to one environment only', async (t) => {
  const out = applyFlagPatch(group(), 'staging', { enabled: true, trafficPercentage: 100, audienceId: 'aud' }, 2000);
  const flag = out.flag as GroupFlag;
  t.same(flag.environments.staging, { enabled: true, trafficPercentage: 100, audienceId: 'aud', cohorts: null });
  t.same(flag.environments.prod, group().environments.prod, 'other environments untouched');
});

t.test('rule 6: cohorts: [] removes the override and the environment inherits the flag-wide list', async (t) => {
  const out = applyFlagPatch(group(), 'prod', { cohorts: [] }, 2000);
  t.equal(out.changed, true);
  t.equal((out.flag as GroupFlag).environments.prod!.cohorts, null);
  t.same(out.changes.cohorts, { before: ['own'], after: ['wide'] });
});

t.test('rule 7: an environment without override cannot be emptied while the flag-wide list is non-empty', async (t) => {
  const out = applyFlagPatch(group(), 'staging', { cohorts: [] }, 2000);
  t.equal(out.changed, false, '[] on an inheriting environment is already the state');
});

t.test('a patch equal to the inherited list creates no override', async (t) => {
  const out = applyFlagPatch(group(), 'staging', { cohorts: ['wide'] }, 2000);
  t.equal(out.changed, false);
  t.equal((out.flag as GroupFlag).environments.staging!.cohorts, null);
});

t.test('a list different from the inherited one becomes the override', async (t) => {
  const out = applyFlagPatch(group(), 'staging', { cohorts: ['x', 'x', 'y'] }, 2000);
  t.same((out.flag as GroupFlag).environments.staging!.cohorts, ['x', 'y'], 'repeats dropped');
});

t.test('an environment never set starts at the defaults and can be patched', async (t) => {
  const flag = group();
  delete (flag.environments as Record<string, unknown>).staging;
  const same = applyFlagPatch(flag, 'staging', { enabled: false, trafficPercentage: 0 }, 2000);
  t.equal(same.changed, false, 'the defaults are the state');
  const on = applyFlagPatch(flag, 'staging', { enabled: true }, 2000);
  t.same((on.flag as GroupFlag).environments.staging, { enabled: true, trafficPercentage: 0, audienceId: null, cohorts: null });
});

t.test('removing an override equal to the flag-wide list is a change with an audit trace', async (t) => {
  const flag = group();
  flag.environments.prod!.cohorts = ['wide'];
  const out = applyFlagPatch(flag, 'prod', { cohorts: [] }, 2000);
  t.equal(out.changed, true);
  t.same(out.changes, { cohortsOverride: { before: ['wide'], after: null } });
});

// Flag usage aggregation, in-process: the engine's per-entry counts summed by takeUsage (entries dropped
// when the store moves hand theirs over first; a project route counts each flag, on the same entries as
// the flag route), the recorder's merge and its retry of a flush refused as busy, and the writer's
// recordUsage totals (a deleted flag's usage goes with it).
import { kOperator } from '../../../src/actor/audit-actor.js';
import t from 'tap';
import { pino } from 'pino';
import { UsageRecorder, type UsageSource, writtenUsage } from '../../../src/evaluation/engine/usage.js';
import { FlagwireError } from '../../../src/errors.js';
import { type FlagUsage, kUsageHours, mergeUsage, type UsageCount } from '../../../src/model/flags.js';
import { engineOverWorld } from './eval-world.js';
import { getEnvironmentUsage, getUsage, listEnvironmentUsage } from '../../../src/flags/records/flag-store.js';

const { world, ids, clock, engine, answer } = engineOverWorld(t);
const evaluate = (route: 'flag' | 'project', id: string, query = ''): void => void answer(route, id, query);
/** The counts summed by flag, over their environments and hours. */
const byFlag = (counts: readonly UsageCount[]): Record<string, FlagUsage> => {
  const totals: Record<string, FlagUsage> = {};
  for (const c of counts) totals[c.flagId] = mergeUsage(totals[c.flagId], c);
  return totals;
};

t.test('the engine counts per flag and hands the totals over once', async (t) => {
  t.same(engine.takeUsage(), [], 'nothing evaluated yet');
  const first = clock.now();
  evaluate('flag', ids.on);
  evaluate('flag', ids.on);
  evaluate('flag', 'flg_nope');
  evaluate('project', ids.single);
  evaluate('project', ids.empty);
  const counts = byFlag(engine.takeUsage());
  t.same(
    Object.keys(counts).sort(),
    [ids.on, ids.off, ids.half, ids.zero, ids.aud, ids.audHalf].sort(),
    'the project route counts each of its flags; unknown ids nothing',
  );
  t.equal(counts[ids.on]!.evaluations, 3, 'flag route twice and the project route once, on the same entry');
  t.equal(counts[ids.off]!.evaluations, 1);
  t.ok(counts[ids.on]!.lastEvaluatedAt >= first && counts[ids.on]!.lastEvaluatedAt <= clock.now());
  t.same(engine.takeUsage(), [], 'taken counts start again from 0');
});

t.test('counts on entries dropped when the store moves are kept', async (t) => {
  evaluate('flag', ids.half);
  evaluate('project', ids.multi, 'env=staging');
  // A configuration write moves configSeq: the next batch drops every compiled entry.
  world.run('flagDescribe', { principal: kOperator, flagId: ids.zero, text: 'moved' });
  clock.advance(3600);
  evaluate('flag', ids.half);
  const counts = byFlag(engine.takeUsage());
  t.equal(counts[ids.half]!.evaluations, 2, 'one before the move, one after');
  t.ok(counts[ids.half]!.lastEvaluatedAt >= clock.now() - 1000, 'the latest time wins');
  t.equal(counts[ids.group]!.evaluations, 1);
  t.equal(counts[ids.groupAud]!.evaluations, 1);
});

t.test('the recorder sums what the workers answer and keeps a flush refused as busy', async (t) => {
  const answers: UsageCount[][] = [
    [
      { flagId: 'flg_a', environment: 'prod', evaluations: 2, lastEvaluatedAt: 10 },
      { flagId: 'flg_b', environment: 'prod', evaluations: 1, lastEvaluatedAt: 5 },
    ],
    [{ flagId: 'flg_a', environment: 'prod', evaluations: 3, lastEvaluatedAt: 7 }],
  ];
  const source: UsageSource = {
    async collectUsage(_timeoutMs, onCounts) {
      for (const counts of answers.splice(0)) onCounts(counts);
    },
  };
  const sent: UsageCount[][] = [];
  let refuse = true;
  const writer = {
    call: async (_name: string, input: { counts: UsageCount[] }) => {
      if (refuse) throw new FlagwireError('STORE_BUSY', 'busy');
      sent.push(input.counts);
      return { flags: input.counts.length };
    },
  };
  const log = pino({ level: 'silent' });
  const recorder = new UsageRecorder(source, writtenUsage(writer as never, log), log);
  await recorder.flush();
  t.same(sent, [], 'refused: nothing written');
  answers.push([{ flagId: 'flg_b', environment: 'prod', evaluations: 4, lastEvaluatedAt: 20 }]);
  refuse = false;
  await recorder.flush();
  t.same(
    sent,
    [
      [
        { flagId: 'flg_a', environment: 'prod', evaluations: 5, lastEvaluatedAt: 10 },
        { flagId: 'flg_b', environment: 'prod', evaluations: 5, lastEvaluatedAt: 20 },
      ],
    ],
    'one command: the refused counts and the new ones, summed by flag',
  );
  await recorder.flush();
  t.equal(sent.length, 1, 'nothing counted: no command');
});

t.test('recordUsage adds to the totals and their hour; a deleted flag is skipped and its usage removed', async (t) => {
  world.run('recordUsage', { counts: [{ flagId: ids.on, environment: '', evaluations: 2, lastEvaluatedAt: 100 }] });
  world.run('recordUsage', {
    counts: [
      { flagId: ids.on, environment: '', evaluations: 3, lastEvaluatedAt: 50 },
      { flagId: 'flg_gone', environment: '', evaluations: 1, lastEvaluatedAt: 1 },
    ],
  });
  t.same(
    getUsage(world.store, ids.on),
    { flagId: ids.on, evaluations: 5, lastEvaluatedAt: 100, hours: { lastHour: 0, counts: [5] } },
    'summed; the latest time kept; both in the first hour of 1970 (their times are ms)',
  );
  t.equal(getUsage(world.store, 'flg_gone'), undefined, 'no usage for a flag that does not exist');
  world.run('recordUsage', { counts: [{ flagId: ids.off, environment: '', evaluations: 1, lastEvaluatedAt: 1 }] });
  world.run('flagDelete', { principal: kOperator, flagId: ids.off });
  t.equal(getUsage(world.store, ids.off), undefined, 'deleting the flag deletes its usage');
});

const kHourMs = 3600 * 1000;
/** `minute` minutes into hour `hour` (hours since 1970). */
const at = (hour: number, minute = 0) => hour * kHourMs + minute * 60_000;

t.test('the engine counts per flag, environment and hour: each count is of one hour', async (t) => {
  engine.takeUsage();
  evaluate('flag', ids.group, 'env=staging');
  evaluate('flag', ids.group, 'env=staging');
  evaluate('flag', ids.group, 'env=production');
  evaluate('flag', ids.group);
  evaluate('flag', ids.group, 'env=nowhere');
  evaluate('project', ids.multi, 'env=dev');
  evaluate('flag', ids.on);
  const before = engine.takeUsage();
  const of = (counts: readonly UsageCount[], flagId: string, environment: string) =>
    counts.filter((c) => c.flagId === flagId && c.environment === environment).map((c) => c.evaluations);
  t.same(of(before, ids.group, 'staging'), [2]);
  t.same(of(before, ids.group, 'production'), [1], 'a request refused for its environment counts nowhere');
  t.same(of(before, ids.group, 'dev'), [1], 'the project route counts each flag in its environment');
  t.same(of(before, ids.groupAud, 'dev'), [1]);
  t.same(of(before, ids.on, ''), [1], "a single flag's counts are its one state's");
  t.equal(before.filter((c) => c.flagId === ids.group).length, 3, 'nothing else of the flag');

  // Evaluations on both sides of an hour's end: two counts, each timed in its own hour.
  const hour = Math.floor(clock.now() / kHourMs);
  clock.advance(Math.ceil((hour + 1) * 3600 - clock.now() / 1000) - 2);
  evaluate('flag', ids.group, 'env=staging');
  clock.advance(3);
  evaluate('flag', ids.group, 'env=staging');
  evaluate('flag', ids.group, 'env=staging');
  const hours = engine
    .takeUsage()
    .filter((c) => c.flagId === ids.group)
    .map((c) => [Math.floor(c.lastEvaluatedAt / kHourMs), c.evaluations])
    .sort();
  t.same(hours, [
    [hour, 1],
    [hour + 1, 2],
  ]);
});

t.test('recordUsage: per environment and hour, the same whatever the order two nodes flush in', async (t) => {
  // Two nodes' flushes of one flag: staging and production, hours at the edge of the week kept, and
  // an hour that left it; a count that names no environment of the project adds to the totals only.
  const newest = 500_000;
  const nodeA: UsageCount[] = [
    { flagId: '', environment: 'staging', evaluations: 4, lastEvaluatedAt: at(newest, 59) },
    { flagId: '', environment: 'production', evaluations: 2, lastEvaluatedAt: at(newest - kUsageHours + 1, 1) },
    { flagId: '', environment: 'gone', evaluations: 7, lastEvaluatedAt: at(newest) },
  ];
  const nodeB: UsageCount[] = [
    { flagId: '', environment: 'staging', evaluations: 3, lastEvaluatedAt: at(newest - 1, 59) },
    { flagId: '', environment: 'production', evaluations: 5, lastEvaluatedAt: at(newest, 0) },
    { flagId: '', environment: 'production', evaluations: 6, lastEvaluatedAt: at(newest - kUsageHours, 30) },
  ];
  const flush = (flagId: string, counts: UsageCount[]) => world.run('recordUsage', { counts: counts.map((c) => ({ ...c, flagId })) });
  flush(ids.group, nodeA);
  flush(ids.group, nodeB);
  flush(ids.groupAud, nodeB);
  flush(ids.groupAud, nodeA);
  const stored = (flagId: string) => ({
    total: { ...getUsage(world.store, flagId), flagId: '' },
    environments: listEnvironmentUsage(world.store, flagId).map((u) => ({ ...u, flagId: '' })),
  });
  t.same(stored(ids.group), stored(ids.groupAud), 'either order, the same records');
  const staging = getEnvironmentUsage(world.store, ids.group, 'staging')!;
  t.same(staging.hours, { lastHour: newest, counts: [3, 4] });
  t.equal(staging.evaluations, 7);
  t.equal(staging.lastEvaluatedAt, at(newest, 59));
  const production = getEnvironmentUsage(world.store, ids.group, 'production')!;
  t.equal(production.evaluations, 13, 'every evaluation in the total, also one whose hour left the week');
  t.equal(production.hours!.lastHour, newest);
  t.equal(production.hours!.counts.length, kUsageHours, 'a week of hours');
  t.equal(production.hours!.counts[0], 2, 'the oldest hour of the week kept');
  t.equal(production.hours!.counts.at(-1), 5);
  t.equal(
    production.hours!.counts.reduce((a, b) => a + b, 0),
    7,
    'the hour before the week is not in it',
  );
  t.same(
    listEnvironmentUsage(world.store, ids.group).map((u) => u.environment),
    ['production', 'staging'],
    'no environment the project does not have',
  );
  t.equal(getUsage(world.store, ids.group)!.evaluations, 4 + 2 + 7 + 3 + 5 + 6, 'the totals count everything');
  world.run('recordUsage', { counts: [{ flagId: ids.half, environment: 'production', evaluations: 2, lastEvaluatedAt: at(newest) }] });
  t.same(
    listEnvironmentUsage(world.store, ids.half).map((u) => [u.environment, u.evaluations]),
    [['', 2]],
    "a single flag's counts are its one state's, whatever environment they name",
  );
  world.run('flagDelete', { principal: kOperator, flagId: ids.groupAud });
  t.same(listEnvironmentUsage(world.store, ids.groupAud), [], "deleting the flag deletes its environments' usage");
});

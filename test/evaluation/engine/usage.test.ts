// Flag usage aggregation, in-process: the engine's per-entry counts summed by takeUsage (entries dropped
// when the store moves hand theirs over first; a project route counts each flag, on the same entries as
// the flag route), the recorder's merge and its retry of a flush refused as busy, and the writer's
// recordUsage totals (a deleted flag's usage goes with it).
import { kOperator } from '../../../src/actor/audit-actor.js';
import t from 'tap';
import { pino } from 'pino';
import { UsageRecorder, type UsageSource, writtenUsage } from '../../../src/evaluation/engine/usage.js';
import { FlagwireError } from '../../../src/errors.js';
import type { FlagUsage } from '../../../src/model/flags.js';
import { engineOverWorld } from './eval-world.js';
import { getUsage } from '../../../src/flags/records/flag-store.js';

const { world, ids, clock, engine, answer } = engineOverWorld(t);
const evaluate = (route: 'flag' | 'project', id: string, query = ''): void => void answer(route, id, query);
const byFlag = (counts: readonly FlagUsage[]) => Object.fromEntries(counts.map((c) => [c.flagId, c]));

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
  const answers: FlagUsage[][] = [
    [
      { flagId: 'flg_a', evaluations: 2, lastEvaluatedAt: 10 },
      { flagId: 'flg_b', evaluations: 1, lastEvaluatedAt: 5 },
    ],
    [{ flagId: 'flg_a', evaluations: 3, lastEvaluatedAt: 7 }],
  ];
  const source: UsageSource = {
    async collectUsage(_timeoutMs, onCounts) {
      for (const counts of answers.splice(0)) onCounts(counts);
    },
  };
  const sent: FlagUsage[][] = [];
  let refuse = true;
  const writer = {
    call: async (_name: string, input: { counts: FlagUsage[] }) => {
      if (refuse) throw new FlagwireError('STORE_BUSY', 'busy');
      sent.push(input.counts);
      return { flags: input.counts.length };
    },
  };
  const log = pino({ level: 'silent' });
  const recorder = new UsageRecorder(source, writtenUsage(writer as never, log), log);
  await recorder.flush();
  t.same(sent, [], 'refused: nothing written');
  answers.push([{ flagId: 'flg_b', evaluations: 4, lastEvaluatedAt: 20 }]);
  refuse = false;
  await recorder.flush();
  t.same(
    sent,
    [
      [
        { flagId: 'flg_a', evaluations: 5, lastEvaluatedAt: 10 },
        { flagId: 'flg_b', evaluations: 5, lastEvaluatedAt: 20 },
      ],
    ],
    'one command: the refused counts and the new ones, summed by flag',
  );
  await recorder.flush();
  t.equal(sent.length, 1, 'nothing counted: no command');
});

t.test('recordUsage adds to the totals and their hour; a deleted flag is skipped and its usage removed', async (t) => {
  world.run('recordUsage', { counts: [{ flagId: ids.on, evaluations: 2, lastEvaluatedAt: 100 }] });
  world.run('recordUsage', {
    counts: [
      { flagId: ids.on, evaluations: 3, lastEvaluatedAt: 50 },
      { flagId: 'flg_gone', evaluations: 1, lastEvaluatedAt: 1 },
    ],
  });
  t.same(
    getUsage(world.store, ids.on),
    { flagId: ids.on, evaluations: 5, lastEvaluatedAt: 100, hours: { lastHour: 0, counts: [5] } },
    'summed; the latest time kept; both in the first hour of 1970 (their times are ms)',
  );
  t.equal(getUsage(world.store, 'flg_gone'), undefined, 'no usage for a flag that does not exist');
  world.run('recordUsage', { counts: [{ flagId: ids.off, evaluations: 1, lastEvaluatedAt: 1 }] });
  world.run('flagDelete', { principal: kOperator, flagId: ids.off });
  t.equal(getUsage(world.store, ids.off), undefined, 'deleting the flag deletes its usage');
});

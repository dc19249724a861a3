// The in-process world the rollout tests start from (rollout-commands.test.ts, rollout-weights.test.ts):
// a data dir with the test world, the writer's rollout commands run at a given time, and what they read back.
import { kOperator } from '../../src/actor/audit-actor.js';
import type { Test } from 'tap';
import { refusedCommand } from './refused.js';
import { tempDataDir } from './server.js';
import { buildWorld } from './world.js';
import { getFlag } from '../../src/flags/records/flag-store.js';

export const kHour = 3_600_000;
/** A percentage rollout: 10% for an hour, 50% for an hour, then 100%. */
export const kSteps = [{ trafficPercentage: 10, holdMs: kHour }, { trafficPercentage: 50, holdMs: kHour }, { trafficPercentage: 100 }];

/** A fresh world, its store closed when `t` ends; the commands' times count from `t0`, now. */
export function rolloutWorld(t: { teardown(fn: () => unknown): void }) {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  t.teardown(() => world.store.close());
  const t0 = Date.now();
  const read = () => {
    world.store.resetReadTxn();
    return world.store;
  };
  return {
    dataDir,
    world,
    ids: world.ids,
    t0,
    read,
    percentage: (flagId: string) => (getFlag(read(), flagId) as { state: { trafficPercentage: number } }).state.trafficPercentage,
    audit: (projectId: string) => read().listAudit(projectId, { limit: 1000, before: null }),
    start: (flagId: string, steps: unknown, env: string | null = null, now = t0) =>
      world.run('rolloutStart', { principal: kOperator, flagId, env, body: { steps }, guardMetrics: null }, now),
    advance: (rolloutId: string, now: number) => world.run('rolloutAdvance', { rolloutId }, now),
    act: (rolloutId: string, action: 'pause' | 'resume' | 'skip' | 'rollback', now: number) =>
      world.run('rolloutAct', { principal: kOperator, rolloutId, action }, now),
    refused: (t: Test, code: string, fn: () => unknown) => refusedCommand(t, world, code, fn),
  };
}

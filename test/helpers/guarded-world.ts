// A world (world.ts) whose multi project's production is guarded, for the approvals' rules in process:
// its people and bypass token as principals, and what a held change's request is.
import { principalOf, type Principal } from '../../src/actor/audit-actor.js';
import type { Outcome } from '../../src/writer/thread/commands.js';
import { buildWorld, type World } from './world.js';
import { scratchDir } from './scratch-dir.js';

/** The world, production guarded by `required` approvals with the multi project's write token as its bypass. */
export function guardedWorld(prefix: string, required: number) {
  const world = buildWorld(scratchDir(prefix));
  const { ids } = world;
  const t0 = Date.now();
  const admin = principalOf(ids.admin);
  const bypass: Principal = { kind: 'token', tokenId: world.tokenIds.multiWrite! };
  world.run(
    'approvalsSet',
    { projectId: ids.multi, env: 'production', required, bypassTokens: [world.tokenIds.multiWrite!], principal: admin },
    t0,
  );
  return { world: world as World, ids, t0, editor: principalOf(ids.editor), admin, owner: principalOf(ids.owner), bypass };
}

/** The id of the request a held change opened or edited; throws where the change was applied. */
export function held<T>(outcome: Outcome<T>): string {
  if (outcome.applied) throw new Error('the change was applied');
  return outcome.request.id;
}

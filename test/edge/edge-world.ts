// The world the edge tests serve: test/evaluation/engine/eval-world.ts's, a typed flag added to its
// single-environment project, a read token of that project, and the real server over it.
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { buildEvalWorld, type EvalWorld } from '../evaluation/engine/eval-world.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A read token of the world's single-environment project, as an edge is given one. */
export function edgeReadToken(world: EvalWorld): string {
  return world.run('tokenCreate', {
    projectId: world.ids.single,
    principal: principalOf(world.ids.owner),
    name: 'edge',
    permission: 'read',
  }).secret;
}

export interface EdgeWorld {
  readonly world: EvalWorld;
  readonly server: TestServer;
  /** A read token of the single-environment project. */
  readonly token: string;
  readonly typed: { readonly id: string; readonly name: string };
  stop(): Promise<void>;
}

/** `prepare`: more of the world, made before the server starts. */
export async function startEdgeWorld(prepare: (world: EvalWorld) => void = () => {}): Promise<EdgeWorld> {
  const world = buildEvalWorld();
  const { ids } = world;
  const typed = world.run('flagCreate', {
    projectId: ids.single,
    principal: kOperator,
    body: {
      name: 'colour',
      enabled: true,
      variants: { red: '#d33', green: '#2a2', blue: '#22d' },
      defaultVariant: 'red',
      targeting: {
        if: [
          { '==': [{ var: 'plan' }, 'beta'] },
          'green',
          {
            fractional: [
              ['red', 50],
              ['blue', 50],
            ],
          },
        ],
      },
    },
  });
  const token = edgeReadToken(world);
  prepare(world);
  const server = await startTestServer({ dataDir: world.dataDir });
  return {
    world,
    server,
    token,
    typed: { id: typed.id, name: 'colour' },
    stop: async () => {
      await server.stop();
      await world.store.close();
    },
  };
}

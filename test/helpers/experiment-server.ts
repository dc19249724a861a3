// A real server over the test world with an experiment running: the single project's flag `new-checkout`
// at 50% with experiment `checkout-2026`, and a client key of that project with the events use.
import { call, type Reply } from './http.js';
import type { TestServerOptions } from './server.js';
import { startWorldServer } from './world-server.js';

/** A typed flag running experiment `colour-test` on everyone, with variants red and blue. */
export const kColourFlag = {
  name: 'button-colour',
  enabled: true,
  trafficPercentage: 100,
  experiment: 'colour-test',
  variants: { red: 'red', blue: 'blue' } as Record<string, string>,
  defaultVariant: 'red',
};

/** A setup request's answer, or a throw (an assertion before the first test would come after tap's automatic end). */
export function must(r: Reply, status: number): any {
  if (r.status !== status) throw new Error(`expected ${status}: ${r.status} ${r.text}`);
  return r.json;
}

/** `syncPort`: the sync service's, for a stock flagd provider (absent: off). */
export async function startExperimentServer(
  t: { teardown(fn: () => Promise<unknown>): void },
  env: Record<string, string> = {},
  syncPort?: TestServerOptions['syncPort'],
) {
  const { server, world } = await startWorldServer(t, env, syncPort);
  const base = server.baseUrl;
  const { secrets } = world;
  must(
    await call(base, 'POST', '/api/v1/flags', {
      token: secrets.write,
      body: { name: 'new-checkout', enabled: true, trafficPercentage: 50, experiment: 'checkout-2026' },
    }),
    201,
  );
  const key = must(
    await call(base, 'POST', '/api/v1/client-keys', { token: secrets.write, body: { name: 'shop', uses: ['events'] } }),
    201,
  );
  /** The experiment's statistics, read with the project's read token. */
  const statistics = async () =>
    must(await call(base, 'GET', '/api/v1/experiments/checkout-2026/statistics', { token: secrets.read }), 200);
  return { server, world, base, clientKey: key.secret as string, statistics };
}

// Flag usage from the provider's in-process evaluations (docs/provider.md: Usage): with the stock
// OpenFeature server SDK, N evaluations through Flagwire's provider are counted N times on the server,
// exactly; when the server answers a batch 503 once, or does the work and the connection drops before
// the answer, the batch is sent again under its id and still counted once. The counts are bounded on the
// provider: past maxKeys flag and variant pairs an evaluation is dropped and counted as dropped.
import { OpenFeature } from '@openfeature/server-sdk';
import t, { type Test } from 'tap';
import type { FlagwireProvider } from '../../src/provider/provider.js';
import { UsageCounts } from '../../src/provider/usage-reporter.js';
import { type Fault, startFaultProxy } from '../helpers/fault-proxy.js';
import { call } from '../helpers/http.js';
import { providerClient } from '../helpers/provider-client.js';
import { startWorldServer } from '../helpers/world-server.js';

t.setTimeout(300_000);
const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
t.teardown(() => OpenFeature.close());

const evaluations = async (flagId: string): Promise<number> =>
  (await call(server.baseUrl, 'GET', `/api/v1/flags/${flagId}`, { token: secrets.read })).json.evaluations as number;

/** The faults to make of the usage reports, in order ('pass' once they are used up), and how many reports came. */
function usageFaults(faults: Fault[]): { fault: (req: { method?: string; url?: string }) => Fault; reports: () => number } {
  let reports = 0;
  return {
    fault: (req) => {
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/usage/')) return 'pass';
      reports++;
      return faults.shift() ?? 'pass';
    },
    reports: () => reports,
  };
}

async function evaluateThrough(
  t: Test,
  faults: Fault[],
  n: number,
  domain: string,
): Promise<{ reports: number; provider: FlagwireProvider }> {
  const tries = faults.length + 1;
  const faulty = usageFaults([...faults]);
  const proxy = await startFaultProxy(() => [server.port], faulty.fault);
  t.teardown(() => proxy.close());
  const { provider, client } = await providerClient(domain, {
    url: proxy.url,
    token: secrets.read,
    project: ids.single,
    usage: { flushIntervalMs: 3_600_000 },
  });
  for (let i = 0; i < n; i++) {
    await client.getBooleanValue(i % 2 === 0 ? ids.flag : 'banner', false, { targetingKey: `user-${i}` });
  }
  // A key the snapshot does not have is no flag's evaluation.
  await client.getBooleanValue('no-such-flag', false, { targetingKey: 'u' });
  // Each flush sends what waits until one is not answered: as many as the faults.
  for (let i = 0; i < tries; i++) if (await provider.flushUsage()) break;
  return { reports: faulty.reports(), provider };
}

t.test('N evaluations in-process through the stock SDK count N on the server, exactly', async (t) => {
  const before = [await evaluations(ids.flag), await evaluations(ids.flag2)];
  const { reports, provider } = await evaluateThrough(t, [], 4000, 'plain');
  t.equal(reports, 1, 'one batch');
  t.equal(await evaluations(ids.flag), before[0]! + 2000);
  t.equal(await evaluations(ids.flag2), before[1]! + 2000, 'by name: the flag it names');
  t.equal(provider.usageDropped, 0);
});

t.test('a batch answered 503, then one whose answer is lost after the server counted it: each counted once', async (t) => {
  const before = [await evaluations(ids.flag), await evaluations(ids.flag2)];
  const { reports, provider } = await evaluateThrough(t, ['refuse', 'drop'], 1000, 'faulty');
  t.equal(reports, 3, 'the batch was sent three times');
  t.equal(await evaluations(ids.flag), before[0]! + 500, 'counted once');
  t.equal(await evaluations(ids.flag2), before[1]! + 500, 'counted once');
  t.equal(provider.usageDropped, 0);
});

t.test('counts past maxKeys pairs are dropped and counted, not kept', async (t) => {
  const counts = new UsageCounts(2);
  counts.count('a', 'on');
  counts.count('a', 'on');
  counts.count('a', 'off');
  counts.count('a', 'x');
  counts.count('b', 'on');
  t.equal(counts.dropped, 2);
  t.same(counts.take(7), [
    { flag: 'a', variant: 'on', evaluations: 2, lastEvaluatedAt: 7 },
    { flag: 'a', variant: 'off', evaluations: 1, lastEvaluatedAt: 7 },
  ]);
  t.same(counts.take(8), [], 'taken: a fresh start');
});

// Flag usage from Flagwire's provider on two nodes sharing PostgreSQL (docs/operations.md: Flag usage):
// the provider evaluates in-process while its usage reports go, through a load balancer, to node A until
// A is killed with kill -9 mid-stream, then to node B. A batch A did not answer (whether or not it had
// committed it) is sent again to B under its id, which counts it only if A had not: the usage B shows
// is exactly the evaluations made.
import { setTimeout as sleep } from 'node:timers/promises';
import { OpenFeature } from '@openfeature/server-sdk';
import t from 'tap';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { call } from '../helpers/http.js';
import { providerClient } from '../helpers/provider-client.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { seededDatabase, startReadyNodes } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());
t.teardown(() => OpenFeature.close());
t.setTimeout(300_000);

t.test('kill -9 of the node taking the reports: every evaluation counted once on the other', async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const [a, b] = (await startReadyNodes(t, url, 2)) as [TestServer, TestServer];
  let reports = 0;
  const proxy = await startFaultProxy(
    () => [a.port, b.port],
    (req) => {
      if (req.method === 'POST' && req.url?.startsWith('/v1/usage/')) reports++;
      return 'pass';
    },
  );
  t.teardown(() => proxy.close());
  const { provider, client } = await providerClient('two-nodes', {
    url: proxy.url,
    token: seeded.secret,
    project: seeded.projectId,
    usage: { flushIntervalMs: 20 },
  });
  const rounds = 40;
  const perRound = 100;
  let reportsWhenKilled = 0;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < perRound; i++) await client.getBooleanValue(seeded.flagId, false, { targetingKey: `u-${round}-${i}` });
    if (round === rounds / 2) {
      reportsWhenKilled = reports;
      a.proc.kill('SIGKILL');
    }
    await sleep(10);
  }
  const deadline = Date.now() + 60_000;
  while (!(await provider.flushUsage())) {
    if (Date.now() > deadline) throw new Error('the reports were not answered in a minute');
    await sleep(100);
  }
  t.ok(reportsWhenKilled > 0, `${reportsWhenKilled} reports went to A before it was killed`);
  t.ok(reports > reportsWhenKilled, `${reports - reportsWhenKilled} reports after`);
  const flag = await call(b.baseUrl, 'GET', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret });
  t.equal(flag.json.evaluations, rounds * perRound, 'exactly the evaluations made');
  t.equal(provider.usageDropped, 0);
});

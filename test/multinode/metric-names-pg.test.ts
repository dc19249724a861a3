// The bound on an environment's undeclared metric names (issue 96, item 3; docs/events.md: Metrics
// counted) on two nodes sharing PostgreSQL: batches of new names sent to both at once admit exactly
// kMaxUndeclaredMetrics between them, and a name one node admitted counts on the other.
import t from 'tap';
import { kMaxUndeclaredMetrics } from '../../src/events/tally.js';
import { call } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { seededDatabase, startReadyNodes, until } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test('two nodes at once admit exactly the bound of undeclared names between them', async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const nodes = await startReadyNodes(t, url, 2);
  const made = await call(nodes[0]!.baseUrl, 'POST', '/api/v1/client-keys', {
    token: seeded.secret,
    body: { name: 'web', uses: ['events'] },
  });
  t.equal(made.status, 201, made.text);
  const key = made.json.secret as string;
  const track = (subject: string, metric: string) => ({ kind: 'track', key: metric, targetingKey: subject, timestamp: Date.now() });
  const send = (node: number, events: unknown[]) =>
    call(nodes[node]!.baseUrl, 'POST', '/ofrep/v1/events', { token: key, body: { events } });
  await until(async () => (await send(1, [])).status !== 401, 60_000, 'the key on the second node');

  // Each batch brings 4 new names of its own, sent to both nodes at once, until well past the bound.
  const batches = Array.from({ length: 12 }, (_, b) => Array.from({ length: 4 }, (_, i) => track(`s${b}`, `n${b}-${i}`)));
  const answers = await Promise.all(batches.map((events, b) => send(b % 2, events)));
  for (const r of answers) t.equal(r.status, 200, r.text);
  const accepted = answers.reduce((sum, r) => sum + (r.json.accepted as number), 0);
  t.equal(accepted, kMaxUndeclaredMetrics, 'exactly the bound, across both nodes');
  for (const r of answers)
    for (const { reason } of r.json.rejected as { reason: string }[]) t.match(reason, /is declared by no experiment here/);

  const admitted = batches
    .flat()
    .find((_, i) => answers[Math.floor(i / 4)]!.json.rejected.every((r: { index: number }) => r.index !== i % 4))!;
  for (const node of [0, 1]) {
    const again = await send(node, [track('late', admitted.key)]);
    t.strictSame(again.json, { accepted: 1, duplicates: 0, rejected: [] }, `an admitted name still counts on node ${node}`);
    const fresh = await send(node, [track('late', `fresh-${node}`)]);
    t.equal(fresh.json.rejected.length, 1, `a new name is refused on node ${node}`);
  }
});

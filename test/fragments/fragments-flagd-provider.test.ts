// Black-box: shared fragments reach the stock @openfeature/flagd-provider (npm, unmodified, in-process
// mode) through a real Flagwire's sync service, and Flagwire's own snapshot: a flag whose rule uses
// {"$ref": NAME} answers in the provider as OFREP does; the flag set and the snapshot carry the rule with
// its reference replaced (no $evaluators); a fragment changed through the Management API reaches the
// provider, which then answers by the new rule, as OFREP does.
import t from 'tap';
import { FlagdProvider } from '@openfeature/flagd-provider';
import { OpenFeature, type EvaluationContext } from '@openfeature/server-sdk';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { kFlagdDeadlineMs } from '../helpers/flagd-provider.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids, secrets } = world;
const server = await startTestServer({ dataDir, syncPort: 'free' });
t.teardown(async () => {
  await OpenFeature.close();
  await server.stop();
  await world.store.close();
});
const api = async (method: string, path: string, body: unknown, status: number) => {
  const r = await call(server.baseUrl, method, path, { token: secrets.write, body });
  if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.json;
};

const kStaff = { ends_with: [{ var: 'email' }, '@example.com'] };
const kBeta = { in: [{ var: 'plan' }, ['beta', 'pro']] };
await api('POST', '/api/v1/fragments', { name: 'staff', rule: kStaff }, 201);
await api('POST', '/api/v1/fragments', { name: 'early', rule: kBeta }, 201);
await api(
  'POST',
  '/api/v1/flags',
  {
    name: 'colour',
    enabled: true,
    trafficPercentage: 100,
    variants: { red: '#f00', green: '#0f0', blue: '#00f' },
    defaultVariant: 'red',
    targeting: { if: [{ $ref: 'staff' }, 'green', { $ref: 'early' }, 'blue', null] },
  },
  201,
);

const provider = new FlagdProvider({
  resolverType: 'in-process',
  deadlineMs: kFlagdDeadlineMs,
  host: '127.0.0.1',
  port: server.syncPort,
  selector: `flagSetId=${ids.single},token=${secrets.read}`,
});
await OpenFeature.setProviderAndWait('fragments', provider);
const client = OpenFeature.getClient('fragments');

async function ofrepValue(context: EvaluationContext): Promise<unknown> {
  const r = await call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags/colour', {
    body: { context },
    headers: { 'X-Flagwire-Project': ids.single },
  });
  return r.json.value;
}

const kContexts: EvaluationContext[] = [
  { targetingKey: 'u1' },
  { targetingKey: 'u2', email: 'ada@example.com' },
  { targetingKey: 'u3', email: 'bob@other.test', plan: 'pro' },
  { targetingKey: 'u4', email: 'eve@other.test', plan: 'free' },
];

t.test('a flag using fragments answers in the stock provider as OFREP does', async (t) => {
  const expected = ['#f00', '#0f0', '#00f', '#f00'];
  for (const [i, context] of kContexts.entries()) {
    const ofrep = await ofrepValue(context);
    t.equal(ofrep, expected[i], `OFREP, context ${i}`);
    t.equal(await client.getStringValue('colour', 'none', context), ofrep, `the provider, context ${i}`);
  }
});

t.test('the flag set and the snapshot carry the rule with its references replaced', async (t) => {
  const set = await call(server.baseUrl, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read });
  t.equal(set.status, 200, set.text);
  t.notMatch(set.text, '$ref', 'no reference left in the flag set');
  t.notOk('$evaluators' in set.json, 'no $evaluators');
  t.same(set.json.flags.colour.targeting, { if: [kStaff, 'green', kBeta, 'blue', null] });
  const snapshot = await call(server.baseUrl, 'GET', `/v1/snapshots/${ids.single}`, { token: secrets.read });
  t.equal(snapshot.status, 200, snapshot.text);
  const colour = snapshot.json.flags.find((f: { name: string }) => f.name === 'colour');
  t.same(colour.state.typed.targeting, { if: [kStaff, 'green', kBeta, 'blue', null] });
  const shown = await call(server.baseUrl, 'GET', `/api/v1/flags/${colour.id}`, { token: secrets.read });
  t.same(shown.json.targeting, { if: [{ $ref: 'staff' }, 'green', { $ref: 'early' }, 'blue', null] }, 'the API shows it as written');
});

t.test('a fragment changed reaches the provider: it answers by the new rule, as OFREP does', async (t) => {
  await api('PATCH', '/api/v1/fragments/early', { rule: { in: [{ var: 'plan' }, ['free']] } }, 200);
  const free = kContexts[3]!;
  t.equal(await ofrepValue(free), '#00f', 'OFREP follows at once');
  // The bound only catches a hang: how fast is the bench's to measure.
  await pollUntil(
    'the provider sees the fragment change',
    () => client.getStringValue('colour', 'none', free),
    (v) => v === '#00f',
  );
  for (const context of kContexts) t.equal(await client.getStringValue('colour', 'none', context), await ofrepValue(context));
});

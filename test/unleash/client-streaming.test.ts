// Black-box: GET /api/client/streaming (issue 60, item 2) with the stock unleash-client in streaming mode
// against a real server: hydrated at once, then a flag changed, created or deleted through the
// Management API (or the command line) reaches its isEnabled over the stream, with no poll of /api/client/features; the
// events as Unleash sends them (unleash-connected with a hydration, unleash-updated with the delta, the
// revision as id); a token revoked ends its stream; refusals as on the features route.
import t, { type Test } from 'tap';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { call, type Reply } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;

function refusedWith(t: Test, r: Reply, status: number, error: string, detail?: RegExp): void {
  t.equal(r.status, status, `${status} ${error}`);
  t.equal(r.json.error, error);
  if (detail !== undefined) t.match(r.json.detail, detail);
}

/** How many GET /api/client/features the server has answered, by /metrics. */
async function featuresFetches(): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(/^flagwire_http_requests_total\{route="\/api\/client\/features",status="\d+"\} (\d+)$/gm))
    total += Number(match[1]);
  return total;
}

/** Resolves once the SDK's flags satisfy `done` (checked at each change it hears); a minute only catches a hang. */
function changed(unleash: Unleash, done: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    if (done()) return resolve();
    const timer = setTimeout(() => reject(new Error('no change within a minute')), 60_000);
    const check = () => {
      if (!done()) return;
      clearTimeout(timer);
      unleash.off('changed', check);
      resolve();
    };
    unleash.on('changed', check);
  });
}

t.test('the stock SDK in streaming mode sees every change without polling', async (t) => {
  const before = await featuresFetches();
  const warnings: unknown[] = [];
  const unleash = new Unleash({
    url: `${server.baseUrl}/api`,
    appName: 'streaming-test',
    customHeaders: { Authorization: secrets.read },
    disableMetrics: true,
    // Its poll, were it polling, would not come within this test.
    refreshInterval: 600_000,
    experimentalMode: { type: 'streaming' },
    storageProvider: new InMemStorageProvider(),
  });
  t.teardown(() => unleash.destroy());
  unleash.on('warn', (warning: unknown) => warnings.push(warning));
  await new Promise<void>((resolve, reject) => {
    unleash.once('synchronized', () => resolve());
    unleash.once('error', reject);
  });
  t.ok(unleash.getFeatureToggleDefinition('checkout'), 'hydrated');
  const streamed = world.run('flagCreate', {
    projectId: ids.single,
    body: { name: 'streamed', enabled: true, trafficPercentage: 100 },
    principal: kOperator,
  }).id;
  await changed(unleash, () => unleash.isEnabled('streamed'));
  t.equal(unleash.isEnabled('streamed'), true, 'a new flag arrives');

  const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${streamed}`, { token: secrets.write, body: { enabled: false } });
  t.equal(patched.status, 200);
  await changed(unleash, () => !unleash.isEnabled('streamed'));
  t.equal(unleash.isEnabled('streamed'), false, 'a flag turned off, over the stream');

  world.run('flagDelete', { principal: kOperator, flagId: streamed });
  await changed(unleash, () => unleash.getFeatureToggleDefinition('streamed') === undefined);
  t.equal(unleash.getFeatureToggleDefinition('streamed'), undefined, 'a deleted flag is gone');
  t.ok(unleash.getFeatureToggleDefinition('banner'), 'the others stay');
  t.equal(await featuresFetches(), before, 'never a poll of /api/client/features');
  t.same(warnings, [], 'the SDK warned of nothing');
});

/**
 * The stream's raw text, read as the SDK's EventSource reads it, until the server ends it, `until` holds
 * for what came, or a minute passed (which only catches a hang); `during` runs while it is read.
 */
async function readUnleashStream(
  authorization: string,
  during: () => Promise<void>,
  until: (text: string) => boolean = () => false,
): Promise<{ status: number; text: string; ended: boolean }> {
  const controller = new AbortController();
  const res = await fetch(`${server.baseUrl}/api/client/streaming`, { signal: controller.signal, headers: { authorization } });
  let text = '';
  let ended = false;
  const reader = res.body!.getReader();
  const timer = setTimeout(() => controller.abort(), 60_000);
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        ended = done;
        if (done) break;
        text += Buffer.from(value).toString();
        if (until(text)) break;
      }
    } catch {
      // aborted: the time is up
    }
  })();
  await during();
  await reading;
  clearTimeout(timer);
  controller.abort();
  return { status: res.status, text, ended };
}

t.test('the events as Unleash sends them: a hydration, then the delta, each with the revision as id', async (t) => {
  const features = await call(server.baseUrl, 'GET', '/api/client/features', { headers: { authorization: secrets.read } });
  let id = '';
  const { status, text } = await readUnleashStream(
    secrets.read,
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      id = world.run('flagCreate', {
        projectId: ids.single,
        body: { name: 'raw-streamed', enabled: true, trafficPercentage: 40 },
        principal: kOperator,
      }).id;
    },
    (text) => text.includes('event: unleash-updated') && text.endsWith('\n\n'),
  );
  t.equal(status, 200);
  const events = [...text.matchAll(/id: (\d+)\nevent: ([\w-]+)\ndata: (.*)\n\n/g)].map((m) => ({
    id: Number(m[1]),
    name: m[2],
    data: JSON.parse(m[3]!),
  }));
  const connected = events.find((e) => e.name === 'unleash-connected')!;
  t.match(connected.data, { events: [{ type: 'hydration', eventId: connected.id, segments: [] }] });
  t.same(connected.data.events[0].features, features.json.features, 'the hydration is what GET /api/client/features says');
  const updated = events.filter((e) => e.name === 'unleash-updated');
  t.equal(updated.length, 1, 'an update: the commit');
  t.ok(updated[0]!.id > connected.id, 'its id is the later revision');
  t.same(updated[0]!.data, {
    events: [
      {
        type: 'feature-updated',
        eventId: updated[0]!.id,
        feature: {
          name: 'raw-streamed',
          description: '',
          type: 'release',
          project: ids.single,
          enabled: true,
          stale: false,
          impressionData: false,
          strategies: [{ name: 'flexibleRollout', parameters: { rollout: '40', stickiness: 'default', groupId: id }, constraints: [] }],
          variants: [],
        },
      },
    ],
  });
});

t.test('a token revoked ends its stream, and is sent nothing more', async (t) => {
  const owner = principalOf(ids.owner);
  const made = world.run('tokenCreate', { projectId: ids.single, principal: owner, name: 'streamer', permission: 'read' });
  const { text, ended } = await readUnleashStream(made.secret, async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    world.run('tokenRevoke', { tokenId: made.id, principal: owner });
    world.run('flagCreate', { projectId: ids.single, body: { name: 'after-revoke', enabled: true }, principal: kOperator });
  });
  t.match(text, /event: unleash-connected/, 'it was connected');
  t.notMatch(text, /after-revoke/, 'nothing after the revocation');
  t.ok(ended, 'the server ended the stream');
  refusedWith(
    t,
    await call(server.baseUrl, 'GET', '/api/client/streaming', { headers: { authorization: made.secret } }),
    401,
    'Token revoked',
  );
});

t.test('refusals: as the features route', async (t) => {
  const get = (authorization: string | null, path = '/api/client/streaming') =>
    call(server.baseUrl, 'GET', path, { headers: authorization === null ? {} : { authorization } });
  refusedWith(t, await get(null), 401, 'Missing bearer token', /customHeaders/);
  refusedWith(t, await get(`fw_${'x'.repeat(40)}`), 401, 'Invalid token');
  refusedWith(t, await get(`fwc_${'x'.repeat(32)}`), 401, 'Malformed bearer token', /a client key/);
  refusedWith(t, await get(secrets.multiRead), 403, 'Forbidden', /one environment/);
  refusedWith(t, await get(secrets.free), 402, 'Plan does not include the Management API');
  refusedWith(
    t,
    await get(secrets.read, `/api/client/streaming?token=${secrets.read}`),
    400,
    'Invalid request',
    /never accepted in the URL/,
  );
});

// Webhooks over the Management API against a real server and real receivers: a change another process
// writes delivered by an idle node; made with a secret shown once, listed without it; a change POSTed to
// the receiver signed as Standard Webhooks says (checked with a reference verifier); a failing receiver
// retried until it answers 2xx, the log saying so; redelivery as the same message; a hanging receiver
// delays neither the write nor another receiver; URLs that resolve to private, loopback or metadata
// addresses (or an IPv6 form of one) refused unless allowed, when made and when sent; Slack's format,
// names escaped; a token limited to some environments refused.
import t from 'tap';
import { Webhook as Verifier } from 'standardwebhooks';
import { kOperator } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, {
  FLAGWIRE_TEST_HOOKS: '1',
  // The receivers listen on loopback: the allow-list lets exactly that through.
  FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1',
  FLAGWIRE_WEBHOOK_TIMEOUT_MS: '2000',
});
const { ids, secrets } = world;
const base = server.baseUrl;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const patchFlag = (body: unknown) => api('PATCH', `/api/v1/flags/${ids.flag}`, body);
const log = async (webhookId: string) =>
  (await api('GET', `/api/v1/webhooks/${webhookId}/deliveries`, undefined, secrets.read)).json.deliveries as Record<string, any>[];

// First in the file, so that nothing is pending: the node's deliverer waits for its own commits then
// (src/webhooks/deliverer.ts), and a change a command-line command writes to the data file from a process
// of its own is none of them. It is read within the deliverer's idle wait, and sent.
t.test('a change another process writes to the data file is delivered by a node with nothing pending', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const made = await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] });
  t.equal(made.status, 201, made.text);
  world.run('flagPatch', { flagId: ids.flag, env: null, patch: { trafficPercentage: 44 }, principal: kOperator });
  await receiver.waitFor(1);
  t.match(JSON.parse(receiver.received[0]!.body), { type: 'flag.patch', data: { flag: { id: ids.flag, trafficPercentage: 44 } } });
  t.equal((await api('POST', `/api/v1/webhooks/${made.json.id}/delete`)).status, 200);
});

t.test('made, listed, a change delivered signed; a failing receiver retried; redelivered as the same message', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const refusedRead = await api('POST', '/api/v1/webhooks', { url: receiver.url }, secrets.read);
  t.equal(refusedRead.status, 403);
  const made = await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] });
  t.equal(made.status, 201, made.text);
  t.match(made.json, {
    id: /^whk_/,
    url: receiver.url,
    events: ['flag'],
    format: 'standard',
    secret: /^whsec_/,
    createdBy: `token:${world.tokenIds.write}`,
  });
  const { id, secret } = made.json as { id: string; secret: string };
  const listed = await api('GET', '/api/v1/webhooks', undefined, secrets.read);
  t.equal(listed.status, 200);
  t.match(listed.json.webhooks, [{ id }]);
  t.notOk('secret' in listed.json.webhooks[0], 'the secret is shown only when made');

  const patched = await patchFlag({ trafficPercentage: 70 });
  t.equal(patched.status, 200);
  await receiver.waitFor(1);
  const [first] = receiver.received;
  const verified = new Verifier(secret).verify(first!.body, first!.headers as Record<string, string>) as Record<string, any>;
  t.match(verified, {
    type: 'flag.patch',
    data: { audit: { flagId: ids.flag, actor: `token:${world.tokenIds.write}` }, flag: { id: ids.flag, trafficPercentage: 70 } },
  });
  t.equal(first!.headers['content-type'], 'application/json');
  const [delivered] = await pollUntil(
    'delivered in the log',
    () => log(id),
    (l) => l[0]?.status === 'delivered',
  );
  t.match(delivered, { id: first!.headers['webhook-id'], event: 'flag.patch', attempts: 1, lastStatus: 200, nextAttemptAt: null });
  t.notOk('body' in delivered!, 'the log shows no body');

  receiver.answer = 500;
  await patchFlag({ trafficPercentage: 71 });
  await receiver.waitFor(2);
  const failing = await pollUntil(
    'a failed attempt logged',
    () => log(id),
    (l) => l[0]?.attempts === 1 && l[0]?.status === 'pending',
  );
  t.match(failing[0], { lastStatus: 500, lastError: 'answered 500' });
  receiver.answer = 200;
  // The next try is 2.5-5 s later on the server's clock: moved on instead of waited for.
  await call(base, 'POST', '/__test/clock?advance=6');
  await receiver.waitFor(3);
  t.equal(receiver.received[2]!.headers['webhook-id'], receiver.received[1]!.headers['webhook-id'], 'a retry is the same message');
  const retried = await pollUntil(
    'delivered after a retry',
    () => log(id),
    (l) => l[0]?.status === 'delivered',
  );
  t.match(retried[0], { attempts: 2, lastStatus: 200 });

  const again = await api('POST', `/api/v1/deliveries/${retried[0]!.id}/redeliver`);
  t.equal(again.status, 200, again.text);
  t.match(again.json, { id: retried[0]!.id, status: 'pending' });
  await receiver.waitFor(4);
  t.equal(receiver.received[3]!.headers['webhook-id'], retried[0]!.id);
  t.equal(receiver.received[3]!.body, receiver.received[2]!.body, 'the same body');
  t.ok(new Verifier(secret).verify(receiver.received[3]!.body, receiver.received[3]!.headers as Record<string, string>), 'newly signed');

  const unknown = await api('POST', '/api/v1/deliveries/msg_nope/redeliver');
  t.equal(unknown.status, 404);
  const deleted = await api('POST', `/api/v1/webhooks/${id}/delete`);
  t.same(deleted.json, { id, deleted: true });
  t.equal((await api('GET', `/api/v1/webhooks/${id}/deliveries`, undefined, secrets.read)).status, 404);
});

t.test('a hanging receiver delays neither a write nor another receiver', async (t) => {
  const hanging = await startReceiver();
  hanging.answer = 'hang';
  const healthy = await startReceiver();
  t.teardown(() => Promise.all([hanging.close(), healthy.close()]));
  const slow = (await api('POST', '/api/v1/webhooks', { url: hanging.url, events: ['flag'] })).json.id as string;
  const fast = (await api('POST', '/api/v1/webhooks', { url: healthy.url, events: ['flag'] })).json.id as string;
  for (let i = 0; i < 10; i++) t.equal((await patchFlag({ trafficPercentage: 80 + i })).status, 200, `write ${i} answered`);
  await healthy.waitFor(10);
  t.ok(hanging.received.length <= 8, `at most eight sends at once to one webhook: ${hanging.received.length}`);
  const timedOut = await pollUntil(
    'the hanging receiver cut off',
    () => log(slow),
    (l) => l.some((d) => d.lastError === 'no answer in 2000 ms'),
  );
  t.ok(timedOut.length === 10, 'every change queued for it');
  for (const id of [slow, fast]) await api('POST', `/api/v1/webhooks/${id}/delete`);
});

t.test('URLs that reach the server’s own network are refused unless allowed; Slack format', async (t) => {
  for (const [url, said] of [
    [
      'http://169.254.169.254/latest/meta-data',
      /169\.254\.169\.254 is a link-local \(cloud metadata\) address: not sent \(FLAGWIRE_WEBHOOK_ALLOW can let it through\)/,
    ],
    ['http://10.1.2.3/hook', /a private address/],
    ['http://[::1]:9/hook', /::1 is a loopback address/],
    ['http://0.0.0.0:9/hook', /an unspecified address/],
    // IPv6 forms that carry a forbidden IPv4 address, and the IPv4 ranges the hand-kept list missed (issue 41).
    [
      'http://[::ffff:169.254.169.254]/latest',
      /::ffff:a9fe:a9fe is an IPv4-mapped form of 169\.254\.169\.254, a link-local \(cloud metadata\) address/,
    ],
    ['http://[64:ff9b::a9fe:a9fe]/latest', /64:ff9b::a9fe:a9fe is a NAT64 form of 169\.254\.169\.254, a link-local/],
    ['http://[2002:a00:1::1]/hook', /2002:a00:1::1 is a 6to4 form of 10\.0\.0\.1, a private address/],
    ['http://[2001:0:808:808::80ff:fffe]/hook', /is a Teredo \(client\) form of 127\.0\.0\.1, a loopback address/],
    ['http://[::7f00:1]/hook', /::7f00:1 is an IPv4-compatible form of 127\.0\.0\.1, a loopback address/],
    ['http://198.18.0.1/hook', /198\.18\.0\.1 is a reserved/],
    ['http://240.0.0.1/hook', /240\.0\.0\.1 is a reserved/],
    ['gopher://example.com/', /must start with http:\/\/ or https:\/\//],
  ] as const) {
    const r = await api('POST', '/api/v1/webhooks', { url });
    t.equal(r.status, 400, url);
    t.match(r.json, { error: 'Invalid request', detail: said }, url);
  }
  t.same((await api('GET', '/api/v1/webhooks', undefined, secrets.read)).json.webhooks, [], 'none made');

  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const slack = await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'], format: 'slack' });
  t.equal(slack.status, 201);
  await patchFlag({ enabled: false });
  await receiver.waitFor(1);
  t.match(JSON.parse(receiver.received[0]!.body), { text: /^Flagwire: ci-write \(token:\w+\) flag\.patch .*: enabled true → false$/ });
  t.ok(new Verifier(slack.json.secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>));

  // Slack reads <...> as a mention or link and & as an escape: a name is sent as text, escaped as Slack's formatting says.
  const named = await api('POST', '/api/v1/flags', { name: '<!channel> & <@U024BE7LH>' });
  t.equal(named.status, 201, named.text);
  await receiver.waitFor(2);
  const { text } = JSON.parse(receiver.received[1]!.body) as { text: string };
  t.match(text, /^Flagwire: ci-write \(token:\w+\) flag\.create &lt;!channel&gt; &amp; &lt;@U024BE7LH&gt; \(flg_\w+\)/);
  t.notMatch(text, /[<>]|&(?!amp;|lt;|gt;)/, 'no <, > or bare & is left');
  await api('POST', `/api/v1/webhooks/${slack.json.id}/delete`);
});

t.test('an address refused when sending: a webhook the console made to an IPv6 form of the metadata address', async (t) => {
  // The CLI checks only a URL's form (the operator runs it), so the deliverer's own check is what stops this one.
  const hook = world.run('webhookCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ url: 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data', events: ['flag'] })),
  });
  t.equal((await patchFlag({ trafficPercentage: 33 })).status, 200);
  const [refused] = await pollUntil(
    'the attempt logged as refused',
    () => log(hook.id),
    (l) => l[0]?.attempts === 1,
  );
  t.match(refused, {
    status: 'pending',
    lastStatus: null,
    lastError:
      '64:ff9b::a9fe:a9fe is a NAT64 form of 169.254.169.254, a link-local (cloud metadata) address: not sent (FLAGWIRE_WEBHOOK_ALLOW can let it through)',
  });
  t.equal((await api('POST', `/api/v1/webhooks/${hook.id}/delete`)).status, 200);
});

t.test('a token limited to some environments may not make, delete or redeliver a webhook, which carries every environment', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const limited = secrets.stagingWrite;
  const refusal = {
    error: 'Environment not permitted',
    detail: 'A webhook carries the changes of every environment; this token is limited to: staging. Use a token for every environment.',
  };
  const refused = await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] }, limited);
  t.equal(refused.status, 403);
  t.match(refused.json, refusal);
  // Refused before the URL is looked at: a private one gets the same answer.
  t.match((await api('POST', '/api/v1/webhooks', { url: 'http://10.1.2.3/' }, limited)).json, refusal);
  t.same((await api('GET', '/api/v1/webhooks', undefined, limited)).json.webhooks, [], 'none made');

  const made = await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] }, secrets.multiWrite);
  t.equal(made.status, 201, 'a token for every environment makes one');
  const { id } = made.json as { id: string };
  t.match((await api('GET', '/api/v1/webhooks', undefined, limited)).json.webhooks, [{ id }], 'listing is a read, as for plans');
  const patched = await api('PATCH', `/api/v1/flags/${ids.groupFlag}?env=staging`, { trafficPercentage: 40 }, limited);
  t.equal(patched.status, 200, patched.text);
  await receiver.waitFor(1);
  const [delivery] = (await api('GET', `/api/v1/webhooks/${id}/deliveries`, undefined, limited)).json.deliveries as { id: string }[];

  const again = await api('POST', `/api/v1/deliveries/${delivery!.id}/redeliver`, undefined, limited);
  t.equal(again.status, 403);
  t.match(again.json, refusal);
  const deleted = await api('POST', `/api/v1/webhooks/${id}/delete`, undefined, limited);
  t.equal(deleted.status, 403);
  t.match(deleted.json, refusal);
  t.match((await api('GET', '/api/v1/webhooks', undefined, limited)).json.webhooks, [{ id }], 'still there');
  t.equal(receiver.received.length, 1, 'nothing sent again');

  t.equal((await api('POST', `/api/v1/deliveries/${delivery!.id}/redeliver`, undefined, secrets.multiWrite)).status, 200);
  t.equal((await api('POST', `/api/v1/webhooks/${id}/delete`, undefined, secrets.multiWrite)).status, 200);
});

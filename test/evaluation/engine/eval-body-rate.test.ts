// Black-box: each credential's evaluation body bytes per second (issue 96, item 5;
// FLAGWIRE_EVAL_BODY_BYTES_PER_SECOND, src/http/body.ts BodyBudgets.evalBytes). One project's front-end
// client key sending large bodies faster than its share is refused 429 with Retry-After, in the route's
// own envelope, while another project's key is answered 200; OFREP's are charged to the client address.
// Only a body's bytes past its first 4 KiB are charged: many small bodies, far past the share together,
// are all answered.
import t from 'tap';
import { kOperator } from '../../../src/actor/audit-actor.js';
import { kMaxContextChars } from '../../../src/evaluation/engine/context-bounds.js';
import { kEvalBodyTooFast, kUnchargedBodyBytes } from '../../../src/evaluation/engine/queued-body.js';
import { jsonBody } from '../../../src/model/request-body.js';
import { call } from '../../helpers/http.js';
import { startWorldServer } from '../../helpers/world-server.js';

t.setTimeout(5 * 60_000);

// The least share the setting allows: a few of the bodies below spend it.
const kShare = 1024 * 1024;
const { server, world } = await startWorldServer(t, { FLAGWIRE_EVAL_BODY_BYTES_PER_SECOND: String(kShare) });
const { ids } = world;
const keyOf = (projectId: string, name: string): string =>
  world.run('clientKeyCreate', {
    principal: kOperator,
    projectId,
    received: jsonBody(JSON.stringify({ name, uses: ['frontend'] })),
  }).secret;
const flooding = keyOf(ids.single, 'flooding');
const chatty = keyOf(ids.single, 'chatty');
const other = keyOf(ids.singleB, 'other');

// A context within the bound, each character written \u0001 (six bytes): about 360 KB, under the cap.
const kLarge = { context: { userId: '\u0001'.repeat(kMaxContextChars - 100) } };
const kBodyBytes = JSON.stringify(kLarge).length;

const post = (path: string, body: unknown, headers: Record<string, string>) => call(server.baseUrl, 'POST', path, { body, headers });

t.test("a key sending past its share is refused 429; another project's key is answered", async (t) => {
  // Sent at once: their headers arrive within the same second, so at most kShare of them are taken.
  const count = Math.ceil((2 * kShare) / kBodyBytes) + 2;
  const replies = await Promise.all(Array.from({ length: count }, () => post('/api/frontend/all', kLarge, { authorization: flooding })));
  const statuses = replies.map((r) => r.status);
  t.ok(
    statuses.every((s) => s === 200 || s === 429),
    `answered 200 or 429 (${statuses.join(', ')})`,
  );
  const refused = replies.filter((r) => r.status === 429);
  // At most kShare (7/6 of it across a bucket's edge) is taken in a second: the rest is refused.
  t.ok(refused.length > 0, `past the share refused (${refused.length} of ${count})`);
  t.same(refused[0]!.json, { error: 'Too many requests', detail: kEvalBodyTooFast }, 'in the front-end API envelope');
  t.equal(refused[0]!.headers.get('retry-after'), '1', 'Retry-After: 1');
  const answered = await post('/api/frontend/all', { context: { userId: 'u1' } }, { authorization: other });
  t.equal(answered.status, 200, "another project's key is answered at once");
});

t.test('OFREP: the client address past its share is refused 429 in its shape; a client key is charged apart', async (t) => {
  const count = Math.ceil((2 * kShare) / kBodyBytes) + 2;
  const replies = await Promise.all(
    Array.from({ length: count }, () =>
      post('/ofrep/v1/evaluate/flags', { context: { targetingKey: kLarge.context.userId } }, { 'X-Flagwire-Project': ids.single }),
    ),
  );
  const refused = replies.filter((r) => r.status === 429);
  t.ok(refused.length > 0, `refused past the share (${refused.length} of ${count})`);
  t.same(refused[0]!.json, { errorCode: 'GENERAL', errorDetails: kEvalBodyTooFast }, "in OFREP's shape");
  t.equal(refused[0]!.headers.get('retry-after'), '1', 'Retry-After: 1');
  const answered = await post('/api/frontend/all', { context: { userId: 'u2' } }, { authorization: other });
  t.equal(answered.status, 200, 'a client key from the same address is charged to itself');
});

t.test('bodies within the uncharged bytes are never refused for their bytes, however many', async (t) => {
  const small = { context: { userId: 'u'.repeat(kUnchargedBodyBytes - 100) } };
  t.ok(JSON.stringify(small).length <= kUnchargedBodyBytes, 'each body is within the uncharged bytes');
  // Together past the share, sent at once: charged whole, most would be refused.
  const count = Math.ceil((1.5 * kShare) / kUnchargedBodyBytes);
  const replies = await Promise.all(Array.from({ length: count }, () => post('/api/frontend/all', small, { authorization: chatty })));
  t.same(
    replies.map((r) => r.status),
    Array(count).fill(200),
    `all ${count} answered`,
  );
});

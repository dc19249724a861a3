// Webhooks on nodes of one PostgreSQL (issue 28, item 2): every node's deliverer polls the same outbox,
// and each change reaches a real receiver once: a delivery is written in its change's transaction (the
// same revision of PostgreSQL's change log), and a node claims it in a transaction that checks no other
// node holds it. A node killed (kill -9) while its receiver has not answered leaves its claim; once the
// claim runs out, another node sends the same message again: the receiver sees the same webhook-id twice,
// the at-least-once that docs/webhooks.md describes. Nodes run on real time; the bounds only catch a hang.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook as Verifier } from 'standardwebhooks';
import t from 'tap';
import type { WebhookDelivery } from '../../src/webhooks/webhook.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { type Received, startReceiver } from '../helpers/webhook-receiver.js';
import { kUnlimited } from '../reliability/support.js';
import { changeLog, type Seeded, seedInProcess, startReadyNodes } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());
const kHangMs = 60_000;
// The receivers listen on loopback: the allow-list lets exactly that through.
const kNodeEnv = { ...kUnlimited, FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1' };

function client(nodes: TestServer[], seeded: Seeded) {
  const api = (i: number, method: string, path: string, body?: unknown) =>
    call(nodes[i]!.baseUrl, method, path, { token: seeded.secret, body });
  const log = async (i: number, webhookId: string) =>
    (await api(i, 'GET', `/api/v1/webhooks/${webhookId}/deliveries`)).json.deliveries as Record<string, any>[];
  return { api, log };
}

/** The receiver's request, verified as a Standard Webhooks library verifies it (throws if forged). */
function verified(secret: string, r: Received): Record<string, any> {
  return new Verifier(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, any>;
}

/**
 * Which of `nodes` holds the connection a request came on: its sending port, looked up in the kernel's
 * table of TCP sockets (/proc/net/tcp, the socket's inode) and in each node's open descriptors.
 */
function senderOf(nodes: TestServer[], remotePort: number, receiverPort: number): TestServer | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const line = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(`:${hex(remotePort)}`) && f[2]?.endsWith(`:${hex(receiverPort)}`));
  if (line === undefined) return undefined;
  const socket = `socket:[${line[9]}]`;
  return nodes.find((node) => {
    if (node.proc.exitCode !== null || node.proc.signalCode !== null) return false;
    const fds = `/proc/${node.proc.pid}/fd`;
    return readdirSync(fds).some((fd) => {
      try {
        return readlinkSync(`${fds}/${fd}`) === socket;
      } catch {
        return false; // closed meanwhile
      }
    });
  });
}

t.test('two nodes, twenty changes made on both: each reaches the receiver once, signed, queued with its change', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const seeded = await seedInProcess(t, url);
  const nodes = await startReadyNodes(t, url, 2, kNodeEnv);
  const { api, log } = client(nodes, seeded);
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const made = await api(0, 'POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] });
  t.equal(made.status, 201, made.text);
  const { id: webhookId, secret } = made.json as { id: string; secret: string };

  // Alternating nodes: node 1's first write is made right after the webhook was, on node 0.
  const kChanges = 20;
  for (let i = 0; i < kChanges; i++) {
    const r = await api(i % 2, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { trafficPercentage: i + 1 });
    t.equal(r.status, 200, `change ${i} on node ${i % 2}: ${r.text}`);
  }
  await receiver.waitFor(kChanges, kHangMs);
  const logs = await Promise.all(
    [0, 1].map((i) =>
      pollUntil(
        `every delivery delivered, read from node ${i}`,
        () => log(i, webhookId),
        (l) => l.length === kChanges && l.every((d) => d.status === 'delivered'),
      ),
    ),
  );
  // Delivered means recorded: no node starts another send of any of them. Any send already under way
  // (two nodes holding one delivery) would have arrived by now.
  await sleep(500);
  t.equal(receiver.received.length, kChanges, `${kChanges} requests in all`);
  const ids = receiver.received.map((r) => r.headers['webhook-id'] as string);
  t.equal(new Set(ids).size, kChanges, 'each a message of its own (webhook-id)');
  const bodies = receiver.received.map((r) => verified(secret, r));
  t.ok(
    bodies.every((b) => b.type === 'flag.patch' && b.data.flag.id === seeded.flagId),
    'every request verified with the secret; each a flag.patch of the flag',
  );
  const seqs = bodies.map((b) => b.data.audit.seq as number);
  t.equal(new Set(seqs).size, kChanges, 'each a change of its own (audit seq)');
  t.same(
    bodies.map((b) => b.data.flag.trafficPercentage).sort((a, b) => a - b),
    Array.from({ length: kChanges }, (_, i) => i + 1),
    'every change told, with the flag after it',
  );

  t.same(logs[0], logs[1], 'both nodes show the same delivery log');
  t.same(new Set(logs[0]!.map((d) => d.id)), new Set(ids), 'the log holds the messages the receiver got');
  t.ok(
    logs[0]!.every((d) => d.attempts === 1 && d.lastStatus === 200),
    'each sent once, answered 200',
  );

  // PostgreSQL's change log: each delivery first written in the revision of its change's audit entry.
  const changes = await changeLog(pg, database);
  const auditRevision = new Map<number, number>();
  const queued = new Map<string, { revision: number; value: WebhookDelivery }>();
  for (const { revision, change } of changes) {
    if (change.kind === 'audit') auditRevision.set(change.value.seq, revision);
    if (change.kind === 'delivery' && !queued.has(change.value.id)) queued.set(change.value.id, { revision, value: change.value });
  }
  t.equal(queued.size, kChanges, 'one delivery per change');
  t.same(new Set(queued.keys()), new Set(ids));
  for (const [id, { revision, value }] of queued) {
    t.equal(revision, auditRevision.get(value.auditSeq), `${id} written in its change's revision`);
    t.match(value, { status: 'pending', attempts: 0, claimedBy: null }, `${id} queued, not yet claimed`);
  }
  t.same(new Set([...queued.values()].map((q) => q.value.auditSeq)), new Set(seqs), 'the changes the receiver was told of');
  // Each claimed once: one node sent each.
  const claims = changes.filter(({ change }) => change.kind === 'delivery' && change.value.claimedBy !== null);
  t.equal(claims.length, kChanges, 'each delivery claimed once');
});

t.test('the node sending a delivery killed (kill -9) before the answer: another node sends it again', async (t) => {
  const url = await pg.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const seeded = await seedInProcess(t, url);
  // An attempt is cut off after 2 s; its claim lasts three times that, 6 s.
  const kTimeoutMs = 2000;
  const nodes = await startReadyNodes(t, url, 2, { ...kNodeEnv, FLAGWIRE_WEBHOOK_TIMEOUT_MS: String(kTimeoutMs) });
  const { api, log } = client(nodes, seeded);
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const receiverPort = Number(new URL(receiver.url).port);
  const made = await api(0, 'POST', '/api/v1/webhooks', { url: receiver.url, events: ['flag'] });
  t.equal(made.status, 201, made.text);
  const { id: webhookId, secret } = made.json as { id: string; secret: string };

  receiver.answer = 'hang';
  t.equal((await api(1, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { enabled: true })).status, 200);
  // The first request, unanswered: its sender is killed before its attempt times out (and is recorded).
  const deadline = Date.now() + kHangMs;
  while (receiver.received.length === 0) {
    if (Date.now() > deadline) throw new Error('no request reached the receiver');
    await sleep(5);
  }
  receiver.answer = 200;
  const [lost] = receiver.received;
  const sender = senderOf(nodes, lost!.remotePort, receiverPort);
  if (sender === undefined) throw new Error(`no node holds the connection from port ${lost!.remotePort}`);
  const exited = new Promise((resolve) => sender.proc.once('exit', (_code, signal) => resolve(signal)));
  sender.proc.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL', 'the sending node killed');
  t.ok(Date.now() - lost!.at < kTimeoutMs, 'killed before its attempt could time out');
  const survivor = nodes.indexOf(sender) === 0 ? 1 : 0;
  t.comment(`node ${nodes.indexOf(sender)} sent it and was killed; node ${survivor} survives`);

  await receiver.waitFor(2, kHangMs);
  const again = receiver.received[1]!;
  t.equal(senderOf(nodes, again.remotePort, receiverPort), nodes[survivor], 'sent again by the surviving node');
  const [delivered] = await pollUntil(
    'delivered, read from the surviving node',
    () => log(survivor, webhookId),
    (l) => l[0]?.status === 'delivered',
  );
  t.equal(again.headers['webhook-id'], lost!.headers['webhook-id'], 'the same message sent again: the receiver saw its webhook-id twice');
  t.equal(again.body, lost!.body, 'the same body');
  t.match(verified(secret, lost!), { type: 'flag.patch', data: { flag: { id: seeded.flagId, enabled: true } } });
  t.ok(verified(secret, again), 'signed anew, and verified');
  // The claim was taken before the first request was sent, and lasts 6 s: the survivor waited it out.
  t.ok(again.at - lost!.at > 3 * kTimeoutMs - 1500, `sent again once the claim ran out (${again.at - lost!.at} ms after the first)`);
  // The killed node never recorded its attempt: the log counts the attempt that was answered.
  t.match(delivered, { id: lost!.headers['webhook-id'], status: 'delivered', attempts: 1, lastStatus: 200, lastError: null });
  await sleep(500);
  t.equal(receiver.received.length, 2, 'two requests in all: one lost, one answered');

  // PostgreSQL's change log: queued, claimed by one node, claimed by another once that claim ran out, delivered.
  const trail = (await changeLog(pg, database))
    .filter(({ change }) => change.kind === 'delivery' && change.value.id === delivered!.id)
    .map(({ change }) => change.value as WebhookDelivery);
  t.same(
    trail.map((d) => ({ status: d.status, attempts: d.attempts })),
    [
      { status: 'pending', attempts: 0 },
      { status: 'pending', attempts: 0 },
      { status: 'pending', attempts: 0 },
      { status: 'delivered', attempts: 1 },
    ],
  );
  const [, first, second] = trail;
  t.not(first!.claimedBy, null);
  t.not(second!.claimedBy, null);
  t.not(second!.claimedBy, first!.claimedBy, 'claimed by another node');
  t.ok(second!.lastAttemptAt === null, 'no outcome recorded between the two claims');
  t.ok(second!.nextAttemptAt! - 3 * kTimeoutMs >= first!.nextAttemptAt!, 'the second claim taken once the first had run out');
});

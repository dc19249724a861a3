// Who is told of a change request (docs/approvals.md: Who is told), black-box: a real server with a real
// SMTP server and a webhook receiver. A request opened, edited and made stale mails each person who may
// approve it (not its author, not a viewer, not a role the policy leaves out), through the outbox and
// SMTP, and sends the project's `request` webhooks request.open, request.edit and request.stale, each
// naming the request by its title with its approvals, whether it is stale and why.
import t from 'tap';
import { principalOf } from '../../src/actor/audit-actor.js';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { smtpServer, until } from '../helpers/smtp.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { startWorldServer } from '../helpers/world-server.js';

const smtp = await smtpServer();
t.teardown(() => smtp.close());
const { server, world } = await startWorldServer(t, {
  FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1',
  FLAGWIRE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
});
const { ids, secrets } = world;
const base = server.baseUrl;

async function ok(args: string[]): Promise<any> {
  const r = await cli(server.dataDir, args);
  if (r.code !== 0 && r.code !== 3) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
  return r.json;
}

interface Message {
  to: string;
  subject: string;
  text: string;
}
const outbox = async () => (await ok(['mail', 'list'])).messages as Message[];

t.test('opened, edited, gone stale: mail to each person who may approve it, and a `request` webhook event', async (t) => {
  const pipeline = world.run('tokenCreate', {
    projectId: ids.multi,
    principal: principalOf(ids.owner),
    name: 'pipeline',
    permission: 'write',
  });
  await ok([
    'approvals',
    'set',
    ids.multi,
    '--env',
    'production',
    '--required',
    '2',
    '--roles',
    'owner,admin',
    '--bypass-token',
    pipeline.id,
  ]);
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const hook = await call(base, 'POST', '/api/v1/webhooks', {
    token: secrets.multiWrite,
    body: { url: receiver.url, events: ['request'] },
  });
  t.equal(hook.status, 201, hook.text);
  const mailedBefore = (await outbox()).length;
  // The editor's own token: its changes are the editor's to make (approved by others).
  const editors = world.run('tokenCreate', {
    projectId: ids.multi,
    principal: principalOf(ids.editor),
    name: 'eds-token',
    permission: 'write',
  });
  const patch = (body: unknown, token = editors.secret) =>
    call(base, 'PATCH', `/api/v1/flags/${ids.groupFlag}?env=production`, { token, body });

  // ---- opened by the editor ----
  const opened = await patch({ enabled: true });
  t.equal(opened.status, 202, opened.text);
  const request = opened.json.changeRequest;
  t.equal(request.title, 'Turn on search in production');
  await until('the request.open event', () => receiver.received.length >= 1);
  // `mail list` lists the outbox oldest first.
  let mail = (await outbox()).slice(mailedBefore);
  t.strictSame(mail.map((m) => m.to).sort(), ['admin@a.test', 'owner@a.test'], 'the owner and the admin: not its author, not the viewer');
  for (const m of mail) {
    t.equal(m.subject, 'Flagwire: a change waits for your approval: Turn on search in production');
    t.match(m.text, ` asked for a change to production of project "Platform": Turn on search in production.`);
    t.match(m.text, 'It has 0 of the 2 approvals it needs.');
    t.match(m.text, `flagwire request show ${request.id}`);
  }
  await until('both delivered over SMTP', () => smtp.received.length >= 2);
  t.strictSame(smtp.received.flatMap((m) => m.to).sort(), ['admin@a.test', 'owner@a.test'], 'sent over SMTP');
  t.ok(
    smtp.received.every((m) => m.raw.includes(request.id)),
    'each names the request',
  );

  // ---- edited by its author: approvals voided, told again ----
  await ok(['request', 'approve', request.id, '--version', String(request.version), '--as', ids.admin]);
  const edited = await patch({ trafficPercentage: 30 });
  t.equal(edited.json.edited, true, edited.text);
  const count = (await outbox()).length;
  mail = (await outbox()).filter((m) => m.subject.startsWith('Flagwire: a change request you may approve was edited'));
  t.strictSame(mail.map((m) => m.to).sort(), ['admin@a.test', 'owner@a.test'], 'the admin approved before the edit: asked again');
  t.equal(
    mail[0]!.subject,
    'Flagwire: a change request you may approve was edited: Turn on search in production; Set the traffic percentage of flag search in production to 30%',
  );
  t.match(mail[0]!.text, 'Approvals given before the edit no longer count.');

  // ---- the pipeline changes the same flag where the request changes nothing: nobody is told ----
  const elsewhere = await call(base, 'PATCH', `/api/v1/flags/${ids.groupFlag}?env=staging`, {
    token: pipeline.secret,
    body: { trafficPercentage: 70 },
  });
  t.equal(elsewhere.status, 200, elsewhere.text);
  t.equal((await outbox()).length, count, 'a write to fields the request does not change leaves it applicable: no mail');

  // ---- the pipeline (a bypass token) changes production's traffic: the request is stale ----
  const bypass = await patch({ trafficPercentage: 50 }, pipeline.secret);
  t.equal(bypass.status, 200, bypass.text);
  mail = (await outbox()).slice(count);
  t.strictSame(mail.map((m) => m.to).sort(), ['admin@a.test', 'owner@a.test'], 'told it went stale');
  t.match(mail[0]!.subject, /^Flagwire: a change request you may approve can no longer be applied: Turn on search/);
  t.match(
    mail[0]!.text,
    /can no longer be applied: the flag "search" changed since this request was made \(environments\.production\.trafficPercentage\)/,
  );
  const again = await patch({ trafficPercentage: 60 }, pipeline.secret);
  t.equal(again.status, 200);
  t.equal((await outbox()).length, count + 2, 'a request stale already is not told of again');

  // ---- the webhook events, in the order they were audited ----
  await until('request.open, .approve, .edit, .stale', () => receiver.received.length >= 4);
  const bodies = receiver.received.map((r) => JSON.parse(r.body)).sort((a, b) => a.data.audit.seq - b.data.audit.seq);
  t.strictSame(
    bodies.map((b) => b.type),
    ['request.open', 'request.approve', 'request.edit', 'request.stale'],
  );
  t.match(bodies[0].data.audit.changes.request.after, {
    id: request.id,
    title: 'Turn on search in production',
    status: 'pending',
    environments: ['production'],
    author: { id: `token:${editors.id}` },
    approvals: 0,
    required: 2,
    stale: false,
    problem: null,
  });
  t.match(bodies[2].data.audit, {
    actor: `token:${editors.id}`,
    changes: { request: { after: { approvals: 0, note: 'its approvals were voided', title: /; Set the traffic percentage/ } } },
  });
  t.match(bodies[3].data.audit, {
    actor: `token:${pipeline.id}`,
    changes: { request: { after: { id: request.id, stale: true, problem: /changed since this request was made/ } } },
  });
  await call(base, 'POST', `/api/v1/webhooks/${hook.json.id}/delete`, { token: secrets.multiWrite });
});

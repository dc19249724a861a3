// Approvals over the Management API, black-box (docs/approvals.md; issue 46): with a policy set on
// production by the real command line, a write token's change to production answers 202 with the
// change request (the OpenAPI document's ChangeRequested) and changes nothing that evaluation reads;
// staging, and a project without a policy, answer as the spec says; a bypass token applies at once. The
// change-request routes list, show, comment and withdraw, and refuse what they must (never a 5xx). The
// author's next change edits the request and voids its approvals; the completing approval applies it as
// one revision, audited as its author made it with every approver; a field moved since refuses it
// (409, nothing changed, stale); a change to another field is kept. Webhooks get each act.
import t, { type Test } from 'tap';
import { Value } from '@sinclair/typebox/value';
import { ChangeRequestedBody } from '../../src/approvals/change-requested.js';
import { ChangeRequestList, ChangeRequestView } from '../../src/approvals/request-view.js';
import { FlatFlag } from '../../src/flags/representation-shapes.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { cli } from '../helpers/cli.js';
import { call, type Reply } from '../helpers/http.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { startWorldServer } from '../helpers/world-server.js';
import { getUser } from '../../src/model/records/org-records.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1' });
const { ids, secrets, tokenIds } = world;
/**
 * A second Admin: the project's write token (platform-write) is the Owner's, and a token's change counts
 * as its creator's (docs/approvals.md), so the Owner may not approve what it asks for.
 */
const reviewer = world.run('userCreate', { email: 'reviewer@a.test' }).id;
world.run('orgAddMember', { principal: kOperator, orgId: ids.orgA, userId: reviewer, role: 'admin' });
const base = server.baseUrl;
const api = (method: string, path: string, body?: unknown, token = secrets.multiWrite) => call(base, method, path, { token, body });
const patch = (flagId: string, env: string, body: unknown, token = secrets.multiWrite) =>
  api('PATCH', `/api/v1/flags/${flagId}?env=${env}`, body, token);
const revisionOf = (r: Reply) => Number(r.headers.get('flagwire-revision'));

/** The flag as the Management API, the Evaluation API and OFREP answer it in `env` (cohort qa). */
async function served(flagId: string, env: string) {
  const flag = (await api('GET', `/api/v1/flags/${flagId}?env=${env}`, undefined, secrets.multiRead)).json;
  const evaluated = (await call(base, 'GET', `/v1/flags/${flagId}?env=${env}&cohort=qa&targetingKey=u1`)).json;
  const ofrep = (
    await call(base, 'POST', `/ofrep/v1/evaluate/flags/${flagId}`, { body: { context: { env, cohort: 'qa', targetingKey: 'u1' } } })
  ).json;
  return { enabled: flag.enabled, trafficPercentage: flag.trafficPercentage, evaluated: evaluated.enabled, ofrep: ofrep.value };
}

/** `flagwire ...` that must succeed (its --json answer). */
async function ok(args: string[]): Promise<any> {
  const r = await cli(server.dataDir, args);
  if (r.code !== 0) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
  return r.json;
}

const guard = (required: number, more: string[] = []) =>
  ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', String(required), '--as', ids.admin, ...more]);
/** `flagwire request approve` by `userId` of the version `request show` reads first (the approver reads, then approves). */
async function approve(requestId: string, userId: string) {
  const seen = await ok(['request', 'show', requestId]);
  return cli(server.dataDir, ['request', 'approve', requestId, '--version', String(seen.version), '--as', userId]);
}

/** A new write token of the multi project, and the policy (required `required`) naming it a bypass token. */
async function bypassing(name: string, required: number) {
  const token = world.run('tokenCreate', { projectId: ids.multi, principal: principalOf(ids.owner), name, permission: 'write' });
  await guard(required, ['--bypass-token', token.id]);
  return token;
}

let flags = 0;
/** A new group flag of the multi project, off in production (needs no approval), on in staging. */
async function newFlag(): Promise<string> {
  const r = await api('POST', '/api/v1/flags', { name: `f-${++flags}`, environments: { staging: { enabled: true }, production: {} } });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id;
}

/** A 202 answer: the change request, as the OpenAPI document's ChangeRequested says; `edited`: an edit of the author's pending one. */
function requested(t: Test, r: Reply, what: string, edited = false): any {
  t.equal(r.status, 202, `${what}: 202 Accepted`);
  t.ok(Value.Check(ChangeRequestedBody, r.json), `${what}: the body is a ChangeRequested`);
  t.strictSame(Object.keys(r.json).sort(), ['changeRequest', 'detail', 'edited']);
  t.equal(r.json.edited, edited, `${what}: a request ${edited ? 'edited' : 'opened'}`);
  t.match(r.json.changeRequest, { id: /^chr_/, status: 'pending', projectId: ids.multi, environments: ['production'] });
  t.match(
    r.json.detail,
    edited
      ? /^production needs approval: this change was not applied; it edited change request chr_\w+, which holds it with the change it held /
      : /^production needs approval: this change was not applied; change request chr_\w+ holds it /,
  );
  return r.json.changeRequest;
}

/** A refusal in the spec's envelope. */
function refused(t: Test, r: Reply, status: number, error: string, detail?: RegExp): void {
  t.equal(r.status, status, `${status} ${error}`);
  t.strictSame(Object.keys(r.json ?? {}).sort(), ['detail', 'docs', 'error'], 'the error envelope');
  t.equal(r.json?.error, error);
  if (detail) t.match(r.json?.detail, detail);
}

const audit = async (): Promise<any[]> => (await ok(['audit', ids.multi, '--limit', '1000'])).entries;

t.test('a project without a policy answers exactly as the spec says', async (t) => {
  const before = await patch(ids.groupFlag, 'production', { trafficPercentage: 5 });
  t.equal(before.status, 200);
  t.strictSame(Object.keys(before.json).sort(), ['changed', 'flag']);
  t.ok(Value.Check(FlatFlag, before.json.flag));
  t.match(before.json, { changed: true, flag: { trafficPercentage: 5, environment: 'production' } });
  const created = await api('POST', '/api/v1/flags', { name: 'unguarded', environments: { production: { enabled: true } } });
  t.equal(created.status, 201);
  t.match(created.json.environments.production, { enabled: true });
  // Another project's policy guards nothing here.
  await guard(1);
  const single = await api('PATCH', `/api/v1/flags/${ids.flag}`, { trafficPercentage: 7 }, secrets.write);
  t.equal(single.status, 200);
  t.match(single.json, { changed: true, flag: { trafficPercentage: 7 } });
  t.equal((await api('GET', '/api/v1/change-requests', undefined, secrets.write)).json.changeRequests.length, 0);
});

t.test('the OpenAPI document names the 202 of the writes a policy can hold', async (t) => {
  const doc = (await call(base, 'GET', '/api/v1/openapi.json')).json;
  for (const [path, method] of [
    ['/api/v1/flags/{id}', 'patch'],
    ['/api/v1/flags', 'post'],
  ] as const) {
    const op = Object.entries(doc.paths).find(([p]) => p.replace(/\{[^}]+\}/g, '{id}') === path)?.[1] as any;
    t.strictSame(op?.[method]?.responses?.['202']?.content?.['application/json']?.schema, { $ref: '#/components/schemas/ChangeRequested' });
  }
  t.ok(doc.components.schemas.ChangeRequested);
});

t.test('PATCH ?env=production: 202 with the request, nothing served changes; ?env=staging: 200', async (t) => {
  await guard(1);
  const flagId = await newFlag();
  const was = await served(flagId, 'production');
  t.strictSame(was, { enabled: false, trafficPercentage: 0, evaluated: false, ofrep: false });
  const request = requested(t, await patch(flagId, 'production', { enabled: true, cohorts: ['qa'] }), 'PATCH production');
  t.ok(Value.Check(ChangeRequestView, request));
  t.match(request, {
    author: { id: `token:${tokenIds.multiWrite}`, name: 'platform-write' },
    required: 1,
    approvals: [],
    stale: false,
    problem: null,
    decided: null,
  });
  t.match(
    request.diff.map((d: any) => [d.field, d.current, d.proposed]),
    [
      ['environments.production.enabled', false, true],
      ['environments.production.cohorts', null, ['qa']],
    ],
  );
  t.strictSame(await served(flagId, 'production'), was, 'the Management API, the Evaluation API and OFREP serve it unchanged');
  const staging = await patch(flagId, 'staging', { trafficPercentage: 40 });
  t.equal(staging.status, 200, 'staging is not guarded');
  t.match(staging.json, { changed: true, flag: { trafficPercentage: 40, environment: 'staging' } });
  t.equal((await approve(request.id, ids.editor)).code, 0);
  t.match(await served(flagId, 'production'), { enabled: true, evaluated: true, ofrep: true }, 'applied once approved');
});

t.test('POST /api/v1/flags: on in production is a request (202), off is made (201)', async (t) => {
  await guard(1);
  const on = requested(t, await api('POST', '/api/v1/flags', { name: 'born-on', environments: { production: { enabled: true } } }), 'on');
  t.match(on.summary, /born-on/);
  t.equal((await api('GET', '/api/v1/flags', undefined, secrets.multiRead)).json.flags.filter((f: any) => f.name === 'born-on').length, 0);
  const off = await api('POST', '/api/v1/flags', { name: 'born-off', environments: { production: { trafficPercentage: 0 } } });
  t.equal(off.status, 201);
  t.equal((await approve(on.id, reviewer)).code, 0);
  const made = (await api('GET', '/api/v1/flags', undefined, secrets.multiRead)).json.flags.filter((f: any) => f.name === 'born-on');
  t.equal(made.length, 1, 'made once approved');
  t.match(made[0].environments.production, { enabled: true });
});

t.test('a bypass token applies at once', async (t) => {
  const pipeline = await bypassing('deploy', 2);
  const flagId = await newFlag();
  const r = await patch(flagId, 'production', { enabled: true }, pipeline.secret);
  t.equal(r.status, 200);
  t.match(r.json, { changed: true, flag: { enabled: true } });
  t.match(await served(flagId, 'production'), { enabled: true });
  t.equal((await patch(flagId, 'production', { enabled: false })).status, 202, 'another token of the project still needs approval');
});

t.test('the change-request routes: list, status filter, one, another project, comments, withdraw', async (t) => {
  await guard(1);
  const flagId = await newFlag();
  const request = requested(t, await patch(flagId, 'production', { enabled: true }), 'PATCH');
  const list = await api('GET', '/api/v1/change-requests', undefined, secrets.multiRead);
  t.equal(list.status, 200);
  t.ok(Value.Check(ChangeRequestList, list.json));
  t.equal(list.json.changeRequests[0].id, request.id, 'newest first');
  const pending = (await api('GET', '/api/v1/change-requests?status=pending', undefined, secrets.multiRead)).json.changeRequests;
  t.ok(pending.some((q: any) => q.id === request.id));
  t.ok(pending.every((q: any) => q.status === 'pending'));
  const applied = (await api('GET', '/api/v1/change-requests?status=applied', undefined, secrets.multiRead)).json.changeRequests;
  t.ok(applied.length > 0 && applied.every((q: any) => q.status === 'applied'));
  refused(
    t,
    await api('GET', '/api/v1/change-requests?status=open', undefined, secrets.multiRead),
    400,
    'Invalid request',
    /status must be one of/,
  );
  const one = await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead);
  t.equal(one.status, 200);
  t.strictSame(one.json, request);
  refused(t, await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.writeB), 404, 'Not found');
  refused(t, await api('POST', `/api/v1/change-requests/${request.id}/comments`, { text: 'hi' }, secrets.writeB), 404, 'Not found');
  refused(t, await api('POST', `/api/v1/change-requests/${request.id}/withdraw`, undefined, secrets.writeB), 404, 'Not found');
  t.equal((await api('GET', '/api/v1/change-requests', undefined, secrets.writeB)).json.changeRequests.length, 0);
  refused(t, await api('GET', '/api/v1/change-requests/chr_nope', undefined, secrets.multiRead), 404, 'Not found');
  refused(
    t,
    await api('POST', `/api/v1/change-requests/${request.id}/comments`, { text: 'x' }, secrets.multiRead),
    403,
    'Insufficient permission',
  );

  const snapshot = world.snapshot();
  for (const raw of [
    '',
    'null',
    '[]',
    '"text"',
    '{',
    '{}',
    '{"text": 5}',
    '{"text": ""}',
    '{"text": "   "}',
    '{"text": "a", "more": 1}',
    `{"text": "${'x'.repeat(2001)}"}`,
  ]) {
    const r = await call(base, 'POST', `/api/v1/change-requests/${request.id}/comments`, { token: secrets.multiWrite, raw });
    t.equal(r.status, 400, `comment ${raw.slice(0, 20)}: 400`);
    t.equal(r.json?.error, 'Invalid request');
  }
  t.equal(world.snapshot(), snapshot, 'no bad comment changed anything');
  const commented = await api('POST', `/api/v1/change-requests/${request.id}/comments`, { text: 'ship it after lunch' });
  t.equal(commented.status, 200);
  t.ok(Value.Check(ChangeRequestView, commented.json));
  t.match(commented.json.comments, [{ id: `token:${tokenIds.multiWrite}`, name: 'platform-write', text: 'ship it after lunch' }]);

  // A token another person made is not its author (one the Owner made is: a token's change is its creator's).
  const othersToken = world.run('tokenCreate', {
    projectId: ids.multi,
    principal: principalOf(ids.admin),
    name: 'admins',
    permission: 'write',
  });
  refused(
    t,
    await api('POST', `/api/v1/change-requests/${request.id}/withdraw`, undefined, othersToken.secret),
    403,
    'Forbidden',
    /Only its author/,
  );
  const withdrawn = await api('POST', `/api/v1/change-requests/${request.id}/withdraw`);
  t.equal(withdrawn.status, 200);
  t.match(withdrawn.json, { status: 'withdrawn', decided: { id: `token:${tokenIds.multiWrite}` } });
  refused(t, await api('POST', `/api/v1/change-requests/${request.id}/withdraw`), 409, 'Change request out of date', /withdrawn already/);
  t.equal((await approve(request.id, ids.owner)).code, 1, 'a withdrawn request is not approved');
  t.match(await served(flagId, 'production'), { enabled: false });
});

t.test(
  "the author's next change edits the same request and voids its approvals; the completing approval applies it as one revision",
  async (t) => {
    await guard(2);
    const flagId = await newFlag();
    const first = requested(t, await patch(flagId, 'production', { enabled: true }), 'first PATCH');
    const flagName = (await api('GET', `/api/v1/flags/${flagId}`)).json.name as string;
    t.equal(first.title, `Turn on ${flagName} in production`, "titled in the audit log's words");
    t.equal(first.summary, `flag.patch ${flagName} in production`, 'its summary as ever');
    const once = await approve(first.id, ids.admin);
    t.equal(once.code, 0);
    t.match(once.json, { status: 'pending', approvals: [{ id: `user:${ids.admin}` }] });
    const second = requested(t, await patch(flagId, 'production', { trafficPercentage: 30 }), 'second PATCH', true);
    t.equal(second.id, first.id, 'the same request');
    t.strictSame(second.approvals, [], 'its approval voided');
    t.equal(second.title, `Turn on ${flagName} in production; Set the traffic percentage of flag ${flagName} in production to 30%`);
    t.strictSame(
      second.diff.map((d: any) => [d.field, d.proposed]),
      [
        ['environments.production.enabled', true],
        ['environments.production.trafficPercentage', 30],
      ],
    );
    t.equal(
      (await api('GET', '/api/v1/change-requests?status=pending', undefined, secrets.multiRead)).json.changeRequests.filter(
        (q: any) => q.id === first.id,
      ).length,
      1,
    );
    t.match(await served(flagId, 'production'), { enabled: false, trafficPercentage: 0 });

    t.equal((await approve(first.id, ids.admin)).code, 0);
    const same = requested(t, await patch(flagId, 'production', { trafficPercentage: 30 }), 'the same PATCH again', true);
    t.equal(same.id, first.id);
    t.equal(same.approvals.length, 1, 'a change that adds nothing leaves the request as it is, its approval kept');
    const revision = revisionOf(await api('GET', `/api/v1/flags/${flagId}`, undefined, secrets.multiRead));
    const last = await approve(first.id, reviewer);
    t.equal(last.code, 0);
    t.match(last.json, { status: 'applied', decided: { id: `user:${reviewer}` } });
    const after = await api('GET', `/api/v1/flags/${flagId}?env=production`, undefined, secrets.multiRead);
    t.equal(revisionOf(after), revision + 1, 'one revision');
    t.match(after.json, { enabled: true, trafficPercentage: 30 });
    t.equal(after.json.updatedAt, last.json.decided.at, "the flag's updatedAt is the time it was applied");
    const entries = (await audit()).filter((e) => e.flagId === flagId || e.changes?.request?.after?.id === first.id);
    const patches = entries.filter((e) => e.action === 'flag.patch');
    // The request's two PATCHes are audited as the one change applied (an edited request keeps one entry
    // per action, flag and environment: each field's first before and last after).
    t.equal(patches.length, 1, 'the two PATCHes, audited as the one change their author made');
    t.match(patches[0], {
      actor: `token:${tokenIds.multiWrite}`,
      env: 'production',
      changes: { enabled: { before: false, after: true }, trafficPercentage: { before: 0, after: 30 } },
      request: { id: first.id, approvedBy: [{ id: `user:${ids.admin}` }, { id: `user:${reviewer}` }] },
    });
    t.strictSame(
      entries.map((e) => e.action).reverse(),
      [
        'flag.create',
        'request.open',
        'request.approve',
        'request.edit',
        'request.approve',
        'flag.patch',
        'request.approve',
        'request.apply',
      ],
      'the history, oldest first: the change applied with its approval, in one transaction',
    );
  },
);

t.test('a field the request changes moved since: the approval is refused 409, nothing changes, the request says stale', async (t) => {
  const pipeline = await bypassing('hotfix', 1);
  const flagId = await newFlag();
  const request = requested(t, await patch(flagId, 'production', { enabled: true, trafficPercentage: 20 }), 'PATCH');
  t.equal(
    (await patch(flagId, 'production', { trafficPercentage: 60 }, pipeline.secret)).status,
    200,
    'the bypass token moves the same field',
  );
  const shown = (await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead)).json;
  t.match(shown, {
    status: 'pending',
    stale: true,
    problem: /changed since this request was made \(environments\.production\.trafficPercentage\)/,
  });
  const snapshot = world.snapshot();
  const r = await approve(request.id, reviewer);
  t.equal(r.code, 1);
  t.equal(r.json.error, 'Change request out of date');
  t.match(r.json.detail, /cannot be applied: .*Nothing was changed/);
  t.equal(world.snapshot(), snapshot, 'nothing written, not even the approval');
  t.match((await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead)).json, {
    status: 'pending',
    approvals: [],
    stale: true,
  });
  t.match(await served(flagId, 'production'), { enabled: false, trafficPercentage: 60 });
});

t.test('a change to another field meanwhile is kept when the request applies', async (t) => {
  await guard(1);
  const flagId = await newFlag();
  const request = requested(t, await patch(flagId, 'production', { enabled: true }), 'PATCH');
  t.equal((await patch(flagId, 'staging', { trafficPercentage: 77 })).status, 200);
  t.equal((await ok(['flag', 'describe', flagId, 'meanwhile'])).description, 'meanwhile');
  t.match((await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead)).json, { stale: false });
  t.equal((await approve(request.id, ids.admin)).code, 0);
  const flag = (await api('GET', `/api/v1/flags/${flagId}`, undefined, secrets.multiRead)).json;
  t.match(flag, { description: 'meanwhile', environments: { staging: { trafficPercentage: 77 }, production: { enabled: true } } });
});

t.test('reject; the author approving their own change; a viewer', async (t) => {
  await guard(1);
  const flagId = await newFlag();
  // A person's change (the command line, --as): its author is user:<editor>.
  const editorVariants = (flagId: string, defaultVariant: string) =>
    cli(server.dataDir, [
      'flag',
      'variants',
      flagId,
      '--env',
      'production',
      '--variants',
      '{"a":"A","b":"B"}',
      '--default-variant',
      defaultVariant,
      '--as',
      ids.editor,
    ]);
  const made = await editorVariants(flagId, 'a');
  t.equal(made.code, 3);
  const request = made.json.changeRequest;
  const own = await approve(request.id, ids.editor);
  t.equal(own.code, 1);
  t.match(own.json, { error: 'Forbidden', detail: /author of a change may not approve it/ });
  const viewer = await approve(request.id, ids.viewer);
  t.equal(viewer.code, 1);
  t.match(viewer.json, { error: 'Forbidden', detail: /needs the owner, admin, editor role/ });
  t.equal((await cli(server.dataDir, ['request', 'reject', request.id, '--as', ids.viewer])).code, 1, 'a viewer does not reject');
  await guard(1, ['--allow-self']);
  // Rejected by someone who may approve: never applied.
  const rejected = await cli(server.dataDir, ['request', 'reject', request.id, '--as', ids.admin, '--text', 'not now']);
  t.equal(rejected.code, 0);
  t.match(rejected.json, { status: 'rejected', decided: { id: `user:${ids.admin}`, text: 'not now' } });
  t.equal((await approve(request.id, ids.editor)).code, 1, 'a rejected request is not approved');
  t.notOk((await api('GET', `/api/v1/flags/${flagId}?env=production`, undefined, secrets.multiRead)).json.variants, 'never applied');
  // With --allow-self the author's own approval counts.
  const again = await editorVariants(flagId, 'b');
  t.equal(again.code, 3);
  const self = await approve(again.json.changeRequest.id, ids.editor);
  t.equal(self.code, 0);
  t.match(self.json, { status: 'applied' });
  t.match((await api('GET', `/api/v1/flags/${flagId}?env=production`, undefined, secrets.multiRead)).json, {
    variants: { a: 'A', b: 'B' },
    defaultVariant: 'b',
  });
});

t.test('webhooks get approvals.set, request.open, request.approve, request.apply and the flag event of the applied change', async (t) => {
  await guard(1);
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const hook = await api('POST', '/api/v1/webhooks', { url: receiver.url, events: ['request', 'flag'] });
  t.equal(hook.status, 201);
  await guard(1);
  const flagId = await newFlag();
  await receiver.waitFor(2);
  const request = requested(t, await patch(flagId, 'production', { enabled: true }), 'PATCH');
  await receiver.waitFor(3);
  t.equal((await approve(request.id, ids.admin)).code, 0);
  await receiver.waitFor(6);
  // Sent concurrently: in the order they were audited.
  const bodies = receiver.received.map((r) => JSON.parse(r.body)).sort((a, b) => a.data.audit.seq - b.data.audit.seq);
  t.strictSame(
    bodies.map((b) => b.type),
    ['approvals.set', 'flag.create', 'request.open', 'flag.patch', 'request.approve', 'request.apply'],
  );
  t.match(bodies[0].data.audit, { actor: `user:${ids.admin}`, changes: { approvals: { after: { env: 'production', required: 1 } } } });
  t.match(bodies[2].data.audit.changes.request.after, { id: request.id, status: 'pending' });
  t.match(bodies[4].data.audit.changes.request.after, { id: request.id, status: 'applied' });
  t.match(bodies[3].data, {
    flag: { id: flagId, environments: { production: { enabled: true } } },
    audit: { request: { id: request.id } },
  });
  await api('POST', `/api/v1/webhooks/${hook.json.id}/delete`);
});

t.test(
  'a change to two guarded environments needs the most approvals, from roles both rules allow; a bypass token of one is not enough',
  async (t) => {
    const pipeline = await bypassing('prod-only', 2);
    await guard(2, ['--roles', 'owner,admin', '--bypass-token', pipeline.id]);
    await ok(['approvals', 'set', ids.multi, '--env', 'staging', '--required', '1']);
    t.teardown(() => ok(['approvals', 'clear', ids.multi, '--env', 'staging']));
    const body = { name: 'both-on', environments: { staging: { enabled: true }, production: { enabled: true } } };
    const r = await api('POST', '/api/v1/flags', body, pipeline.secret);
    t.equal(r.status, 202, 'production alone it may bypass: not staging');
    const request = r.json.changeRequest;
    t.strictSame([...request.environments].sort(), ['production', 'staging']);
    t.equal(request.required, 2, 'the most any rule asks');
    const editor = await approve(request.id, ids.editor);
    t.match(editor.json, { error: 'Forbidden', detail: /needs the owner, admin role/ }, 'staging allows editors, production does not');
    t.match((await approve(request.id, ids.admin)).json, { status: 'pending', approvals: [{ id: `user:${ids.admin}` }] });
    t.match((await approve(request.id, reviewer)).json, { status: 'applied' });
    const made = (await api('GET', '/api/v1/flags', undefined, secrets.multiRead)).json.flags.find((f: any) => f.name === 'both-on');
    t.match(made.environments, { staging: { enabled: true }, production: { enabled: true } });
  },
);

// ---- issue 54: who an author is, approvals judged when applied, approvals bound to what was seen

/** `flagwire request approve` of `version`, as the approver read it. */
const approveVersion = (requestId: string, version: number, userId: string) =>
  cli(server.dataDir, ['request', 'approve', requestId, '--version', String(version), '--as', userId]);
const shownInWords = async (requestId: string) => (await cli(server.dataDir, ['request', 'show', requestId], { json: false })).stdout;

t.test("a token's change is its creator's: the request shows both; its creator may not approve it, and may withdraw it", async (t) => {
  await guard(1);
  const flagId = await newFlag();
  const bot = world.run('tokenCreate', { projectId: ids.multi, principal: principalOf(ids.admin), name: 'admin-bot', permission: 'write' });
  const request = requested(t, await patch(flagId, 'production', { enabled: true }, bot.secret), 'PATCH by the admin-bot token');
  const admin = getUser(world.store, ids.admin)!;
  const shown = (await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead)).json;
  t.ok(Value.Check(ChangeRequestView, shown), 'the OpenAPI schema holds');
  t.match(shown, {
    author: { id: `token:${bot.id}`, name: 'admin-bot', createdBy: { id: `user:${ids.admin}`, name: admin.name } },
    authoredBy: `token admin-bot, created by ${admin.name}`,
  });
  t.match(await shownInWords(request.id), new RegExp(`\\nauthor\\s+token admin-bot, created by ${admin.name} \\(token:${bot.id}\\)`));
  const snapshot = world.snapshot();
  const own = await approve(request.id, ids.admin);
  t.equal(own.code, 1);
  t.match(own.json, { error: 'Forbidden', detail: /author of a change may not approve it \(this one is by token admin-bot, created by/ });
  t.equal(world.snapshot(), snapshot, 'nothing recorded');
  t.match(await served(flagId, 'production'), { enabled: false });
  const withdrawn = await cli(server.dataDir, ['request', 'withdraw', request.id, '--as', ids.admin]);
  t.equal(withdrawn.code, 0, "the token's creator withdraws it");
  t.match(withdrawn.json, { status: 'withdrawn', decided: { id: `user:${ids.admin}` } });
});

t.test('approving names the version seen: the GET answers it and an ETag; an older version is refused 409, nothing recorded', async (t) => {
  await guard(1);
  const flagId = await newFlag();
  const request = requested(t, await patch(flagId, 'production', { trafficPercentage: 10 }), 'PATCH 10%');
  t.equal(request.version, 1);
  const seen = await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead);
  const tag = seen.headers.get('etag');
  t.match(tag, new RegExp(`^"${request.id}\\.v1-[0-9a-f]{16}"$`), 'the ETag names the version');
  const again = await call(base, 'GET', `/api/v1/change-requests/${request.id}`, {
    token: secrets.multiRead,
    headers: { 'if-none-match': tag! },
  });
  t.equal(again.status, 304, 'unchanged: 304');
  t.match(await shownInWords(request.id), /\nversion\s+1\n/);

  // The author edits it while the approver reads version 1.
  const edited = requested(t, await patch(flagId, 'production', { enabled: true, trafficPercentage: 100 }), 'PATCH on, 100%', true);
  t.equal(edited.id, request.id, 'the same request, edited');
  t.equal(edited.version, 2);
  const now = await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead);
  t.not(now.headers.get('etag'), tag, 'a new ETag');
  t.equal(now.json.version, 2);

  const snapshot = world.snapshot();
  const stale = await approveVersion(request.id, 1, reviewer);
  t.equal(stale.code, 1);
  t.equal(stale.json.error, 'Change request changed');
  t.match(stale.json.detail, /not the version you approved \(1\): its author's edits have made it version 2/);
  t.equal(world.snapshot(), snapshot, 'nothing recorded: no approval, nothing applied');
  t.match(await served(flagId, 'production'), { enabled: false, trafficPercentage: 0 });

  const approved = await approveVersion(request.id, 2, reviewer);
  t.equal(approved.code, 0, approved.stdout);
  t.match(approved.json, { status: 'applied', version: 2 });
  t.match(await served(flagId, 'production'), { enabled: true, trafficPercentage: 100 }, 'the version approved');
});

t.test('an approval counts only while its approver may give it: one demoted before the request applies lapses, and says why', async (t) => {
  await guard(2);
  const demoted = world.run('userCreate', { email: 'demoted@a.test' }).id;
  world.run('orgAddMember', { principal: kOperator, orgId: ids.orgA, userId: demoted, role: 'admin' });
  const flagId = await newFlag();
  const request = requested(t, await patch(flagId, 'production', { enabled: true }), 'PATCH');
  t.match((await approve(request.id, demoted)).json, { status: 'pending', approvals: [{ id: `user:${demoted}` }] });
  t.equal((await cli(server.dataDir, ['org', 'add-member', ids.orgA, demoted, '--role', 'viewer'])).code, 0, 'demoted to viewer');

  const pendingView = (await api('GET', `/api/v1/change-requests/${request.id}`, undefined, secrets.multiRead)).json;
  t.match(pendingView, { approvals: [], lapsed: [{ id: `user:${demoted}`, why: /is viewer/ }] }, 'shown lapsed while pending');
  const second = await approve(request.id, reviewer);
  t.equal(second.code, 0, second.stdout);
  t.match(second.json, { status: 'pending', approvals: [{ id: `user:${reviewer}` }], lapsed: [{ id: `user:${demoted}` }] });
  t.match(await served(flagId, 'production'), { enabled: false }, 'one approval that counts of two: not applied');
  t.match(
    await shownInWords(request.id),
    /\nlapsed\s+demoted's approval of \S+ does not count: Approving this change needs .* is viewer\./,
  );

  const third = await approve(request.id, ids.admin);
  t.match(third.json, {
    status: 'applied',
    approvals: [{ id: `user:${reviewer}` }, { id: `user:${ids.admin}` }],
    lapsed: [{ id: `user:${demoted}`, why: /is viewer/ }],
  });
  t.equal(third.json.approvals.length, 2, 'only those that counted');
  t.match(await served(flagId, 'production'), { enabled: true });
  const entry = (await audit()).find((e) => e.action === 'flag.patch' && e.request?.id === request.id);
  t.strictSame(
    entry?.request.approvedBy.map((a: any) => a.id),
    [`user:${reviewer}`, `user:${ids.admin}`],
    'audited with the approvals that counted',
  );
});

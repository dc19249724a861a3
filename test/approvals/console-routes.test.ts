// The approvals capability's console routes (src/approvals/console-routes.ts) from outside, on the real
// server: the policy is set and cleared by an Admin or Owner only, each value checked; a change to a
// guarded environment answers 202 {changeRequest} and changes nothing; the requests page says per person
// why they may not approve; a viewer cannot approve; a member of another organisation finds neither the
// project's requests nor one of them (404), and cannot act on it; the flag's pending requests are listed
// on its page; a comment and the last approval apply it.
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn, type WebSession } from '../helpers/web-console.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const kPlatform = 'prj_DemoPlatform';

/** A new user with a console password, a member of `org` as `role`, signed in. */
async function person(t: Test, server: TestServer, name: string, org: string, role: string): Promise<{ id: string; session: WebSession }> {
  const dir = server.dataDir;
  const email = `${name.toLowerCase()}@demo.flagwire.test`;
  const id = (await cli(dir, ['user', 'create', '--email', email, '--name', name])).json.id as string;
  await cli(dir, ['org', 'add-member', org, id, '--role', role]);
  t.equal((await setPassword(dir, id, `${name} password 123\n`)).code, 0);
  return { id, session: await signIn(server.baseUrl, email, `${name} password 123`) };
}

t.test('approvals through /console/api: policy, 202 requests, who may approve, other projects', async (t) => {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const dir = server.dataDir;
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  const otherOrg = (await cli(dir, ['org', 'create', '--name', 'Elsewhere', '--plan', 'teams'])).json.id as string;
  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const editor = await person(t, server, 'Ed', orgId, 'editor');
  const admin = await person(t, server, 'Al', orgId, 'admin');
  const viewer = await person(t, server, 'Vi', orgId, 'viewer');
  const outsider = await person(t, server, 'Ot', otherOrg, 'owner');
  const api = (who: WebSession, method: string, path: string, body?: unknown) => consoleCall(base, who, method, path, { body });
  const flagId = ((await cli(dir, ['flag', 'list', kPlatform])).json.flags as { id: string; name: string }[]).find(
    (f) => f.name === 'search-v2',
  )!.id;
  const production = async () => (await api(owner, 'GET', `flags/${flagId}`)).json.flag.environments.production;

  // ---- the policy: an Admin or Owner sets it, each value checked by the command ----
  const rule = { env: 'production', required: 1, roles: ['owner', 'admin'], allowSelf: false, bypassTokens: [] };
  const byEditor = await api(editor.session, 'POST', `projects/${kPlatform}/approvals`, rule);
  t.equal(byEditor.status, 403, JSON.stringify(byEditor.json));
  for (const [wrong, detail] of [
    [{ ...rule, required: 9 }, 'required must be a whole number from 1 to 5'],
    [{ ...rule, env: 'nowhere' }, 'unknown environment "nowhere"'],
    [{ ...rule, required: '1' }, '"required" must be a whole number from 1 to 5'],
    [{ ...rule, env: 5 }, '"env" must be a string or null'],
    [{ ...rule, roles: ['god'] }, 'roles must name at least one of owner, admin, editor, viewer'],
    [{ ...rule, bypassTokens: ['tok_nope'] }, 'tok_nope'],
    [['not', 'an', 'object'], 'The request body must be a JSON object.'],
  ] as const) {
    const refused = await api(owner, 'POST', `projects/${kPlatform}/approvals`, wrong);
    t.equal(refused.status, 400, JSON.stringify(refused.json));
    t.match(refused.json.detail, detail);
  }
  t.equal((await api(owner, 'GET', `projects/${kPlatform}/approvals`)).json.rules.length, 0, 'nothing was set by a refusal');
  t.equal((await api(owner, 'POST', `projects/${kPlatform}/approvals`, rule)).status, 200);
  const policy = await api(viewer.session, 'GET', `projects/${kPlatform}/approvals`);
  t.equal(policy.status, 200, 'a viewer reads the policy');
  t.same(policy.json.rules, [rule]);
  t.same(policy.json.environments, ['staging', 'production']);
  t.equal(policy.json.can.configure, false, 'read-only for a viewer');
  t.equal((await api(outsider.session, 'GET', `projects/${kPlatform}/approvals`)).status, 404, "another organisation's project");

  // ---- a change to production: 202 {changeRequest}, nothing changed ----
  const before = await production();
  const patched = await api(editor.session, 'PATCH', `flags/${flagId}?env=production`, { enabled: !before.enabled });
  t.equal(patched.status, 202, JSON.stringify(patched.json));
  const request = patched.json.changeRequest;
  t.match(request, { id: /^chr_/, status: 'pending', environments: ['production'], required: 1, approvals: [] });
  t.same(await production(), before, 'the flag is unchanged');
  t.equal(
    (await api(editor.session, 'PATCH', `flags/${flagId}?env=staging`, { trafficPercentage: 20 })).status,
    200,
    'staging is not guarded',
  );

  // ---- who may approve, as each person reads the list ----
  const pendingFor = async (who: WebSession) => (await api(who, 'GET', `projects/${kPlatform}/requests`)).json.pending;
  t.equal((await pendingFor(admin.session))[0].notApprovable, null, 'an admin may');
  t.match(
    (await pendingFor(editor.session))[0].notApprovable,
    'needs the owner, admin role',
    'its author, an editor: the role is named first',
  );
  t.match((await pendingFor(viewer.session))[0].notApprovable, 'needs the owner, admin role');
  const page = await api(editor.session, 'GET', `requests/${request.id}`);
  t.equal(page.status, 200);
  t.equal(page.json.mayWithdraw, true, 'its author may withdraw it');
  t.same(
    page.json.request.diff.map((d: { field: string; current: unknown; proposed: unknown }) => [d.field, d.current, d.proposed]),
    [['environments.production.enabled', before.enabled, !before.enabled]],
  );
  t.equal((await api(admin.session, 'GET', `requests/${request.id}`)).json.mayWithdraw, false, 'no one else may');
  const onFlag = await api(viewer.session, 'GET', `flags/${flagId}/requests`);
  t.same(
    onFlag.json.requests.map((r: { id: string }) => r.id),
    [request.id],
    "the flag's page lists it",
  );

  // ---- a viewer cannot approve; another organisation's member finds nothing ----
  const byViewer = await api(viewer.session, 'POST', `requests/${request.id}/approve`, { ifVersion: 1 });
  t.equal(byViewer.status, 403, JSON.stringify(byViewer.json));
  t.match(byViewer.json.detail, 'needs the owner, admin role');
  for (const [method, path] of [
    ['GET', `requests/${request.id}`],
    ['GET', `projects/${kPlatform}/requests`],
    ['POST', `requests/${request.id}/approve`],
    ['POST', `requests/${request.id}/comments`],
  ] as const) {
    const answer = await api(outsider.session, method, path, method === 'POST' ? { text: 'hello' } : undefined);
    t.equal(answer.status, 404, `${method} ${path} by a member of another organisation: ${JSON.stringify(answer.json)}`);
  }
  t.equal((await api(owner, 'GET', 'requests/chr_doesnotexist')).status, 404, 'an unknown id');
  const still = (await api(admin.session, 'GET', `requests/${request.id}`)).json.request;
  t.match(still, { status: 'pending', approvals: [], comments: [] }, 'nothing was decided or said by those refused');

  const badNote = await api(admin.session, 'POST', `requests/${request.id}/approve`, { text: 5, ifVersion: 1 });
  t.same([badNote.status, badNote.json.detail], [400, '"text" must be a string'], 'a note is text');

  // ---- a comment, then the approval that applies it ----
  const comment = await api(viewer.session, 'POST', `requests/${request.id}/comments`, { text: 'fine by me' });
  t.equal(comment.status, 200, JSON.stringify(comment.json));
  t.equal((await api(viewer.session, 'POST', `requests/${request.id}/comments`, {})).status, 400, 'a comment needs text');
  const approved = await api(admin.session, 'POST', `requests/${request.id}/approve`, { text: 'go', ifVersion: request.version });
  t.equal(approved.status, 200, JSON.stringify(approved.json));
  t.match(approved.json, { status: 'applied', approvals: [{ id: `user:${admin.id}`, name: 'Al' }], comments: [{ text: 'fine by me' }] });
  t.equal((await production()).enabled, !before.enabled, 'applied');
  t.same((await api(viewer.session, 'GET', `flags/${flagId}/requests`)).json.requests, [], 'no longer pending on the flag');
  const lists = (await api(owner, 'GET', `projects/${kPlatform}/requests`)).json;
  t.same([lists.pending.length, lists.history.map((r: { id: string }) => r.id)], [0, [request.id]], 'in the history');

  // ---- cleared by an Admin or Owner only ----
  t.equal((await api(editor.session, 'POST', `projects/${kPlatform}/approvals/clear`, { env: 'production' })).status, 403);
  t.equal((await api(owner, 'POST', `projects/${kPlatform}/approvals/clear`, { env: 'production' })).status, 200);
  t.equal(
    (await api(editor.session, 'PATCH', `flags/${flagId}?env=production`, { enabled: before.enabled })).status,
    200,
    'applied at once again',
  );
});

t.test(
  "through /console/api: a token's request shows its creator, who may not approve it; an approval names the version seen",
  async (t) => {
    const server = await startTestServer({ demo: true });
    t.teardown(() => server.stop());
    const base = server.baseUrl;
    const dir = server.dataDir;
    const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
    const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
    const editor = await person(t, server, 'Ed', orgId, 'editor');
    const admin = await person(t, server, 'Al', orgId, 'admin');
    const api = (who: WebSession, method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      consoleCall(base, who, method, path, { body, headers });
    const flagId = ((await cli(dir, ['flag', 'list', kPlatform])).json.flags as { id: string; name: string }[]).find(
      (f) => f.name === 'search-v2',
    )!.id;
    const production = async () => (await api(owner, 'GET', `flags/${flagId}`)).json.flag.environments.production;
    const rule = { env: 'production', required: 1, roles: ['owner', 'admin'], allowSelf: false, bypassTokens: [] };
    t.equal((await api(owner, 'POST', `projects/${kPlatform}/approvals`, rule)).status, 200);
    const before = await production();

    // ---- a token the admin made: its request is the admin's ----
    const bot = (await cli(dir, ['token', 'create', kPlatform, '--as', admin.id, '--name', 'al-bot', '--permission', 'write'])).json;
    const asked = await call(base, 'PATCH', `/api/v1/flags/${flagId}?env=production`, {
      token: bot.secret,
      body: { enabled: !before.enabled },
    });
    t.equal(asked.status, 202, asked.text);
    const botRequest = asked.json.changeRequest.id as string;
    const page = (await api(admin.session, 'GET', `requests/${botRequest}`)).json;
    t.match(page.request, {
      author: { id: `token:${bot.id}`, name: 'al-bot', createdBy: { id: `user:${admin.id}`, name: 'Al' } },
      authoredBy: 'token al-bot, created by Al',
      notApprovable: /author of a change may not approve it \(this one is by token al-bot, created by Al\)/,
    });
    t.equal(page.mayWithdraw, true, "the token's creator may withdraw it");
    const own = await api(admin.session, 'POST', `requests/${botRequest}/approve`, { ifVersion: 1 });
    t.equal(own.status, 403, JSON.stringify(own.json));
    t.equal((await api(admin.session, 'POST', `requests/${botRequest}/withdraw`)).status, 200);
    t.same(await production(), before, 'nothing applied');

    // ---- the editor edits their request while the owner reads version 1 ----
    const first = await api(editor.session, 'PATCH', `flags/${flagId}?env=production`, { trafficPercentage: 17 });
    t.equal(first.status, 202, JSON.stringify(first.json));
    const id = first.json.changeRequest.id as string;
    const seen = (await api(owner, 'GET', `requests/${id}`)).json.request;
    t.equal(seen.version, 1);
    const edited = await api(editor.session, 'PATCH', `flags/${flagId}?env=production`, {
      enabled: !before.enabled,
      trafficPercentage: 100,
    });
    t.match(edited.json, { changeRequest: { id, version: 2 } }, 'the same request, its next version');
    const stale = await api(owner, 'POST', `requests/${id}/approve`, { ifVersion: seen.version });
    t.equal(stale.status, 409, JSON.stringify(stale.json));
    t.match(stale.json, { error: 'Change request changed', detail: /not the version you approved \(1\)/ });
    for (const [body, headers, detail] of [
      [{}, undefined, /ifVersion \(its `version`\) or If-Match \(its ETag\)/],
      [{ ifVersion: 'two' }, undefined, /"ifVersion" must be the version of the change request/],
      [{}, { 'if-match': '"v2"' }, /If-Match must be the ETag a GET of change request chr_\w+ answered/],
      [{}, { 'if-match': `"${botRequest}.v2-0123456789abcdef"` }, /If-Match must be the ETag a GET of change request chr_\w+ answered/],
    ] as const) {
      const refused = await api(owner, 'POST', `requests/${id}/approve`, body, headers);
      t.equal(refused.status, 400, JSON.stringify(refused.json));
      t.match(refused.json.detail, detail);
    }
    t.match((await api(owner, 'GET', `requests/${id}`)).json.request, { status: 'pending', version: 2, approvals: [] }, 'nothing recorded');
    t.same(await production(), before, 'nothing applied');

    // The ETag the Management API's GET answers names the version: sent as If-Match, it approves that version.
    const token = (await cli(dir, ['token', 'create', kPlatform, '--as', editor.id, '--name', 'reader', '--permission', 'read'])).json;
    const tagged = await call(base, 'GET', `/api/v1/change-requests/${id}`, { token: token.secret });
    const approved = await api(owner, 'POST', `requests/${id}/approve`, {}, { 'if-match': tagged.headers.get('etag')! });
    t.equal(approved.status, 200, JSON.stringify(approved.json));
    t.match(approved.json, { status: 'applied', version: 2 });
    t.match(await production(), { enabled: !before.enabled, trafficPercentage: 100 }, 'the version approved, applied');
  },
);

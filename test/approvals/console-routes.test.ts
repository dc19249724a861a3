// The approvals capability's console routes (src/approvals/console-routes.ts) from outside, on the real
// server: the policy is set and cleared by an Admin or Owner only, each value checked; a change to a
// guarded environment answers 202 {changeRequest} and changes nothing; the requests page says per person
// why they may not approve; a viewer cannot approve; a member of another organisation finds neither the
// project's requests nor one of them (404), and cannot act on it; the flag's pending requests are listed
// on its page; a comment and the last approval apply it.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn, type WebSession } from '../helpers/web-console.js';
import { startTestServer } from '../helpers/server.js';

const kPlatform = 'prj_DemoPlatform';

t.test('approvals through /console/api: policy, 202 requests, who may approve, other projects', async (t) => {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const dir = server.dataDir;
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  const otherOrg = (await cli(dir, ['org', 'create', '--name', 'Elsewhere', '--plan', 'teams'])).json.id as string;
  const person = async (name: string, org: string, role: string): Promise<{ id: string; session: WebSession }> => {
    const email = `${name.toLowerCase()}@demo.flagwire.test`;
    const id = (await cli(dir, ['user', 'create', '--email', email, '--name', name])).json.id as string;
    await cli(dir, ['org', 'add-member', org, id, '--role', role]);
    t.equal((await setPassword(dir, id, `${name} password 123\n`)).code, 0);
    return { id, session: await signIn(base, email, `${name} password 123`) };
  };
  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const editor = await person('Ed', orgId, 'editor');
  const admin = await person('Al', orgId, 'admin');
  const viewer = await person('Vi', orgId, 'viewer');
  const outsider = await person('Ot', otherOrg, 'owner');
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

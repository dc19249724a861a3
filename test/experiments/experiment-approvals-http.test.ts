// Experiments under approvals, black-box through a real server and the real command line (issue 59,
// item 1; docs/approvals.md, docs/api.md: Experiments): with production guarded, a start answers 202
// with the change request and starts nothing; rejected, nothing changes; approved by another person,
// the experiment runs and its flag's answers say so. While it runs, a change to who gets which variant
// of its flag is refused with a 400 naming the experiment on every path: a PATCH (even by a bypass
// token), a flag file applied, an approved change request asked for before it ran, a scheduled change
// falling due (failed, with why); a file that
// changes only the description passes. The stop is held and applied the same way.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Value } from '@sinclair/typebox/value';
import { ChangeRequestedBody } from '../../src/approvals/change-requested.js';
import { principalOf } from '../../src/actor/audit-actor.js';
import { cli } from '../helpers/cli.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const files = tempDir(t);
const base = server.baseUrl;
const api = (method: string, path: string, body?: unknown, token = secrets.multiWrite) => call(base, method, path, { token, body });
const key = 'search-exp';
const bypass = world.run('tokenCreate', { projectId: ids.multi, principal: principalOf(ids.owner), name: 'pipeline', permission: 'write' });
/** The editor's token: its request is not the owner's token's to edit. */
const editors = world.run('tokenCreate', { projectId: ids.multi, principal: principalOf(ids.editor), name: 'editor', permission: 'write' });

async function ok(args: string[]): Promise<any> {
  const r = await cli(server.dataDir, args);
  if (r.code !== 0) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
  return r.json;
}
const experiment = async () => (await api('GET', `/api/v1/experiments/${key}?env=production`)).json;
const flag = async () => (await api('GET', `/api/v1/flags/${ids.groupFlag}?env=production`)).json;
/** The version `request show` reads, then `request approve` of it by `userId`. */
async function approve(requestId: string, userId: string) {
  const seen = await ok(['request', 'show', requestId]);
  return cli(server.dataDir, ['request', 'approve', requestId, '--version', String(seen.version), '--as', userId, '--json']);
}
function requested(t: Test, r: { status: number; json: any; text: string }, what: string): string {
  t.equal(r.status, 202, `${what}: 202 ${r.text}`);
  t.ok(Value.Check(ChangeRequestedBody, r.json), `${what}: the body is a ChangeRequested`);
  t.match(r.json.changeRequest, { status: 'pending', environments: ['production'] });
  return r.json.changeRequest.id;
}

await ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--bypass-token', bypass.id, '--as', ids.admin]);
const made = await api('POST', '/api/v1/experiments?env=production', { ...experimentPlan(ids.groupFlag, 1000), key });
if (made.status !== 201) throw new Error(`create: ${made.status} ${made.text}`);

t.test('a start in production is a change request; rejected by another person, nothing starts', async (t) => {
  const id = requested(t, await api('POST', `/api/v1/experiments/${key}/start?env=production`), 'start');
  t.match(await experiment(), { status: 'draft' }, 'not started');
  t.equal((await flag()).experiment, undefined, 'its flag carries no key');
  const rejected = await cli(server.dataDir, ['request', 'reject', id, '--as', ids.admin, '--json']);
  t.equal(rejected.code, 0, rejected.stderr);
  t.match(await experiment(), { status: 'draft' }, 'rejected: still a draft');
  t.equal((await flag()).experiment, undefined);
});

t.test('approved by another person it runs; while it runs no path changes who gets which variant', async (t) => {
  // Asked for before it runs: the percentage in production, pending.
  const pending = requested(
    t,
    await api('PATCH', `/api/v1/flags/${ids.groupFlag}?env=production`, { trafficPercentage: 30 }, editors.secret),
    'a percentage',
  );
  const id = requested(t, await api('POST', `/api/v1/experiments/${key}/start?env=production`), 'start');
  const approved = await approve(id, ids.admin);
  t.equal(approved.code, 0, approved.stderr);
  t.equal(approved.json.status, 'applied');
  t.match(await experiment(), { status: 'running' });
  t.equal((await flag()).experiment, key, "its flag's state carries the key");
  const answer = (await call(base, 'GET', `/v1/flags/${ids.groupFlag}?env=production&targetingKey=u1`)).json;
  t.equal(answer.experimentKey, key, 'the Evaluation API says so');

  // As the API says it, and as the command line prints it (quoted in JSON).
  const names = /Flag search runs experiment \W+search-exp\W+ in production, and this change would alter who gets which variant there/;
  const before = await flag();
  const refusedPatch = await api('PATCH', `/api/v1/flags/${ids.groupFlag}?env=production`, { trafficPercentage: 70 }, bypass.secret);
  t.equal(refusedPatch.status, 400, 'a PATCH by a bypass token: 400');
  t.match(refusedPatch.json.detail, names);

  const approval = await approve(pending, ids.admin);
  t.not(approval.code, 0, 'the approval of the request asked for before it ran is refused');
  t.match(approval.stderr + approval.stdout, names);
  t.equal((await ok(['request', 'show', pending])).status, 'pending', 'which stays pending');
  t.equal((await ok(['request', 'withdraw', pending, '--as', ids.editor])).status, 'withdrawn', 'its author may withdraw it');

  const file = await ok(['export', ids.multi]);
  file.flags.search.environments.production.trafficPercentage = 90;
  const path = join(files, 'flags.json');
  writeFileSync(path, JSON.stringify(file));
  const applied = await cli(server.dataDir, ['apply', ids.multi, '--file', path, '--as', ids.owner]);
  t.equal(applied.code, 1, 'a flag file applied: refused');
  t.match(applied.stdout + applied.stderr, names);
  const overApi = await api('POST', '/api/v1/apply', file, bypass.secret);
  t.equal(overApi.status, 400, 'the same file over the API: 400');
  t.match(overApi.json.detail, names);
  t.strictSame(await flag(), before, 'nothing changed');

  // A scheduled change falling due (approved as the bypass token made it): failed, with why.
  const scheduled = await api(
    'POST',
    `/api/v1/flags/${ids.groupFlag}/schedules?env=production`,
    { at: Date.now() + 1000, patch: { trafficPercentage: 55 } },
    bypass.secret,
  );
  t.equal(scheduled.status, 201, scheduled.text);
  const failed = await pollUntil(
    'the scheduled change to run',
    async () => (await api('GET', '/api/v1/schedules')).json.schedules.find((s: { id: string }) => s.id === scheduled.json.id),
    (s: { status: string; outcome: string }) => s.status !== 'pending',
  );
  t.equal(failed.status, 'failed', 'a scheduled change falling due: failed');
  t.match(failed.outcome, names);
  t.strictSame(await flag(), before, 'nothing changed');

  // A file that changes only the description: applied.
  const described = await ok(['export', ids.multi]);
  described.flags.search.description = 'measured';
  writeFileSync(path, JSON.stringify(described));
  const passed = await cli(server.dataDir, ['apply', ids.multi, '--file', path, '--as', ids.owner]);
  t.equal(passed.code, 0, `a description passes: ${passed.stdout} ${passed.stderr}`);
  t.equal((await flag()).description, 'measured');

  // The stop, at the command line: held (exit 3), and applied when approved: the flag drops the key.
  const stopping = await cli(server.dataDir, ['experiment', 'stop', ids.multi, key, '--env', 'production', '--as', ids.editor, '--json']);
  t.equal(stopping.code, 3, `the stop: exit 3 ${stopping.stderr}`);
  const stop = stopping.json.changeRequest.id as string;
  t.match(stopping.json.changeRequest, { status: 'pending', author: { id: `user:${ids.editor}` } });
  t.match(await experiment(), { status: 'running' }, 'running while the stop is pending');
  t.equal((await approve(stop, ids.admin)).code, 0);
  t.match(await experiment(), { status: 'stopped' });
  t.equal((await flag()).experiment, undefined);
});

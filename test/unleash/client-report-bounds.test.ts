// Black-box: what an SDK token's reports can add to a flag's usage is bounded (issue 96, item 7;
// docs/operations.md: Flag usage). A flag's count in one report is yes + no, at most kMaxReportCount
// (the probe's 2^31 per toggle counts 10 million); a project's tokens send at most kMaxReportsPerWindow
// reports a minute to the node (test/server/frontend-threads.test.ts: however many threads), past which a report is a 429 in the envelope with Retry-After,
// counting nothing, while another project's reports are still taken; the stock unleash-client keeps a
// refused report's counts. A total never passes Number.MAX_SAFE_INTEGER (saturatingSum, tested in-process).
import t from 'tap';
import { saturatingSum } from '../../src/model/flags.js';
import { kMaxReportCount } from '../../src/unleash/client-reports.js';
import { kMaxReportsPerWindow } from '../../src/unleash/report-rate.js';
import { call } from '../helpers/http.js';
import { flushActivity } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const { ids, secrets } = world;

const post = (authorization: string, body: unknown) =>
  call(server.baseUrl, 'POST', '/api/client/metrics', { headers: { 'content-type': 'application/json', authorization }, body });
const evaluations = async (id: string, token: string) =>
  (await call(server.baseUrl, 'GET', `/api/v1/flags/${id}`, { token })).json.evaluations as number;
const report = (toggles: Record<string, unknown>) => ({ appName: 'billing', instanceId: 'i-1', bucket: { toggles } });

t.test("one report counts a flag at most kMaxReportCount times: the probe's 2^31 - 1 per answer is clamped", async (t) => {
  await flushActivity(server);
  const before = await evaluations(ids.flag, secrets.read);
  const max = 2 ** 31 - 1;
  const r = await post(secrets.read, report({ checkout: { yes: max, no: max, variants: { a: max } } }));
  t.equal(r.status, 202, 'accepted, as the SDK expects');
  await flushActivity(server);
  t.equal(await evaluations(ids.flag, secrets.read), before + kMaxReportCount, `counted ${kMaxReportCount}, not ${2 * max}`);
  t.equal((await post(secrets.read, report({ checkout: { yes: 3, no: 4 } }))).status, 202);
  await flushActivity(server);
  t.equal(await evaluations(ids.flag, secrets.read), before + kMaxReportCount + 7, 'a real count is counted as it is');
});

t.test("a project's reports past the window's bound: 429 with Retry-After, counting nothing; another project's still taken", async (t) => {
  await flushActivity(server);
  const before = await evaluations(ids.flag, secrets.read);
  const otherBefore = await evaluations(ids.flagB, secrets.writeB);
  // Two reports were taken by the test before, in the same minute's window (at most: a new window only lowers it).
  const statuses: number[] = [];
  for (let i = 0; i < kMaxReportsPerWindow; i++) statuses.push((await post(secrets.read, report({ checkout: { yes: 1, no: 0 } }))).status);
  const accepted = statuses.filter((s) => s === 202).length;
  t.ok(accepted >= kMaxReportsPerWindow - 2 && statuses.every((s) => s === 202 || s === 429), `${accepted} taken, the rest 429`);
  const refused = await post(secrets.read, report({ checkout: { yes: 1000, no: 0 } }));
  t.equal(refused.status, 429, 'past the bound: 429');
  t.equal(refused.json.error, 'Too many reports', 'in the envelope');
  t.match(refused.json.detail, `more than ${kMaxReportsPerWindow} reports in 60 s`);
  t.equal(refused.headers.get('retry-after'), '60', 'Retry-After: the window, after which a report is always taken');
  t.equal((await post(secrets.writeB, report({ checkout: { yes: 2, no: 0 } }))).status, 202, "another project's report is taken");
  await flushActivity(server);
  t.equal(await evaluations(ids.flag, secrets.read), before + accepted, 'only the taken reports counted');
  t.equal(await evaluations(ids.flagB, secrets.writeB), otherBefore + 2, "the other project's counted");
});

t.test('a total saturates at Number.MAX_SAFE_INTEGER: never inexact', async (t) => {
  t.equal(saturatingSum(3, 4), 7);
  t.equal(saturatingSum(Number.MAX_SAFE_INTEGER - 1, 1), Number.MAX_SAFE_INTEGER);
  t.equal(saturatingSum(Number.MAX_SAFE_INTEGER, kMaxReportCount), Number.MAX_SAFE_INTEGER, 'held there');
  t.equal(saturatingSum(2 ** 52, 2 ** 52), Number.MAX_SAFE_INTEGER);
});

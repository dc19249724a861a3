// Deprovision to 401 on one node (issue 61 item 2): a demo server, an Owner who enables SCIM, and per
// run a person provisioned by SCIM who holds a token (made in the console, signed in); then the SCIM
// PATCH Okta sends to deactivate ({"op":"replace","value":{"active":false}}) and the token asked again
// and again until it is refused: timed from the PATCH's send to its answer, and to the token's first 401.
// Run: npm run build && node dist/bench/scim-deprovision.bench.js [runs, default 20]
import { loadavg } from 'node:os';
import { call } from '../test/helpers/http.js';
import { startTestServer } from '../test/helpers/server.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn } from '../test/helpers/web-console.js';
import { machineInfo } from './environment.js';
import { median, percentile } from './stats.js';

const kRuns = Number(process.argv[2] ?? 20);

async function main(): Promise<void> {
  const server = await startTestServer({ demo: true });
  try {
    const base = server.baseUrl;
    const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
    const org = (await consoleCall(base, owner, 'GET', 'home')).json.orgs[0];
    const projectId = org.projects.find((p: { kind: string }) => p.kind === 'multi').id as string;
    const secret = (await consoleCall(base, owner, 'POST', `orgs/${org.id}/scim/secret`)).json.secret as string;
    await consoleCall(base, owner, 'POST', `orgs/${org.id}/scim/group-roles`, { body: { group: 'Editors', role: 'editor' } });
    const scim = (method: string, path: string, body: unknown) => call(base, method, `/scim/v2${path}`, { token: secret, body });
    const group = (await scim('POST', '/Groups', { displayName: 'Editors' })).json.id as string;
    const answered: number[] = [];
    const refused: number[] = [];
    for (let run = 0; run < kRuns; run++) {
      const email = `bench${run}@example.test`;
      const id = (await scim('POST', '/Users', { userName: email })).json.id as string;
      await scim('PATCH', `/Groups/${group}`, { Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] });
      if ((await setPassword(server.dataDir, id, 'bench password 1234\n')).code !== 0) throw new Error('password');
      const session = await signIn(base, email, 'bench password 1234');
      const token = (await consoleCall(base, session, 'POST', `projects/${projectId}/tokens`, { body: { name: 'ci', permission: 'read' } }))
        .json.secret as string;
      if ((await call(base, 'GET', '/api/v1/token', { token })).status !== 200) throw new Error('the token does not work');
      const t0 = performance.now();
      const patched = await scim('PATCH', `/Users/${id}`, { Operations: [{ op: 'replace', value: { active: false } }] });
      answered.push(performance.now() - t0);
      if (patched.status !== 200) throw new Error(`deprovision ${patched.status}: ${patched.text}`);
      while ((await call(base, 'GET', '/api/v1/token', { token })).status !== 401);
      refused.push(performance.now() - t0);
    }
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const line = (what: string, xs: number[]) =>
      `${what}: median ${median(xs).toFixed(1)} ms, p95 ${percentile(sorted(xs), 95).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
    console.log(`SCIM deprovision to 401 on one node, ${kRuns} runs; ${JSON.stringify(machineInfo())}; load ${loadavg()[0]!.toFixed(1)}`);
    console.log(line('PATCH active false answered', answered));
    console.log(line("the person's token first refused 401", refused));
  } finally {
    await server.stop();
  }
}

await main();

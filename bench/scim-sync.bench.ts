// An identity provider's first sync of an organisation on one node: for each person, the lookup it sends
// before a write (GET /Users?filter=userName eq "…", as Okta and Entra ID do) and then the POST /Users
// that provisions them, `users` people in turn. Printed for each build: the node's CPU per person (every
// thread, from /proc) and the wall time per person, for the first and the last tenth of the sync, so a
// cost that grows with the users already provisioned shows as their ratio. With `--baseline DIR`
// (another build's checkout, built), that build's node runs the same sync after this one's.
// Run: npm run build && node dist/bench/scim-sync.bench.js [--users 3000] [--baseline DIR]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { call } from '../test/helpers/http.js';
import { startTestServer } from '../test/helpers/server.js';
import { consoleCall, demoPassword, kDemoOwner, signIn } from '../test/helpers/web-console.js';
import { machineInfo } from './environment.js';
import { builtBin } from './locations.js';
import { cpuSample } from './processes.js';

const { values } = parseArgs({ options: { users: { type: 'string', default: '3000' }, baseline: { type: 'string' } } });
const kUsers = Number(values.users);
const kTenth = Math.max(1, Math.floor(kUsers / 10));

interface Stretch {
  cpuMs: number;
  wallMs: number;
}

/** One build's sync: CPU and wall time per person over its first and its last tenth. */
async function sync(cli: string | undefined): Promise<{ first: Stretch; last: Stretch }> {
  const server = await startTestServer({ demo: true, ...(cli === undefined ? {} : { cli }) });
  try {
    const base = server.baseUrl;
    const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
    const org = (await consoleCall(base, owner, 'GET', 'home')).json.orgs[0];
    const secret = (await consoleCall(base, owner, 'POST', `orgs/${org.id}/scim/secret`)).json.secret as string;
    const scim = (method: string, path: string, body?: unknown) => call(base, method, `/scim/v2${path}`, { token: secret, body });
    const pid = server.proc.pid!;
    const stretches: Stretch[] = [];
    let mark = { cpu: cpuSample(pid).total, wall: performance.now() };
    for (let i = 0; i < kUsers; i++) {
      const userName = `person${i}@example.test`;
      const found = await scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
      if (found.status !== 200 || found.json.totalResults !== 0) throw new Error(`lookup ${found.status}: ${found.text}`);
      const made = await scim('POST', '/Users', { userName, name: { givenName: 'Person', familyName: String(i) } });
      if (made.status !== 201) throw new Error(`create ${made.status}: ${made.text}`);
      if (i === kTenth - 1 || i === kUsers - kTenth - 1 || i === kUsers - 1) {
        const now = { cpu: cpuSample(pid).total, wall: performance.now() };
        if (i !== kUsers - kTenth - 1)
          stretches.push({ cpuMs: ((now.cpu - mark.cpu) * 1000) / kTenth, wallMs: (now.wall - mark.wall) / kTenth });
        mark = now;
      }
    }
    return { first: stretches[0]!, last: stretches[1]! };
  } finally {
    await server.stop();
  }
}

const builds: { name: string; cli: string | undefined }[] = [{ name: 'this build', cli: undefined }];
if (values.baseline !== undefined) builds.push({ name: `baseline (${values.baseline})`, cli: builtBin(values.baseline) });
const rows: string[] = [];
for (const build of builds) {
  const { first, last } = await sync(build.cli);
  rows.push(
    `| ${build.name} | ${first.cpuMs.toFixed(2)} | ${last.cpuMs.toFixed(2)} | ${(last.cpuMs / first.cpuMs).toFixed(2)} | ${first.wallMs.toFixed(2)} | ${last.wallMs.toFixed(2)} |`,
  );
}
console.log(`# ${JSON.stringify(machineInfo())}; ${kUsers} people, a lookup and a create each; load ${loadavg()[0]!.toFixed(1)}`);
console.log(
  `| build | node CPU ms a person, first ${kTenth} | last ${kTenth} | last ÷ first | wall ms a person, first ${kTenth} | last ${kTenth} |`,
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);

// What single sign-on's lock-out rule (src/sso/lockout.ts, a write check run after every writer command)
// costs a member's change as SSO-only organisations grow: a store holding N organisations, each SSO only
// with a break-glass Owner who has a password, then a person made and added to another organisation, one
// transaction each time, as the console or SCIM does. The CPU of this process per change (user + system),
// min / median / max of the changes measured, for each N.
//
// With `--baseline DIR` (another build's checkout, built), that build runs the same in a process of its
// own first, then this one: side by side in one run.
//
//   npm run build && node dist/bench/sso-lock-out.bench.js [--orgs 30,100,300] [--changes 20] [--baseline DIR]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { machineInfo } from './environment.js';
import { kDist } from './locations.js';
import { median } from './stats.js';

interface Child {
  dist: string;
  orgs: number;
  changes: number;
}

/** ms of CPU per change. */
async function measureHere({ dist, orgs, changes }: Child): Promise<number[]> {
  const load = (path: string) => import(pathToFileURL(join(dist, path)).href);
  const { LmdbStore } = await load('src/store/lmdb-store.js');
  const { kStoreLayout } = await load('src/capabilities.js');
  const { runCommand } = await load('src/writer/thread/commands.js');
  const { kOperator } = await load('src/actor/audit-actor.js');
  const { jsonBody } = await load('src/model/request-body.js');
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-sso-bench-'));
  const store = LmdbStore.open(dir, { layout: kStoreLayout });
  const at = Date.now();
  // A stored hash, not one made here: making it is not what is measured.
  const passwordHash = 'scrypt$1024$8$1$c2FsdA$a2V5';
  const idp = { issuer: 'https://idp.acme.test', clientId: 'flagwire', clientSecret: 'very-secret-value' };
  // biome-ignore lint/suspicious/noExplicitAny: another build's writer, loaded by path.
  const run = (name: string, input: unknown) => store.transact((w: any) => runCommand(w, name, input, at));
  for (let i = 0; i < orgs; i++) {
    const org = run('orgCreate', { name: `Org ${i}`, plan: 'teams', principal: kOperator }).id;
    const owner = run('userCreate', { email: `owner${i}@acme.test` }).id;
    run('userPassword', { userId: owner, passwordHash });
    run('orgAddMember', { principal: kOperator, orgId: org, userId: owner, role: 'owner' });
    run('ssoSet', {
      orgId: org,
      principal: kOperator,
      received: jsonBody(JSON.stringify({ ...idp, ssoOnly: true, breakGlassUserId: owner })),
    });
  }
  const other = run('orgCreate', { name: 'Other', plan: 'teams', principal: kOperator }).id;
  const used: number[] = [];
  for (let i = 0; i < changes; i++) {
    const before = process.cpuUsage();
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    store.transact((w: any) => {
      const user = runCommand(w, 'userCreate', { email: `member${i}@other.test` }, at).id;
      runCommand(w, 'orgAddMember', { principal: kOperator, orgId: other, userId: user, role: 'viewer' }, at);
    });
    const spent = process.cpuUsage(before);
    used.push((spent.user + spent.system) / 1000);
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return used;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      orgs: { type: 'string', default: '30,100,300' },
      changes: { type: 'string', default: '20' },
      baseline: { type: 'string' },
      child: { type: 'string' },
    },
  });
  if (values.child !== undefined) {
    process.stdout.write(JSON.stringify(await measureHere(JSON.parse(values.child) as Child)));
    return;
  }
  const builds = [{ name: 'this build', dist: kDist }];
  if (values.baseline !== undefined) builds.unshift({ name: `baseline (${values.baseline})`, dist: join(values.baseline, 'dist') });
  const counts = values.orgs.split(',').map(Number);
  const loads: number[] = [];
  const rows: string[] = [];
  for (const orgs of counts) {
    for (const build of builds) {
      const child: Child = { dist: build.dist, orgs, changes: Number(values.changes) };
      const out = execFileSync(process.execPath, [join(kDist, 'bench/sso-lock-out.bench.js'), '--child', JSON.stringify(child)], {
        encoding: 'utf8',
      });
      const used = JSON.parse(out) as number[];
      loads.push(loadavg()[0]!);
      const figures = [Math.min(...used), median(used), Math.max(...used)].map((ms) => ms.toFixed(1));
      rows.push(`| ${build.name} | ${orgs} | ${figures.join(' / ')} |`);
    }
  }
  console.log(
    `# ${JSON.stringify(machineInfo())}; ${values.changes} changes each; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
  );
  console.log('| build | SSO-only organisations | CPU ms per member added (min / median / max) |');
  console.log('|---|---:|---:|');
  for (const row of rows) console.log(row);
}

await main();

// A data set for black-box tests: organisations, projects, flags, audiences and tokens of every kind,
// written straight into the data dir with the writer's own command functions.
import type { FlagCreate } from '../../src/model/schemas.js';
import { Store } from './store.js';
import { markIntact } from '../../src/store/intact-mark.js';
import { dataFilePath } from '../../src/store/layout.js';
import {
  runCommand,
  runOutcome,
  type CommandInput,
  type CommandName,
  type CommandOutput,
  type Outcome,
} from '../../src/writer/thread/commands.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { listFlags } from '../../src/flags/records/flag-store.js';
import { listOrgs } from '../../src/model/records/org-records.js';
import { listProjects } from '../../src/model/records/project-records.js';
import { listTokens } from '../../src/model/records/token-records.js';

export interface World {
  store: Store;
  run<N extends CommandName>(name: N, input: CommandInput<N>, now?: number): CommandOutput<N>;
  /** As run, through the approvals gate: applied, or held as a change request (committed as such). */
  outcome<N extends CommandName>(name: N, input: CommandInput<N>, now?: number): Outcome<CommandOutput<N>>;
  /** Every record a request could change, read fresh: compare before and after a refused request. */
  snapshot(): string;
  ids: {
    orgA: string;
    orgB: string;
    orgFree: string;
    owner: string;
    admin: string;
    editor: string;
    viewer: string;
    ownerB: string;
    single: string;
    multi: string;
    singleB: string;
    free: string;
    audience: string;
    multiAudience: string;
    audienceB: string;
    flag: string;
    flag2: string;
    groupFlag: string;
    flagB: string;
    flagFree: string;
  };
  secrets: {
    read: string;
    write: string;
    multiWrite: string;
    multiRead: string;
    stagingWrite: string;
    writeB: string;
    free: string;
  };
  tokenIds: Record<string, string>;
}

export function buildWorld(dataDir: string): World {
  const store = Store.open(dataDir);
  const run = <N extends CommandName>(name: N, input: CommandInput<N>, now = Date.now()) =>
    store.transact((w) => runCommand(w, name, input, now));
  const outcome = <N extends CommandName>(name: N, input: CommandInput<N>, now = Date.now()) =>
    store.transact((w) => runOutcome(w, name, input, now));
  const orgA = run('orgCreate', { principal: kOperator, name: 'Org A', plan: 'teams' }).id;
  const orgB = run('orgCreate', { principal: kOperator, name: 'Org B', plan: 'enterprise' }).id;
  const orgFree = run('orgCreate', { principal: kOperator, name: 'Org Free', plan: 'teams' }).id;
  const user = (email: string) => run('userCreate', { email }).id;
  const owner = user('owner@a.test');
  const admin = user('admin@a.test');
  const editor = user('editor@a.test');
  const viewer = user('viewer@a.test');
  const ownerB = user('owner@b.test');
  run('orgAddMember', { principal: kOperator, orgId: orgA, userId: owner, role: 'owner' });
  run('orgAddMember', { principal: kOperator, orgId: orgA, userId: admin, role: 'admin' });
  run('orgAddMember', { principal: kOperator, orgId: orgA, userId: editor, role: 'editor' });
  run('orgAddMember', { principal: kOperator, orgId: orgA, userId: viewer, role: 'viewer' });
  run('orgAddMember', { principal: kOperator, orgId: orgB, userId: ownerB, role: 'owner' });
  run('orgAddMember', { principal: kOperator, orgId: orgFree, userId: ownerB, role: 'owner' });
  const single = run('projectCreate', { principal: kOperator, name: 'Shop', orgId: orgA, kind: 'single' }).id;
  const multi = run('projectCreate', {
    principal: kOperator,
    name: 'Platform',
    orgId: orgA,
    kind: 'multi',
    environments: ['staging', 'production'],
  }).id;
  const singleB = run('projectCreate', { principal: kOperator, name: 'B shop', orgId: orgB, kind: 'single' }).id;
  const free = run('projectCreate', { principal: kOperator, name: 'Free shop', orgId: orgFree, kind: 'single' }).id;
  const rules = [{ attribute: 'plan', values: ['beta'] }];
  const audience = run('audienceCreate', { principal: kOperator, projectId: single, name: 'Beta', rules }).id;
  const multiAudience = run('audienceCreate', { principal: kOperator, projectId: multi, name: 'Beta', rules }).id;
  const audienceB = run('audienceCreate', { principal: kOperator, projectId: singleB, name: 'Beta', rules }).id;
  const create = (projectId: string, body: FlagCreate) => run('flagCreate', { projectId, body, principal: kOperator });
  const flag = create(single, { name: 'checkout', enabled: true, trafficPercentage: 50, cohorts: ['alice'] }).id;
  const flag2 = create(single, { name: 'banner' }).id;
  const groupFlag = create(multi, {
    name: 'search',
    environments: { staging: { enabled: true, trafficPercentage: 100 }, production: { cohorts: ['qa'] } },
  }).id;
  run('flagCohorts', { principal: kOperator, flagId: groupFlag, cohorts: ['wide-1', 'wide-2'] });
  const flagB = create(singleB, { name: 'checkout', enabled: true }).id;
  const flagFree = create(free, { name: 'checkout' }).id;
  const token = (projectId: string, userId: string, name: string, permission: 'read' | 'write', environments?: string[]) =>
    run('tokenCreate', { projectId, principal: principalOf(userId), name, permission, environments });
  const made = {
    read: token(single, editor, 'ci-read', 'read'),
    write: token(single, editor, 'ci-write', 'write'),
    multiWrite: token(multi, owner, 'platform-write', 'write'),
    multiRead: token(multi, owner, 'platform-read', 'read'),
    stagingWrite: token(multi, owner, 'staging-only', 'write', ['staging']),
    writeB: token(singleB, ownerB, 'b-write', 'write'),
    free: token(free, ownerB, 'free-write', 'write'),
  };
  // Org Free drops below Teams after its token was made: the token exists but the API refuses it (402).
  run('orgUpdate', { orgId: orgFree, plan: 'free' });
  // The file as this process just wrote it, through the store's own commits, is marked intact as a
  // server's clean stop marks its file, so that a server started on the world right away (startWorldServer)
  // does not read it through first (src/store/intact-mark.ts: the probe, a process of its own, about 50 ms
  // of CPU and more of wall at each start). A test that writes more first moves the file's change time, and
  // that start reads it through as after any other writer; test/reliability/clean-stop.test.ts takes the
  // mark away to start on a file no server stopped on.
  markIntact(dataFilePath(dataDir));
  const secrets = Object.fromEntries(Object.entries(made).map(([k, v]) => [k, v.secret])) as World['secrets'];
  const tokenIds = Object.fromEntries(Object.entries(made).map(([k, v]) => [k, v.id]));
  const snapshot = () => {
    store.resetReadTxn();
    const projects = listProjects(store);
    return JSON.stringify({
      orgs: listOrgs(store),
      projects,
      flags: projects.map((p) => listFlags(store, p.id)),
      audit: projects.map((p) => store.listAudit(p.id, { limit: 1000, before: null })),
      tokens: projects.map((p) => listTokens(store, p.id)),
    });
  };
  return {
    store,
    run,
    outcome,
    snapshot,
    secrets,
    tokenIds,
    ids: {
      orgA,
      orgB,
      orgFree,
      owner,
      admin,
      editor,
      viewer,
      ownerB,
      single,
      multi,
      singleB,
      free,
      audience,
      multiAudience,
      audienceB,
      flag,
      flag2,
      groupFlag,
      flagB,
      flagFree,
    },
  };
}

// The bench data set, written straight into a fresh data dir with the writer's own command functions
// (the same code the server and the console run), before any server opens it. Everything is created
// in a few large transactions: one flush to disk per batch instead of one per flag.
//
//   organisation "Bench" (enterprise: audiences and tokens allowed), one owner
//   p00          single, 50 flags                      -> (c) GET /v1/flags/project/{id}
//   p01          single, 250 flags: "a" (audience + 50%) -> (a), (d); "n" (typed, five rules) -> (n); w000..w199 -> (e), (f) writes;
//                "visibility" -> the read-your-writes check; "static" and "n" -> in-process.bench.ts
//   p02..p08     single, 90 flags each
//   p09 "group"  multi (staging, production, canary), 100 group flags; "b" -> (b)
//   every project: audiences "beta" (plan in beta,pro) and "eu" (country in NL,DE,FR); flags mix
//   audiences, cohort lists (up to 1,000 ids), percentages 0-100, enabled and disabled
import { kStoreLayout } from '../src/capabilities.js';
import { LmdbStore } from '../src/store/lmdb-store.js';
import type { FlagCreate, EnvironmentState } from '../src/model/schemas.js';
import { runCommand, type CommandInput, type CommandName } from '../src/writer/thread/commands.js';
import { kOperator, principalOf } from '../src/actor/audit-actor.js';
import type { StoreWriter } from '../src/store/interfaces.js';
import type { Flag } from '../src/model/flags.js';
import type { Audience } from '../src/model/projects.js';
import { kFiveRuleTargeting, kFiveRuleVariants } from './five-rule-flag.js';
import { listFlags } from '../src/flags/records/flag-store.js';
import { jsonBody } from '../src/model/request-body.js';
import { listAudiences } from '../src/model/records/project-records.js';

export interface BenchFlag {
  id: string;
  name: string;
}

export interface BenchData {
  flags: number;
  projects: number;
  audiences: number;
  /** (a): single flag, audience "beta", 50%, cohorts. */
  evalFlag: BenchFlag;
  /** (n): single flag with typed variants and the five-rule targeting tree, on for everyone (every request runs the rule). */
  typedFlag: BenchFlag;
  /** (b): group flag; evaluate with env=production. */
  groupFlag: BenchFlag & { env: string };
  /** (c): the project of 50 flags. */
  projectId: string;
  projectFlagCount: number;
  /** (d): read token of the project holding evalFlag. */
  readSecret: string;
  /** (e)/(f): write token of the same project, and one flag per write connection. */
  writeSecret: string;
  writeFlagIds: string[];
  /** Enabled false at start, 100%: PATCH enabled and read it back through evaluation. */
  visibilityFlagId: string;
  /**
   * in-process.bench.ts: the records of p01's "static" flag (on, 100%, no audience or cohorts) and of
   * "n", and p01's audiences, as stored: what an in-process provider of p01 compiles.
   */
  inProcess: { staticFlag: Flag; typedFlag: Flag; audiences: Audience[] };
  /** The store's revision once seeded: what (a)'s answers name until a write scenario moves it (the hello world sends it too). */
  revision: number;
}

const kEnvironments = ['staging', 'production', 'canary'];
const kWriteFlags = 200;

function cohortList(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
}

/** A deterministic mix of states: flag i of a project. */
function mixedState(
  i: number,
  audiences: readonly string[],
): Required<Omit<EnvironmentState, 'audienceId' | 'variants' | 'defaultVariant' | 'targeting' | 'metadata' | 'experiment' | 'unleash'>> & {
  audienceId: string | null;
} {
  return {
    enabled: i % 7 !== 0,
    trafficPercentage: [0, 5, 25, 50, 75, 100][i % 6]!,
    cohorts: i % 5 === 0 ? cohortList(`c${i}`, i % 10 === 0 ? 1000 : 100) : [],
    audienceId: i % 3 === 0 ? audiences[i % audiences.length]! : null,
  };
}

/** Creates the data set in `dataDir` (which must be empty or absent) and closes the store. */
export async function generateDataset(dataDir: string): Promise<BenchData> {
  const store = LmdbStore.open(dataDir, { layout: kStoreLayout });
  try {
    return generate(store);
  } finally {
    await store.close();
  }
}

function generate(store: LmdbStore): BenchData {
  const now = Date.now();
  const run = <N extends CommandName>(w: StoreWriter, name: N, input: CommandInput<N>) => runCommand(w, name, input, now);

  const base = store.transact((w) => {
    const org = run(w, 'orgCreate', { principal: kOperator, name: 'Bench', plan: 'enterprise' });
    const owner = run(w, 'userCreate', { email: 'owner@bench.flagwire.test', name: 'Bench Owner' });
    run(w, 'orgAddMember', { principal: kOperator, orgId: org.id, userId: owner.id, role: 'owner' });
    const projects = [];
    for (let p = 0; p < 10; p++) {
      const multi = p === 9;
      const project = run(w, 'projectCreate', {
        principal: kOperator,
        name: multi ? 'group' : `p${String(p).padStart(2, '0')}`,
        orgId: org.id,
        kind: multi ? 'multi' : 'single',
        environments: multi ? kEnvironments : [],
      });
      const beta = run(w, 'audienceCreate', {
        principal: kOperator,
        projectId: project.id,
        name: 'beta',
        rules: [{ attribute: 'plan', values: ['beta', 'pro'] }],
      });
      const eu = run(w, 'audienceCreate', {
        principal: kOperator,
        projectId: project.id,
        name: 'eu',
        rules: [{ attribute: 'country', values: ['NL', 'DE', 'FR'] }],
      });
      projects.push({ id: project.id, multi, audiences: [beta.id, eu.id] });
    }
    return { ownerId: owner.id, projects };
  });

  const flagCounts = [50, 250, 90, 90, 90, 90, 90, 90, 90, 100];
  const special = new Map<string, BenchFlag>();
  const inProcessFlags = new Map<string, Flag>();
  const writeFlagIds: string[] = [];
  let flags = 0;
  for (let p = 0; p < base.projects.length; p++) {
    const project = base.projects[p]!;
    const bodies: FlagCreate[] = [];
    const [beta, eu] = project.audiences as [string, string];
    if (p === 1) {
      // (a): passes the audience with plan=beta, then a sticky 50% split on targetingKey.
      bodies.push({ name: 'a', enabled: true, trafficPercentage: 50, audienceId: beta, cohorts: cohortList('qa', 50) });
      bodies.push({ name: 'visibility', enabled: false, trafficPercentage: 100 });
      bodies.push({ name: 'static', enabled: true, trafficPercentage: 100 });
      bodies.push({
        name: 'n',
        enabled: true,
        trafficPercentage: 100,
        variants: kFiveRuleVariants,
        defaultVariant: 'control',
        targeting: kFiveRuleTargeting,
      });
      for (let i = 0; i < kWriteFlags; i++) bodies.push({ name: `w${String(i).padStart(3, '0')}`, enabled: true, trafficPercentage: 0 });
    }
    if (project.multi) {
      bodies.push({
        name: 'b',
        environments: {
          staging: { enabled: true, trafficPercentage: 100 },
          production: { enabled: true, trafficPercentage: 50, audienceId: beta, cohorts: cohortList('prod-qa', 200) },
          canary: { enabled: false },
        },
      });
    }
    while (bodies.length < flagCounts[p]!) {
      const i = bodies.length;
      const name = `f${String(i).padStart(3, '0')}`;
      if (project.multi) {
        const environments: Record<string, EnvironmentState> = {};
        kEnvironments.forEach((env, e) => {
          const s = mixedState(i + e, [beta, eu]);
          // An environment without its own cohort list uses the flag-wide one (set below for some flags).
          environments[env] = { ...s, cohorts: s.cohorts.length === 0 ? undefined : s.cohorts };
        });
        bodies.push({ name, environments });
      } else {
        bodies.push({ name, ...mixedState(i, [beta, eu]) });
      }
    }
    // 100 creates per transaction: each flagCreate lists the project's flags to check the name.
    for (let at = 0; at < bodies.length; at += 100) {
      const created = store.transact((w) =>
        bodies.slice(at, at + 100).map((body) => run(w, 'flagCreate', { projectId: project.id, body, principal: kOperator })),
      );
      for (const flag of created) {
        flags++;
        if (p === 1 && (flag.name === 'a' || flag.name === 'n' || flag.name === 'visibility'))
          special.set(flag.name, { id: flag.id, name: flag.name });
        if (p === 1 && (flag.name === 'static' || flag.name === 'n')) inProcessFlags.set(flag.name, flag);
        if (p === 1 && /^w\d{3}$/.test(flag.name)) writeFlagIds.push(flag.id);
        if (project.multi && flag.name === 'b') special.set('b', { id: flag.id, name: flag.name });
      }
    }
    if (project.multi) {
      // Flag-wide cohort lists on every fourth group flag (the effective list where no override is set).
      store.transact((w) => {
        for (const flag of listFlags(w, project.id)) {
          const n = Number(flag.name.slice(1));
          if (flag.name === 'b' || n % 4 === 0)
            run(w, 'flagCohorts', { principal: kOperator, flagId: flag.id, cohorts: cohortList(`g${flag.name}`, 300) });
        }
      });
    }
  }

  const p01 = base.projects[1]!.id;
  const tokens = store.transact((w) => ({
    read: run(w, 'tokenCreate', { projectId: p01, principal: principalOf(base.ownerId), name: 'bench-read', permission: 'read' }),
    write: run(w, 'tokenCreate', { projectId: p01, principal: principalOf(base.ownerId), name: 'bench-write', permission: 'write' }),
    audiences: listAudiences(w, p01),
  }));

  return {
    flags,
    projects: base.projects.length,
    audiences: base.projects.length * 2,
    evalFlag: special.get('a')!,
    typedFlag: special.get('n')!,
    groupFlag: { ...special.get('b')!, env: 'production' },
    projectId: base.projects[0]!.id,
    projectFlagCount: flagCounts[0]!,
    readSecret: tokens.read.secret,
    writeSecret: tokens.write.secret,
    writeFlagIds,
    visibilityFlagId: special.get('visibility')!.id,
    inProcess: { staticFlag: inProcessFlags.get('static')!, typedFlag: inProcessFlags.get('n')!, audiences: tokens.audiences },
    revision: store.revision(),
  };
}

/** The projects of the OFREP bulk bench (ofrep-bulk.bench.ts): one per flag count, ids in that order. */
export interface BulkData {
  /** `frontendKey`: a client key of the project with the use `frontend` (Unleash's front-end API). */
  projects: { id: string; flags: number; frontendKey: string }[];
}

/**
 * One project per entry of `flagCounts`, in an organisation of its own, each with the audiences "beta"
 * and "eu" and a realistic mix (the mix above): every tenth flag (4, 14, …) typed with the five-rule
 * targeting tree, the others boolean at percentages from 0 to 100, a third behind an audience, a fifth
 * with cohort lists, one in seven disabled. Then one per entry of `switchCounts`: kill switches and
 * finished rollouts only (every fourth flag disabled, the others on for everyone), whose answers no
 * context changes.
 */
export async function generateBulkDataset(
  dataDir: string,
  flagCounts: readonly number[],
  switchCounts: readonly number[] = [],
): Promise<BulkData> {
  const store = LmdbStore.open(dataDir, { layout: kStoreLayout });
  try {
    const now = Date.now();
    const run = <N extends CommandName>(w: StoreWriter, name: N, input: CommandInput<N>) => runCommand(w, name, input, now);
    const projects = store.transact((w) => {
      const org = run(w, 'orgCreate', { principal: kOperator, name: 'Bulk', plan: 'enterprise' });
      const specs = [
        ...flagCounts.map((flags) => ({ flags, switches: false })),
        ...switchCounts.map((flags) => ({ flags, switches: true })),
      ];
      return specs.map(({ flags, switches }, p) => {
        const project = run(w, 'projectCreate', { principal: kOperator, name: `bulk-${p}-${flags}`, orgId: org.id });
        const audiences = ['beta', 'eu'].map(
          (name, a) =>
            run(w, 'audienceCreate', {
              principal: kOperator,
              projectId: project.id,
              name,
              rules: [a === 0 ? { attribute: 'plan', values: ['beta', 'pro'] } : { attribute: 'country', values: ['NL', 'DE', 'FR'] }],
            }).id,
        );
        return { id: project.id, flags, switches, audiences };
      });
    });
    for (const project of projects) {
      const bodies: FlagCreate[] = Array.from({ length: project.flags }, (_, i) => {
        const name = `f${String(i).padStart(3, '0')}`;
        if (project.switches) return { name, enabled: i % 4 !== 0, trafficPercentage: 100 };
        return i % 10 === 4
          ? {
              name,
              enabled: true,
              trafficPercentage: 100,
              variants: kFiveRuleVariants,
              defaultVariant: 'control',
              targeting: kFiveRuleTargeting,
            }
          : { name, ...mixedState(i, project.audiences) };
      });
      // 100 creates per transaction, as generate() does.
      for (let at = 0; at < bodies.length; at += 100) {
        store.transact((w) => {
          for (const body of bodies.slice(at, at + 100)) run(w, 'flagCreate', { projectId: project.id, body, principal: kOperator });
        });
      }
    }
    const keys = store.transact((w) =>
      projects.map(
        (project) =>
          run(w, 'clientKeyCreate', {
            principal: kOperator,
            projectId: project.id,
            received: jsonBody(JSON.stringify({ name: 'bench', uses: ['frontend'] })),
          }).secret,
      ),
    );
    return { projects: projects.map(({ id, flags }, p) => ({ id, flags, frontendKey: keys[p]! })) };
  } finally {
    await store.close();
  }
}

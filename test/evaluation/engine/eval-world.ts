// The data set of the evaluation tests, written with the writer's own command functions into a data
// dir (before a server starts on it, or for the engine in-process).
import { rmSync } from 'node:fs';
import { Clock } from '../../../src/clock.js';
import { EvalEngine } from '../../../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../../../src/evaluation/engine/protocol.js';
import type { FlagCreate } from '../../../src/model/schemas.js';
import { Store } from '../../helpers/store.js';
import { runCommand, type CommandInput, type CommandName, type CommandOutput } from '../../../src/writer/thread/commands.js';
import { kOperator, principalOf } from '../../../src/actor/audit-actor.js';
import { scratchDir } from '../../helpers/scratch-dir.js';

export interface EvalWorld {
  dataDir: string;
  store: Store;
  run<N extends CommandName>(name: N, input: CommandInput<N>, now?: number): CommandOutput<N>;
  ids: {
    orgTeams: string;
    orgFree: string;
    owner: string;
    single: string;
    multi: string;
    freeProject: string;
    personal: string;
    empty: string;
    emptyMulti: string;
    audience: string;
    multiAudience: string;
    on: string;
    off: string;
    half: string;
    zero: string;
    aud: string;
    audHalf: string;
    group: string;
    groupAud: string;
    freeAud: string;
    freePlain: string;
    personalFlag: string;
  };
  /** Write tokens (Management API) of the single and the multi-environment project. */
  writeToken: string;
  multiWriteToken: string;
}

/** A fresh data dir, removed when the test process exits. */
export function tempDir(): string {
  return scratchDir('flagwire-eval-');
}

export function buildEvalWorld(dataDir: string = tempDir()): EvalWorld {
  const store = Store.open(dataDir);
  // Strictly increasing times: flags created one after another have distinct createdAt, so the
  // project route's creation order is the order of this file.
  let last = 0;
  const tick = () => (last = Math.max(Date.now(), last + 1));
  const run = <N extends CommandName>(name: N, input: CommandInput<N>, now = tick()) =>
    store.transact((w) => runCommand(w, name, input, now));
  const orgTeams = run('orgCreate', { principal: kOperator, name: 'Teams org', plan: 'teams' }).id;
  const orgFree = run('orgCreate', { principal: kOperator, name: 'Downgraded org', plan: 'teams' }).id;
  const owner = run('userCreate', { email: 'owner@eval.test' }).id;
  run('orgAddMember', { principal: kOperator, orgId: orgTeams, userId: owner, role: 'owner' });
  const single = run('projectCreate', { principal: kOperator, name: 'Shop', orgId: orgTeams }).id;
  const multiProject = (name: string, environments: string[]) =>
    run('projectCreate', { principal: kOperator, name, orgId: orgTeams, kind: 'multi', environments }).id;
  const multi = multiProject('Platform', ['staging', 'production', 'dev']);
  const freeProject = run('projectCreate', { principal: kOperator, name: 'Free shop', orgId: orgFree }).id;
  const personal = run('projectCreate', { principal: kOperator, name: 'Mine', ownerUserId: owner }).id;
  const empty = run('projectCreate', { principal: kOperator, name: 'Empty', orgId: orgTeams }).id;
  const emptyMulti = multiProject('Empty multi', ['prod']);
  const rules = [
    { attribute: 'plan', values: ['beta', 'alpha'] },
    { attribute: 'country', values: ['NL'] },
  ];
  const audience = run('audienceCreate', { principal: kOperator, projectId: single, name: 'Beta NL', rules }).id;
  const multiAudience = run('audienceCreate', {
    principal: kOperator,
    projectId: multi,
    name: 'Beta',
    rules: [{ attribute: 'plan', values: ['beta'] }],
  }).id;
  const freeAudience = run('audienceCreate', {
    principal: kOperator,
    projectId: freeProject,
    name: 'Beta',
    rules: [{ attribute: 'plan', values: ['beta'] }],
  }).id;
  const create = (projectId: string, body: FlagCreate) => run('flagCreate', { projectId, body, principal: kOperator }).id;
  const on = create(single, { name: 'on', enabled: true, trafficPercentage: 100 });
  const off = create(single, { name: 'off', enabled: false, trafficPercentage: 100, cohorts: ['alice'] });
  const half = create(single, { name: 'half', enabled: true, trafficPercentage: 50, cohorts: ['alice', 'bob'] });
  const zero = create(single, { name: 'zero', enabled: true, trafficPercentage: 0, cohorts: ['vip'] });
  const aud = create(single, { name: 'aud', enabled: true, trafficPercentage: 100, audienceId: audience });
  const audHalf = create(single, { name: 'aud-half', enabled: true, trafficPercentage: 50, cohorts: ['insider'], audienceId: audience });
  const group = create(multi, {
    name: 'group',
    environments: {
      staging: { enabled: true, trafficPercentage: 0 },
      production: { enabled: true, trafficPercentage: 0, cohorts: ['qa'] },
    },
  });
  run('flagCohorts', { principal: kOperator, flagId: group, cohorts: ['wide-1', 'wide-2'] });
  const groupAud = create(multi, {
    name: 'group-aud',
    environments: {
      production: { enabled: true, trafficPercentage: 100, audienceId: multiAudience },
      staging: { enabled: true, trafficPercentage: 100 },
    },
  });
  const freeAud = create(freeProject, { name: 'aud', enabled: true, trafficPercentage: 100, audienceId: freeAudience });
  const freePlain = create(freeProject, { name: 'plain', enabled: true, trafficPercentage: 100 });
  const personalFlag = create(personal, { name: 'mine', enabled: true, trafficPercentage: 100 });
  // The organisation drops below Teams after its flag got an audience: the case of the eval 403.
  run('orgUpdate', { orgId: orgFree, plan: 'free' });
  const writeToken = run('tokenCreate', {
    projectId: single,
    principal: principalOf(owner),
    name: 'eval-tests',
    permission: 'write',
  }).secret;
  const multiWriteToken = run('tokenCreate', {
    projectId: multi,
    principal: principalOf(owner),
    name: 'eval-tests',
    permission: 'write',
  }).secret;
  return {
    dataDir,
    store,
    run,
    writeToken,
    multiWriteToken,
    ids: {
      orgTeams,
      orgFree,
      owner,
      single,
      multi,
      freeProject,
      personal,
      empty,
      emptyMulti,
      audience,
      multiAudience,
      on,
      off,
      half,
      zero,
      aud,
      audHalf,
      group,
      groupAud,
      freeAud,
      freePlain,
      personalFlag,
    },
  };
}

export interface EngineWorld {
  world: EvalWorld;
  ids: EvalWorld['ids'];
  clock: Clock;
  engine: EvalEngine;
  /** One evaluation as a batch of one, the way a worker answers it: status, body text and its JSON. */
  answer(route: 'flag' | 'project', id: string, query?: string): { status: number; text: string; json: any };
}

/** The evaluation world and an engine reading it in this process, both gone when `t` ends. */
export function engineOverWorld(t: { teardown(fn: () => unknown): void }): EngineWorld {
  const world = buildEvalWorld();
  const clock = Clock.create();
  const engine = new EvalEngine(world.store, () => clock.now());
  t.teardown(async () => {
    await world.store.close();
    rmSync(world.dataDir, { recursive: true, force: true });
  });
  const answer = (route: 'flag' | 'project', id: string, query = '') => {
    engine.beginBatch();
    const out = new ResultWriter(new ArrayBuffer(16), 1);
    if (route === 'flag') engine.evaluateFlag(id, query, out);
    else engine.evaluateProject(id, query, out);
    const reader = new ResultReader(out.finish());
    const text = reader.bodyText(0);
    return { status: reader.status(0), text, json: JSON.parse(text) };
  };
  return { world, ids: world.ids, clock, engine, answer };
}

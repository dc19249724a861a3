// The world the approvals' bypass test (bypass.test.ts) tries every command in: two projects whose
// environments are guarded, with what was made there before the policy (an audience used in production,
// release plans, experiments, a shared fragment) and since (an approved scheduled change and pending
// requests), and what those rely on of each kind of record (kDependencies: a kind added without an entry
// fails the test, docs/architecture.md, "Adding a capability"); the principals that may not bypass the
// policy, what evaluation reads in the guarded environments, and a command tried there.
import type { CommandInput, CommandName, Outcome } from '../../src/writer/thread/commands.js';
import { FlagwireError } from '../../src/errors.js';
import { kOperator, principalOf, type Principal } from '../../src/actor/audit-actor.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { jsonBody } from '../../src/model/request-body.js';
import { fragmentRule, kFragmentRecords } from '../../src/flags/records/fragment-records.js';
import type { ScheduledChange } from '../../src/release-plans/schedules.js';
import { ruleRefs } from '../../src/targeting/refs.js';
import { buildWorld, type World } from '../helpers/world.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { listSchedules } from '../../src/release-plans/records.js';
import { listFlags } from '../../src/flags/records/flag-store.js';
import { getProject, listAudiences, getAudience } from '../../src/model/records/project-records.js';

const dir = scratchDir('flagwire-approvals-bypass-');
export const world = buildWorld(dir);
export const { ids } = world;
export const t0 = Date.now();

// Before the policy: an audience used in production, a group flag that inherits its cohorts there, and
// release plans made while nothing was guarded (so never approved), all due now.
world.run(
  'flagPatch',
  { flagId: ids.groupFlag, env: 'production', principal: kOperator, patch: { enabled: true, audienceId: ids.multiAudience } },
  t0,
);
export const inheriting = world.run('flagCreate', {
  projectId: ids.multi,
  principal: kOperator,
  body: { name: 'inherits', environments: { production: { enabled: true, trafficPercentage: 40 } } },
}).id;
world.run('flagCohorts', { principal: kOperator, flagId: inheriting, cohorts: ['wide'] }, t0);
export const cancelled = world.run(
  'scheduleCreate',
  { principal: kOperator, flagId: ids.groupFlag, env: 'production', body: { at: t0 + 3_600_000, patch: { trafficPercentage: 66 } } },
  t0,
).id;
export const oldSchedule = world.run(
  'scheduleCreate',
  { principal: kOperator, flagId: ids.groupFlag, env: 'production', body: { at: t0 + 1000, patch: { trafficPercentage: 77 } } },
  t0,
).id;
export const steps = [{ trafficPercentage: 10, holdMs: 1000 }, { trafficPercentage: 90 }];
const guard = { flagwire: 'flagwire_http_requests_total', max: 1, min: null, intervalMs: 1000, onBreach: 'rollback' as const };
export const oldRollout = world.run(
  'rolloutStart',
  { principal: kOperator, flagId: inheriting, env: 'production', body: { steps, guard }, guardMetrics: null },
  t0,
).id;
export const spareToken = world.run('tokenCreate', {
  projectId: ids.multi,
  principal: principalOf(ids.owner),
  name: 'spare',
  permission: 'write',
});
export const hook = world.run('webhookCreate', {
  principal: kOperator,
  projectId: ids.multi,
  received: jsonBody(JSON.stringify({ url: 'https://hooks.example.com/x' })),
});

// Experiments made before the policy: in each project one not started (its start is tried below) and
// one running (its stop is tried below), each on a flag of its own; the running one's flag is one no
// other probe changes, as while it runs nothing may change who gets which variant of it there.
export const experimentBody = (key: string, flagId: string) => jsonBody(JSON.stringify({ ...experimentPlan(flagId, 1000), key }));
export const experimentEnv = (projectId: string) => (projectId === ids.multi ? 'production' : null);
const experimented = world.run('flagCreate', {
  projectId: ids.multi,
  principal: kOperator,
  body: { name: 'experimented', environments: { production: { enabled: true, trafficPercentage: 50 } } },
}).id;
for (const [projectId, draftFlag, runningFlag] of [
  [ids.single, ids.flag, ids.flag2],
  [ids.multi, ids.groupFlag, experimented],
] as const) {
  const env = experimentEnv(projectId);
  world.run('experimentCreate', { principal: kOperator, projectId, env, received: experimentBody('probe-draft', draftFlag) });
  world.run('experimentCreate', { principal: kOperator, projectId, env, received: experimentBody('probe-running', runningFlag) });
  world.run('experimentStart', { principal: kOperator, projectId, env, key: 'probe-running' });
}

// A shared fragment a flag on in production names.
world.run('fragmentCreate', {
  principal: kOperator,
  projectId: ids.multi,
  received: jsonBody(JSON.stringify({ name: 'paying', rule: { '==': [{ var: 'plan' }, 'pro'] } })),
});
world.run('flagCreate', {
  projectId: ids.multi,
  principal: kOperator,
  body: {
    name: 'refers',
    environments: {
      production: {
        enabled: true,
        variants: { on: true, off: false },
        defaultVariant: 'off',
        targeting: { if: [{ $ref: 'paying' }, 'on', 'off'] },
      },
    },
  },
});

// What held and approved changes rely on (issue 54, item 1): for each, a flag off in production whose rule
// names a shared fragment, and an audience; nothing reads either there now.
const reliedOn = (name: string) => {
  world.run('fragmentCreate', {
    principal: kOperator,
    projectId: ids.multi,
    received: jsonBody(JSON.stringify({ name, rule: { '==': [{ var: 'plan' }, name] } })),
  });
  const audienceId = world.run('audienceCreate', {
    principal: kOperator,
    projectId: ids.multi,
    name: `Relied on by ${name}`,
    rules: [{ attribute: 'plan', values: [name] }],
  }).id;
  const variants = { on: true, off: false };
  const production = { variants, defaultVariant: 'off', targeting: { if: [{ $ref: name }, 'on', 'off'] } };
  const flagId = world.run('flagCreate', { projectId: ids.multi, principal: kOperator, body: { name, environments: { production } } }).id;
  return { fragment: name, audienceId, flagId, patch: { enabled: true, trafficPercentage: 100, audienceId } };
};
export const scheduled = reliedOn('scheduled');
export const asked = reliedOn('asked');
// And for each a flag with nothing set in production (read there as absent now) that it will turn on.
const offFlag = (name: string) =>
  world.run('flagCreate', { projectId: ids.multi, principal: kOperator, body: { name, environments: { production: {} } } }).id;
export const turnedOn = { scheduled: offFlag('scheduled-on'), asked: offFlag('asked-on') };

// A flag on in each project's guarded environment, archived before the policy: restoring it serves it there again.
export const archivedOn = new Map<string, string>([
  [
    ids.single,
    world.run('flagCreate', {
      projectId: ids.single,
      principal: kOperator,
      body: { name: 'archived-on', enabled: true, trafficPercentage: 100 },
    }).id,
  ],
  [
    ids.multi,
    world.run('flagCreate', {
      projectId: ids.multi,
      principal: kOperator,
      body: { name: 'archived-on', environments: { production: { enabled: true, trafficPercentage: 100 } } },
    }).id,
  ],
]);
for (const flagId of archivedOn.values()) world.run('flagArchive', { principal: kOperator, flagId }, t0);

// The policy: the single project's one environment and the multi project's production, one approval.
world.run('approvalsSet', { projectId: ids.single, env: null, required: 1, principal: principalOf(ids.admin) }, t0);
world.run('approvalsSet', { projectId: ids.multi, env: 'production', required: 1, principal: principalOf(ids.admin) }, t0);
// The scheduled change asked for by the editor and approved: it will turn its flag on with its fragment and audience.
const planAsked = world.outcome(
  'scheduleCreate',
  { principal: principalOf(ids.editor), flagId: scheduled.flagId, env: 'production', body: { at: t0 + 3_600_000, patch: scheduled.patch } },
  t0,
);
if (planAsked.applied) throw new Error('a guarded plan was made without approval');
world.run('requestApprove', { principal: principalOf(ids.admin), requestId: planAsked.request.id }, t0);
const planOn = world.outcome(
  'scheduleCreate',
  {
    principal: principalOf(ids.editor),
    flagId: turnedOn.scheduled,
    env: 'production',
    body: { at: t0 + 3_600_000, patch: { enabled: true } },
  },
  t0,
);
if (planOn.applied) throw new Error('a guarded plan was made without approval');
world.run('requestApprove', { principal: principalOf(ids.admin), requestId: planOn.request.id }, t0);
/** A guarded change's outcome, which must be held as a request (the type says so where it is imported). */
function held<O>(outcome: Outcome<O>): Extract<Outcome<O>, { applied: false }> {
  if (outcome.applied) throw new Error('a guarded change was applied');
  return outcome;
}
// The editor's pending request that would do the same with the other pair.
export const askedRequest = held(
  world.outcome('flagPatch', { flagId: asked.flagId, env: 'production', principal: principalOf(ids.editor), patch: asked.patch }, t0),
);
export const askedOn = held(
  world.outcome(
    'flagPatch',
    { flagId: turnedOn.asked, env: 'production', principal: principalOf(ids.editor), patch: { enabled: true } },
    t0,
  ),
);
// A pending request by the editor, for the decisions' probes.
const pending = world.outcome(
  'flagPatch',
  { flagId: ids.flag, env: null, principal: principalOf(ids.editor), patch: { trafficPercentage: 5 } },
  t0,
);
if (pending.applied) throw new Error('a guarded change was applied');
export const pendingId = pending.request.id;

/** An Admin and the operator set the policy and approve: the probes of those commands leave them out. */
export function mayConfigure(principal: Principal): boolean {
  return principal.kind === 'operator' || (principal.kind === 'user' && principal.userId === ids.admin);
}

/** The principals that may not bypass: a person of each role that may change flags, a write token (no bypass), the operator. */
export const kPrincipals: readonly { name: string; of: (projectId: string) => Principal }[] = [
  { name: 'an editor', of: () => principalOf(ids.editor) },
  { name: 'an admin', of: () => principalOf(ids.admin) },
  {
    name: 'a write token',
    of: (projectId) => ({ kind: 'token', tokenId: world.tokenIds[projectId === ids.single ? 'write' : 'multiWrite']! }),
  },
  { name: 'the operator', of: () => kOperator },
];

/**
 * What a held or approved change relies on, by every kind of record that bears on an environment (the
 * capabilities' `environmentState` declarations): the records of the kind that the approved scheduled
 * change and the pending request will make production read, which the commands that change the kind try
 * above, or why none can be relied on so. A kind added without an entry here fails the test.
 */
export const kDependencies = {
  audience: [scheduled.audienceId, asked.audienceId],
  fragments: [scheduled.fragment, asked.fragment],
  // Off in production now: what clients will evaluate each by (its name, its bucketing) once turned on.
  flag: [scheduled.flagId, asked.flagId, turnedOn.scheduled, turnedOn.asked],
  schedule: 'a scheduled change is what relies: made, run or cancelled by the probes of scheduleCreate, scheduleRun, scheduleCancel',
  rollout: 'a rollout is what relies: its own probes (rolloutStart, rolloutAct, rolloutAdvance) try it',
  experiment:
    "an experiment's plan, where a pending request will start it: none here (experimentStart's probes are held and withdrawn); test/experiments/experiment-guards.test.ts holds a change to one",
} as const;

/**
 * What evaluation reads in the guarded environments, read here from the records themselves (not through
 * the gate's own views): each flag's effective state there with its name and bucketing, and the
 * audiences and shared fragments those flags use. (A plan is what will change it: making one is held or refused above.)
 */
export function guardedState(w: World): string {
  w.store.resetReadTxn();
  const env = (projectId: string) => (projectId === ids.single ? null : 'production');
  // What the approved scheduled change and the pending request will read there, and what they will do.
  const fragments = w.store.getKeyed(kFragmentRecords, ids.multi)?.fragments ?? [];
  const relied = {
    fragments: fragments
      .filter((f) => (kDependencies.fragments as readonly string[]).includes(f.name))
      .map((f) => [f.name, fragmentRule(f)]),
    audiences: kDependencies.audience.map((id) => getAudience(w.store, id)),
    plan: pendingPlans(w).filter((plan) => plan.flagId === scheduled.flagId || plan.flagId === turnedOn.scheduled),
  };
  return JSON.stringify([
    relied,
    ...[ids.single, ids.multi].map((projectId) => {
      const flags = listFlags(w.store, projectId).map((f) => ({
        id: f.id,
        name: f.name,
        bucketing: f.bucketing,
        state: effectiveState(f, env(projectId)),
      }));
      const used = new Set(flags.map((f) => f.state.audienceId));
      const refs = new Set(flags.flatMap((f) => (f.state.enabled && f.state.typed ? [...ruleRefs(f.state.typed.targeting)] : [])));
      return {
        flags,
        audiences: listAudiences(w.store, projectId).filter((a) => used.has(a.id)),
        fragments: (w.store.getKeyed(kFragmentRecords, projectId)?.fragments ?? [])
          .filter((f) => refs.has(f.name))
          .map((f) => [f.name, fragmentRule(f)]),
        guarded: getProject(w.store, projectId)?.approvals,
        production: getProject(w.store, projectId)?.environments.includes('production'),
      };
    }),
  ]);
}

/** The multi project's scheduled changes still to run. */
export function pendingPlans(w: World): ScheduledChange[] {
  w.store.resetReadTxn();
  return listSchedules(w.store, ids.multi, { limit: 500, maxBytes: Number.POSITIVE_INFINITY, after: null, pendingOnly: true }).items;
}

export type Tried = 'held' | 'refused' | 'applied';

export function attempt<N extends CommandName>(name: N, input: CommandInput<N>): { tried: Tried; why: string } {
  try {
    const outcome = world.outcome(name, input, t0 + 5000);
    return outcome.applied ? { tried: 'applied', why: '' } : { tried: 'held', why: outcome.request.id };
  } catch (err) {
    if (err instanceof FlagwireError) return { tried: 'refused', why: `${err.title}: ${err.detail}` };
    throw err;
  }
}

// Approvals that nothing goes around (issue 46, item 3): every writer command the capabilities declare
// (and the writer's own), enumerated from the declarations, is run against a project whose environments
// are guarded, as each principal that may not bypass the policy. A command built to change a guarded
// environment must be held as a change request or refused; no command, whatever it is, may leave what
// evaluation reads there changed. A command added without a probe here fails the test: whoever adds it
// says how it could touch a guarded environment (docs/architecture.md, "Adding a capability").
import t from 'tap';
import { kCapabilityCommands, kStoreLayout } from '../../src/capabilities.js';
import { kWriterCommands } from '../../src/writer-thread/demo-seed.js';
import type { CommandInput, CommandName, Outcome } from '../../src/writer-thread/commands.js';
import { FlagwireError } from '../../src/errors.js';
import { kOperator, principalOf, type Principal } from '../../src/actor/audit-actor.js';
import { effectiveState } from '../../src/flag-records/flag-state.js';
import { jsonBody } from '../../src/model/request-body.js';
import { fragmentRule, kFragmentRecords } from '../../src/flag-records/fragment-records.js';
import type { ScheduledChange } from '../../src/release-plans/schedules.js';
import { ruleRefs } from '../../src/targeting/refs.js';
import { kChangeRequestRecords, type ChangeRequest } from '../../src/approvals/records.js';
import { requestView } from '../../src/approvals/request-view.js';
import { buildWorld, type World } from '../helpers/world.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { scratchDir } from '../helpers/scratch-dir.js';
import { getRollout, listSchedules } from '../../src/release-plans/plan-store.js';
import { getFlag, listFlags } from '../../src/flag-records/flag-store.js';
import { getProject, listAudiences, getAudience } from '../../src/model-records/project-records.js';

const dir = scratchDir('flagwire-approvals-bypass-');
const world = buildWorld(dir);
const { ids } = world;
const t0 = Date.now();

// Before the policy: an audience used in production, a group flag that inherits its cohorts there, and
// release plans made while nothing was guarded (so never approved), all due now.
world.run(
  'flagPatch',
  { flagId: ids.groupFlag, env: 'production', principal: kOperator, patch: { enabled: true, audienceId: ids.multiAudience } },
  t0,
);
const inheriting = world.run('flagCreate', {
  projectId: ids.multi,
  principal: kOperator,
  body: { name: 'inherits', environments: { production: { enabled: true, trafficPercentage: 40 } } },
}).id;
world.run('flagCohorts', { principal: kOperator, flagId: inheriting, cohorts: ['wide'] }, t0);
const cancelled = world.run(
  'scheduleCreate',
  { principal: kOperator, flagId: ids.groupFlag, env: 'production', body: { at: t0 + 3_600_000, patch: { trafficPercentage: 66 } } },
  t0,
).id;
const oldSchedule = world.run(
  'scheduleCreate',
  { principal: kOperator, flagId: ids.groupFlag, env: 'production', body: { at: t0 + 1000, patch: { trafficPercentage: 77 } } },
  t0,
).id;
const steps = [{ trafficPercentage: 10, holdMs: 1000 }, { trafficPercentage: 90 }];
const guard = { flagwire: 'flagwire_http_requests_total', max: 1, min: null, intervalMs: 1000, onBreach: 'rollback' as const };
const oldRollout = world.run(
  'rolloutStart',
  { principal: kOperator, flagId: inheriting, env: 'production', body: { steps, guard }, guardMetrics: null },
  t0,
).id;
const spareToken = world.run('tokenCreate', {
  projectId: ids.multi,
  principal: principalOf(ids.owner),
  name: 'spare',
  permission: 'write',
});
const hook = world.run('webhookCreate', {
  principal: kOperator,
  projectId: ids.multi,
  received: jsonBody(JSON.stringify({ url: 'https://hooks.example.com/x' })),
});

// Experiments made before the policy: in each project one not started (its start is tried below) and
// one running (its stop is tried below), each on a flag of its own; the running one's flag is one no
// other probe changes, as while it runs nothing may change who gets which variant of it there.
const experimentBody = (key: string, flagId: string) => jsonBody(JSON.stringify({ ...experimentPlan(flagId, 1000), key }));
const experimentEnv = (projectId: string) => (projectId === ids.multi ? 'production' : null);
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
const scheduled = reliedOn('scheduled');
const asked = reliedOn('asked');
// And for each a flag with nothing set in production (read there as absent now) that it will turn on.
const offFlag = (name: string) =>
  world.run('flagCreate', { projectId: ids.multi, principal: kOperator, body: { name, environments: { production: {} } } }).id;
const turnedOn = { scheduled: offFlag('scheduled-on'), asked: offFlag('asked-on') };

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
// The editor's pending request that would do the same with the other pair.
const askedRequest = world.outcome(
  'flagPatch',
  { flagId: asked.flagId, env: 'production', principal: principalOf(ids.editor), patch: asked.patch },
  t0,
);
if (askedRequest.applied) throw new Error('a guarded change was applied');
const askedOn = world.outcome(
  'flagPatch',
  { flagId: turnedOn.asked, env: 'production', principal: principalOf(ids.editor), patch: { enabled: true } },
  t0,
);
if (askedOn.applied) throw new Error('a guarded change was applied');
// A pending request by the editor, for the decisions' probes.
const pending = world.outcome(
  'flagPatch',
  { flagId: ids.flag, env: null, principal: principalOf(ids.editor), patch: { trafficPercentage: 5 } },
  t0,
);
if (pending.applied) throw new Error('a guarded change was applied');
const pendingId = pending.request.id;

/** An Admin and the operator set the policy and approve: the probes of those commands leave them out. */
function mayConfigure(principal: Principal): boolean {
  return principal.kind === 'operator' || (principal.kind === 'user' && principal.userId === ids.admin);
}

/** The principals that may not bypass: a person of each role that may change flags, a write token (no bypass), the operator. */
const kPrincipals: readonly { name: string; of: (projectId: string) => Principal }[] = [
  { name: 'an editor', of: () => principalOf(ids.editor) },
  { name: 'an admin', of: () => principalOf(ids.admin) },
  {
    name: 'a write token',
    of: (projectId) => ({ kind: 'token', tokenId: world.tokenIds[projectId === ids.single ? 'write' : 'multiWrite']! }),
  },
  { name: 'the operator', of: () => kOperator },
];

/**
 * How a command is tried: `guarded` probes are built to change a guarded environment (held or refused,
 * never applied); `free` probes say why the command cannot change one (what evaluation reads there is
 * checked unchanged all the same). `inputs` are made for each principal, or once for a command that
 * takes none (the scheduler's, the mailer's, the outbox's).
 */
type Probe<N extends CommandName> =
  | { guarded: true; inputs: (p: Principal, projectId: string) => CommandInput<N>[] }
  | { guarded: true; system: () => CommandInput<N>[] }
  | { free: string; inputs: () => CommandInput<N>[] };

const multiFile = (name: string) =>
  jsonBody(
    JSON.stringify({
      flagwire: 1,
      kind: 'multi',
      environments: ['staging', 'production'],
      flags: { [name]: { environments: { production: { enabled: true, trafficPercentage: 100, cohorts: [], audience: null } } } },
    }),
  );

/**
 * What a held or approved change relies on, by every kind of record that bears on an environment (the
 * capabilities' `environmentState` declarations): the records of the kind that the approved scheduled
 * change and the pending request will make production read, which the commands that change the kind try
 * above, or why none can be relied on so. A kind added without an entry here fails the test.
 */
const kDependencies = {
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
 * The relied-on flags `principal` changes: the pending request's author (the editor) changing its flag
 * edits their own request (the version probes below try that), so only the others try it.
 */
const reliedOnFlags = (principal: Principal): string[] =>
  kDependencies.flag.filter(
    (flagId) => (flagId !== asked.flagId && flagId !== turnedOn.asked) || principal.kind !== 'user' || principal.userId !== ids.editor,
  );

/** A flag's name now: the manifest API names flags by it. */
const flagName = (flagId: string): string => getFlag(world.store, flagId)!.name;

const kProbes: { [N in CommandName]: Probe<N> } = {
  // ---- built to change a guarded environment
  flagCreate: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.single
        ? [{ principal, projectId, body: { name: 'probe-on', enabled: true, trafficPercentage: 100 } }]
        : [{ principal, projectId, body: { name: 'probe-on', environments: { production: { enabled: true } } } }],
  },
  flagPatch: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.single
        ? [{ principal, flagId: ids.flag, env: null, patch: { enabled: false } }]
        : [
            {
              principal,
              flagId: ids.groupFlag,
              env: 'production',
              patch: { trafficPercentage: 30, variants: { on: true, off: false }, defaultVariant: 'on' },
            },
          ],
  },
  flagRename: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.single
        ? [{ principal, flagId: ids.flag, name: 'renamed' }]
        : [ids.groupFlag, ...reliedOnFlags(principal)].map((flagId, i) => ({ principal, flagId, name: `renamed-${i}` })),
  },
  flagCohorts: {
    guarded: true,
    inputs: (principal, projectId) => (projectId === ids.multi ? [{ principal, flagId: inheriting, cohorts: ['other'] }] : []),
  },
  flagDelete: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.single
        ? [{ principal, flagId: ids.flag }]
        : [ids.groupFlag, ...reliedOnFlags(principal)].map((flagId) => ({ principal, flagId })),
  },
  manifestFlagCreate: {
    guarded: true,
    inputs: (principal, projectId) => [
      { principal, projectId, received: jsonBody(JSON.stringify({ key: 'manifest-probe', type: 'string', defaultValue: 'on' })) },
    ],
  },
  manifestFlagUpdate: {
    guarded: true,
    inputs: (principal, projectId) => {
      const key = flagName(projectId === ids.single ? ids.flag : ids.groupFlag);
      return [{ principal, projectId, key, received: jsonBody(JSON.stringify({ key, type: 'boolean', defaultValue: true })) }];
    },
  },
  manifestFlagDelete: {
    guarded: true,
    inputs: (principal, projectId) =>
      (projectId === ids.single ? [ids.flag] : [ids.groupFlag, ...reliedOnFlags(principal)]).map((flagId) => ({
        principal,
        projectId,
        key: flagName(flagId),
      })),
  },
  flagsImport: {
    guarded: true,
    inputs: (principal, projectId) => [
      {
        principal,
        projectId,
        env: projectId === ids.single ? null : 'production',
        document: { flags: { imported: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' } } },
      },
    ],
  },
  flagsApply: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.multi
        ? [{ principal, projectId, received: multiFile('applied'), prune: false, ifProjectRevision: null, ifPlan: null }]
        : [],
  },
  unleashImport: {
    guarded: true,
    // An import into the guarded project: its file applied as `flagwire apply` applies one.
    inputs: (principal, projectId) =>
      projectId === ids.multi
        ? [
            {
              principal,
              orgId: getProject(world.store, ids.multi)!.orgId!,
              projects: [
                {
                  name: getProject(world.store, ids.multi)!.name,
                  projectId,
                  environments: ['staging', 'production'],
                  file: JSON.parse(Buffer.from(multiFile('imported').bytes).toString('utf8')),
                  digest: null,
                },
              ],
            },
          ]
        : [],
  },
  audienceUpdate: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.multi
        ? [ids.multiAudience, ...kDependencies.audience].map((audienceId) => ({
            principal,
            audienceId,
            rules: [{ attribute: 'plan', values: ['gold'] }],
          }))
        : [],
  },
  scheduleCreate: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.single
        ? [{ principal, flagId: ids.flag, env: null, body: { at: t0 + 3_600_000, patch: { enabled: false } } }]
        : [{ principal, flagId: ids.groupFlag, env: 'production', body: { at: t0 + 3_600_000, patch: { enabled: false } } }],
  },
  rolloutStart: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.single
        ? [{ principal, flagId: ids.flag, env: null, body: { steps }, guardMetrics: null }]
        : [{ principal, flagId: ids.groupFlag, env: 'production', body: { steps }, guardMetrics: null }],
  },
  rolloutAct: {
    guarded: true,
    inputs: (principal, projectId) => (projectId === ids.multi ? [{ principal, rolloutId: oldRollout, action: 'rollback' }] : []),
  },
  envRename: {
    guarded: true,
    inputs: (principal, projectId) => (projectId === ids.multi ? [{ principal, projectId, from: 'production', to: 'prod' }] : []),
  },
  // Only those who may not change the policy: an Admin and the operator may (it is configuration, audited: docs/approvals.md).
  approvalsSet: {
    guarded: true,
    inputs: (principal, projectId) =>
      mayConfigure(principal)
        ? []
        : [
            {
              principal,
              projectId,
              env: projectId === ids.single ? null : 'production',
              required: 1,
              bypassTokens: [world.tokenIds.multiWrite!],
            },
          ],
  },
  approvalsClear: {
    guarded: true,
    inputs: (principal, projectId) =>
      mayConfigure(principal) ? [] : [{ principal, projectId, env: projectId === ids.single ? null : 'production' }],
  },
  // The request's author (the editor), a token and the operator: none may approve it (the admin may: that is the approval).
  // (mayConfigure leaves out the operator too; it is refused as a token is: tried in test/approvals/cli.test.ts.)
  requestApprove: {
    guarded: true,
    inputs: (principal, projectId) => (projectId === ids.single && !mayConfigure(principal) ? [{ principal, requestId: pendingId }] : []),
  },
  // The scheduler's commands, acting as the plans made before the policy: never approved.
  scheduleRun: { guarded: true, system: () => [{ scheduleId: oldSchedule }] },
  rolloutAdvance: { guarded: true, system: () => [{ rolloutId: oldRollout }] },
  rolloutGuardRecord: {
    guarded: true,
    system: () => [
      { rolloutId: oldRollout, dueAt: getRollout(world.store, oldRollout)?.guardNextAt ?? 0, reading: { values: [5], note: null } },
    ],
  },
  fragmentUpdate: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.multi
        ? ['paying', ...kDependencies.fragments].map((name) => ({
            principal,
            projectId,
            name,
            received: jsonBody(JSON.stringify({ rule: { '==': [{ var: 'plan' }, 'free'] } })),
          }))
        : [],
  },
  fragmentDelete: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.multi ? ['paying', ...kDependencies.fragments].map((name) => ({ principal, projectId, name })) : [],
  },
  // ---- cannot change a guarded environment
  fragmentCreate: {
    free: 'a new shared fragment is named by no flag',
    inputs: () => [
      {
        principal: principalOf(ids.editor),
        projectId: ids.multi,
        received: jsonBody(JSON.stringify({ name: 'unused', rule: { '==': [1, 1] } })),
      },
    ],
  },
  orgCreate: {
    free: 'a new organisation has no projects',
    inputs: () => [{ principal: kOperator, name: 'Probe org', plan: 'teams' }] as never,
  },
  orgUpdate: {
    free: "an organisation's plan and standing are not what evaluation reads",
    inputs: () => [{ orgId: ids.orgA, plan: 'enterprise' }] as never,
  },
  userCreate: { free: 'a user is not configuration', inputs: () => [{ email: 'probe@a.test' }] },
  orgAddMember: {
    free: 'a membership is not configuration',
    inputs: () => [{ principal: kOperator, orgId: ids.orgA, userId: ids.viewer, role: 'editor' as const }],
  },
  userPassword: { free: 'a password is not configuration', inputs: () => [{ userId: ids.viewer, passwordHash: 'x'.repeat(60) }] },
  sessionStart: {
    free: 'a session is not configuration',
    inputs: () => [{ userId: ids.viewer, idHash: 'b'.repeat(64), csrfToken: 'c', expiresAt: t0 + 3_600_000 }],
  },
  sessionEnd: { free: 'a session is not configuration', inputs: () => [{ idHash: 'b'.repeat(64) }] },
  scimEnable: { free: 'a SCIM secret is a credential', inputs: () => [{ orgId: ids.orgA, principal: kOperator }] },
  scimDisable: { free: 'a SCIM secret is a credential', inputs: () => [{ orgId: ids.orgA, principal: kOperator }] },
  scimGroupRole: {
    free: "a group's role is a membership, not configuration",
    inputs: () => [{ orgId: ids.orgA, principal: kOperator, group: 'Probe admins', role: 'admin' }],
  },
  scimUserWrite: {
    free: 'a provisioned person is a membership (their tokens revoked are credentials), not configuration',
    inputs: () => [
      {
        orgId: ids.orgA,
        secretHash: 'd'.repeat(64),
        base: 'http://probe/scim/v2',
        verb: 'create' as const,
        body: { userName: 'probe@a.test' },
      },
    ],
  },
  scimGroupWrite: {
    free: "a group is its members' roles, not configuration",
    inputs: () => [
      {
        orgId: ids.orgA,
        secretHash: 'd'.repeat(64),
        base: 'http://probe/scim/v2',
        verb: 'create' as const,
        body: { displayName: 'Probe' },
      },
    ],
  },
  ssoSet: {
    free: 'single sign-on is who may sign in, not configuration',
    inputs: () => [
      {
        orgId: ids.orgA,
        principal: kOperator,
        received: jsonBody(JSON.stringify({ issuer: 'https://idp.test', clientId: 'probe', clientSecret: 'probe-secret' })),
      },
    ],
  },
  ssoRemove: { free: 'single sign-on is who may sign in, not configuration', inputs: () => [{ orgId: ids.orgA, principal: kOperator }] },
  ssoStateUse: {
    free: 'a sign-in coming back is not configuration',
    inputs: () => [{ stateHash: 'e'.repeat(64), orgId: ids.orgA, expiresAt: t0 + 600_000 }],
  },
  ssoSignIn: {
    free: 'a sign-in is a session (and a membership), not configuration',
    inputs: () => [
      {
        orgId: ids.orgA,
        issuer: 'https://idp.test',
        subject: 'probe',
        email: 'probe@a.test',
        name: null,
        groups: [],
        session: { idHash: 'a'.repeat(64), csrfToken: 'c', expiresAt: t0 + 3_600_000 },
      },
    ],
  },
  orgInvite: {
    free: 'an invitation is not configuration',
    inputs: () => [
      {
        principal: principalOf(ids.owner),
        orgId: ids.orgA,
        email: 'invited@a.test',
        role: 'editor',
        consoleUrl: 'http://127.0.0.1/console/',
      },
    ],
  },
  invitationAccept: {
    free: 'a membership is not configuration',
    inputs: () => [{ invitationId: 'inv_none', principal: principalOf(ids.viewer) }],
  },
  invitationDecline: {
    free: 'a membership is not configuration',
    inputs: () => [{ invitationId: 'inv_none', principal: principalOf(ids.viewer) }],
  },
  invitationJoin: {
    free: 'a membership is not configuration',
    inputs: () => [{ invitationId: 'inv_none', tokenHash: 'a'.repeat(64), name: 'New', passwordHash: 'x'.repeat(60) }] as never,
  },
  projectCreate: {
    free: 'a new project has no policy',
    inputs: () => [{ principal: kOperator, name: 'Probe', orgId: ids.orgA, kind: 'single' as const }],
  },
  envAdd: {
    free: 'a new environment is not guarded',
    inputs: () => [{ principal: principalOf(ids.admin), projectId: ids.multi, name: 'canary' }],
  },
  envProtect: {
    free: "the console's confirm mark is not what evaluation reads",
    inputs: () => [{ principal: principalOf(ids.admin), projectId: ids.multi, env: 'production', protect: true }],
  },
  audienceCreate: {
    free: 'a new audience is used by no flag',
    inputs: () => [{ principal: principalOf(ids.admin), projectId: ids.multi, name: 'Probe', rules: [{ attribute: 'x', values: ['y'] }] }],
  },
  flagDescribe: {
    free: 'a description is not what evaluation reads',
    inputs: () => [{ principal: principalOf(ids.editor), flagId: ids.groupFlag, text: 'probe' }],
  },
  flagTags: {
    free: 'tags are not what evaluation reads',
    inputs: () => [{ principal: principalOf(ids.editor), flagId: ids.groupFlag, tags: ['probe'] }],
  },
  recordUsage: {
    free: 'usage is counted, not configured',
    inputs: () => [{ counts: [{ flagId: ids.groupFlag, evaluations: 1, lastEvaluatedAt: t0 }] }],
  },
  scheduleCancel: {
    free: 'cancelling a plan changes nothing by itself',
    inputs: () => [{ principal: principalOf(ids.editor), scheduleId: cancelled }],
  },
  webhookCreate: {
    free: 'a webhook is not what evaluation reads',
    inputs: () => [
      { principal: kOperator, projectId: ids.multi, received: jsonBody(JSON.stringify({ url: 'https://hooks.example.com/y' })) },
    ],
  },
  webhookDelete: { free: 'a webhook is not what evaluation reads', inputs: () => [{ principal: kOperator, webhookId: hook.id }] },
  webhookRedeliver: { free: 'a delivery is not what evaluation reads', inputs: () => [{ principal: kOperator, deliveryId: 'msg_none' }] },
  webhookClaim: { free: 'a delivery is not what evaluation reads', inputs: () => [{ deliveryId: 'msg_none', nodeId: 'n', claimMs: 1000 }] },
  webhookClaimMany: {
    free: 'a delivery is not what evaluation reads',
    inputs: () => [{ deliveryIds: ['msg_none'], nodeId: 'n', claimMs: 1000 }],
  },
  webhookResult: {
    free: 'a delivery is not what evaluation reads',
    inputs: () => [{ deliveryId: 'msg_none', outcome: { status: 200, error: null, latencyMs: 1 }, giveUpMs: 1000 }] as never,
  },
  webhookResultMany: { free: 'a delivery is not what evaluation reads', inputs: () => [{ results: [], giveUpMs: 1000 }] },
  experimentCreate: {
    free: 'an experiment not started is not what evaluation reads',
    inputs: () => [{ principal: kOperator, projectId: ids.multi, env: 'production', received: experimentBody('probe-new', ids.groupFlag) }],
  },
  experimentUpdate: {
    free: "an experiment's plan is not what evaluation reads",
    inputs: () => [
      {
        principal: kOperator,
        projectId: ids.multi,
        env: 'production',
        key: 'probe-draft',
        received: jsonBody('{"plannedSubjects": 2000}'),
      },
    ],
  },
  experimentStart: {
    guarded: true,
    inputs: (principal, projectId) => [{ principal, projectId, env: experimentEnv(projectId), key: 'probe-draft' }],
  },
  experimentStop: {
    guarded: true,
    inputs: (principal, projectId) => [{ principal, projectId, env: experimentEnv(projectId), key: 'probe-running' }],
  },
  experimentDelete: {
    free: 'an experiment not running is not what evaluation reads',
    inputs: () => [{ principal: kOperator, projectId: ids.multi, env: 'production', key: 'probe-new' }],
  },
  experimentLook: {
    free: 'a look at the results is not what evaluation reads',
    inputs: () => [{ projectId: ids.multi, environment: 'production', key: 'probe-running', pValue: 0.5, point: null }],
  },
  tokenCreate: {
    free: 'a token is a credential, not configuration',
    inputs: () => [{ projectId: ids.multi, principal: principalOf(ids.owner), name: 'probe', permission: 'write' }],
  },
  tokenRotate: { free: 'a token is a credential', inputs: () => [{ tokenId: spareToken.id, principal: principalOf(ids.owner) }] },
  tokenRevoke: { free: 'a token is a credential', inputs: () => [{ tokenId: spareToken.id, principal: principalOf(ids.owner) }] },
  recordActivity: { free: "a token's activity is not configuration", inputs: () => [{ batches: [] }] },
  mailClaim: { free: 'mail is not configuration', inputs: () => [{ seq: 1, nodeId: 'n', claimMs: 1000 }] },
  mailRelease: { free: 'mail is not configuration', inputs: () => [{ seq: 1, nodeId: 'n' }] },
  mailResult: { free: 'mail is not configuration', inputs: () => [{ seq: 1, error: null }] },
  clientKeyCreate: {
    free: 'a client key is a credential, not what evaluation reads',
    inputs: () => [
      {
        principal: kOperator,
        projectId: ids.multi,
        received: jsonBody(JSON.stringify({ name: 'probe', environment: 'production', uses: ['events'] })),
      },
    ],
  },
  clientKeyRevoke: { free: 'a client key is a credential', inputs: () => [{ principal: kOperator, keyId: 'ck_none' }] },
  eventSettingsSet: {
    free: 'how long raw events are kept, which evaluation never reads',
    inputs: () => [{ principal: kOperator, projectId: ids.multi, received: jsonBody(JSON.stringify({ rawEventRetentionDays: 30 })) }],
  },
  relayKeyCreate: { free: 'a relay key is a credential', inputs: () => [{ name: 'probe' }] },
  relayKeyRevoke: { free: 'a relay key is a credential', inputs: () => [{ keyId: 'rk_none' }] },
  requestReject: {
    free: 'a rejected request is never applied',
    inputs: () => [{ principal: principalOf(ids.viewer), requestId: pendingId }],
  },
  requestWithdraw: {
    free: 'a withdrawn request is never applied',
    inputs: () => [{ principal: principalOf(ids.admin), requestId: pendingId }],
  },
  requestComment: {
    free: 'a comment changes nothing',
    inputs: () => [{ principal: principalOf(ids.viewer), requestId: pendingId, text: 'probe' }],
  },
  seedDemo: { free: 'the demo seeds only an empty store, in projects of its own', inputs: () => [{}] },
};

/**
 * What evaluation reads in the guarded environments, read here from the records themselves (not through
 * the gate's own views): each flag's effective state there with its name and bucketing, and the
 * audiences and shared fragments those flags use. (A plan is what will change it: making one is held or refused above.)
 */
function guardedState(w: World): string {
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
function pendingPlans(w: World): ScheduledChange[] {
  w.store.resetReadTxn();
  return listSchedules(w.store, ids.multi, { limit: 500, maxBytes: Number.POSITIVE_INFINITY, after: null, pendingOnly: true }).items;
}

type Tried = 'held' | 'refused' | 'applied';

function attempt<N extends CommandName>(name: N, input: CommandInput<N>): { tried: Tried; why: string } {
  try {
    const outcome = world.outcome(name, input, t0 + 5000);
    return outcome.applied ? { tried: 'applied', why: '' } : { tried: 'held', why: outcome.request.id };
  } catch (err) {
    if (err instanceof FlagwireError) return { tried: 'refused', why: `${err.title}: ${err.detail}` };
    throw err;
  }
}

t.test('every writer command has a probe: a new command says how it could touch a guarded environment', async (t) => {
  const declared = [...kCapabilityCommands.keys(), ...Object.keys(kWriterCommands)];
  for (const name of declared) t.ok(Object.hasOwn(kProbes, name), `${name} has a probe`);
  t.ok(declared.length >= 50, `${declared.length} commands enumerated from the declarations`);
});

t.test('every kind that bears on an environment says what held and approved changes rely on of it', async (t) => {
  const kinds = kStoreLayout.bearingKinds.map((bearing) => bearing.kind.name);
  for (const kind of kinds) t.ok(Object.hasOwn(kDependencies, kind), `${kind} has its dependencies here`);
  t.ok(kinds.length >= 5, `${kinds.length} kinds enumerated from the declarations`);
  t.equal(pendingPlans(world).filter((plan) => plan.flagId === scheduled.flagId).length, 1, 'the approved plan is made');
  t.equal(world.store.getKeyed(kChangeRequestRecords, askedRequest.request.id)?.status, 'pending', 'the request is pending');
  t.equal(pendingPlans(world).filter((plan) => plan.flagId === turnedOn.scheduled).length, 1, 'the approved plan is made');
  t.equal(world.store.getKeyed(kChangeRequestRecords, askedOn.request.id)?.status, 'pending', 'the request is pending');
});

t.test('no command changes a guarded environment for anyone who may not bypass it', async (t) => {
  const declared = [...kCapabilityCommands.keys(), ...Object.keys(kWriterCommands)] as CommandName[];
  const before = guardedState(world);
  const counts: Record<Tried, number> = { held: 0, refused: 0, applied: 0 };
  for (const name of declared) {
    const probe = kProbes[name] as Probe<CommandName>;
    const runs: { who: string; input: unknown }[] =
      'free' in probe
        ? probe.inputs().map((input) => ({ who: 'as given', input }))
        : 'system' in probe
          ? probe.system().map((input) => ({ who: 'the scheduler', input }))
          : kPrincipals.flatMap((p) =>
              [ids.single, ids.multi].flatMap((projectId) =>
                probe.inputs(p.of(projectId), projectId).map((input) => ({ who: `${p.name} of ${projectId}`, input })),
              ),
            );
    t.ok(runs.length > 0, `${name} is tried`);
    for (const { who, input } of runs) {
      const { tried, why } = attempt(name, input as never);
      counts[tried]++;
      if (!('free' in probe)) t.not(tried, 'applied', `${name} by ${who}: held or refused (${tried}${why ? `: ${why}` : ''})`);
      t.equal(guardedState(world), before, `${name} by ${who} (${tried}) left the guarded environments as they were`);
    }
  }
  t.ok(counts.held > 10, `${counts.held} changes held as requests`);
  t.ok(counts.refused > 10, `${counts.refused} refused`);
});

// ---- Issue 54, items 2 to 4: each command built to change a guarded environment, tried again as a token
// its approver made (or rotated), with an approver demoted between approval and apply, and with its
// author's edit between the approver's view and their approval. None may apply what nobody may approve.

/** The policy's own commands and approving itself: not changes a request holds (tried above). */
const kNotHeld: ReadonlySet<CommandName> = new Set<CommandName>(['approvalsSet', 'approvalsClear', 'requestApprove']);

/** Each guarded probe's inputs as `principalFor(projectId)` sends them (none for a project it gives null). */
function guardedRuns(principalFor: (projectId: string) => Principal | null): { name: CommandName; input: unknown }[] {
  const runs: { name: CommandName; input: unknown }[] = [];
  for (const name of Object.keys(kProbes) as CommandName[]) {
    const probe = kProbes[name] as Probe<CommandName>;
    if ('free' in probe || 'system' in probe || kNotHeld.has(name)) continue;
    for (const projectId of [ids.single, ids.multi]) {
      const principal = principalFor(projectId);
      if (principal !== null) for (const input of probe.inputs(principal, projectId)) runs.push({ name, input });
    }
  }
  return runs;
}

function requestNow(id: string): ChangeRequest {
  world.store.resetReadTxn();
  return world.store.getKeyed(kChangeRequestRecords, id)!;
}

/** A new member of organisation A. */
function member(name: string, role: 'admin' | 'editor'): string {
  const userId = world.run('userCreate', { email: `${name}@a.test` }).id;
  world.run('orgAddMember', { principal: kOperator, orgId: ids.orgA, userId, role });
  return userId;
}

t.test("a token's change is its creator's and its rotator's: for every command, neither may approve what it holds", async (t) => {
  // An Admin with no pending request of their own (the probes above leave the others' pending).
  const approver = member('approver', 'admin');
  const made = (projectId: string) =>
    world.run('tokenCreate', { projectId, principal: principalOf(approver), name: `approvers-${projectId}`, permission: 'write' }).id;
  const theirs: Record<string, string> = { [ids.single]: made(ids.single), [ids.multi]: made(ids.multi) };
  // Another's token, rotated by the approver: its new secret was handed to them.
  const holder = member('holder', 'editor');
  const held0 = world.run('tokenCreate', { projectId: ids.multi, principal: principalOf(holder), name: 'holders', permission: 'write' });
  const rotated = world.run('tokenRotate', { tokenId: held0.id, principal: principalOf(approver) }).id;
  const tokens = [
    { who: 'a token the approver made', tokenOf: (projectId: string): string | null => theirs[projectId]!, as: 'createdBy' },
    { who: 'a token the approver rotated', tokenOf: (projectId: string) => (projectId === ids.multi ? rotated : null), as: 'rotatedBy' },
  ] as const;
  let held = 0;
  for (const { who, tokenOf, as } of tokens) {
    const runs = guardedRuns((projectId) => {
      const tokenId = tokenOf(projectId);
      return tokenId === null ? null : { kind: 'token', tokenId };
    });
    for (const { name, input } of runs) {
      const before = guardedState(world);
      const { tried, why } = attempt(name, input as never);
      t.not(tried, 'applied', `${name} by ${who}: held or refused (${tried}${why ? `: ${why}` : ''})`);
      if (tried !== 'held') continue;
      held++;
      const view = requestView(world.store, requestNow(why));
      t.match(view.author[as], { id: `user:${approver}` }, `${name} by ${who}: the request names the approver as its ${as}`);
      const approval = attempt('requestApprove', { principal: principalOf(approver), requestId: why, ifVersion: view.version });
      t.equal(approval.tried, 'refused', `${name} by ${who}: the approver may not approve it`);
      t.match(approval.why, /author of a change may not approve it/);
      t.equal(guardedState(world), before, `${name} by ${who}: nothing guarded changed`);
      const withdrawn = world.run('requestWithdraw', { principal: principalOf(approver), requestId: why }, t0 + 5000);
      t.equal(withdrawn.status, 'withdrawn', `${name} by ${who}: theirs to withdraw`);
    }
  }
  t.ok(held > 10, `${held} changes held and refused to the approver`);

  // The approver changing the same record in person edits their token's request: it is theirs.
  const first = world.outcome(
    'flagPatch',
    {
      principal: { kind: 'token', tokenId: theirs[ids.multi]! },
      flagId: ids.groupFlag,
      env: 'production',
      patch: { trafficPercentage: 31 },
    },
    t0,
  );
  const edit = world.outcome(
    'flagPatch',
    { principal: principalOf(approver), flagId: ids.groupFlag, env: 'production', patch: { trafficPercentage: 32 } },
    t0,
  );
  if (first.applied || edit.applied) throw new Error('a guarded change was applied');
  t.equal(edit.request.id, first.request.id, "the approver's own change edits their token's request");
  t.equal(edit.request.version, 2);
  world.run('requestWithdraw', { principal: principalOf(approver), requestId: first.request.id }, t0 + 5000);
});

t.test('approvals judged when applied, and bound to the version seen: for every command, nothing unapproved applies', async (t) => {
  // Two approvals, from approvers other than the author.
  const author = member('author2', 'admin');
  const demoted = member('demoted', 'admin');
  for (const [projectId, env] of [
    [ids.single, null],
    [ids.multi, 'production'],
  ] as const) {
    world.run('approvalsSet', { projectId, env, required: 2, principal: principalOf(ids.admin) }, t0);
    t.teardown(() => world.run('approvalsSet', { projectId, env, required: 1, principal: principalOf(ids.admin) }, t0));
  }
  const demote = (role: 'viewer' | 'admin') => world.run('orgAddMember', { principal: kOperator, orgId: ids.orgA, userId: demoted, role });

  await t.test('an approver demoted between approval and apply no longer counts', async (t) => {
    let held = 0;
    for (const { name, input } of guardedRuns(() => principalOf(author))) {
      const before = guardedState(world);
      const { tried, why } = attempt(name, input as never);
      t.not(tried, 'applied', `${name}: held or refused (${tried}${why ? `: ${why}` : ''})`);
      if (tried !== 'held') continue;
      held++;
      const version = requestNow(why).version;
      t.match(world.run('requestApprove', { principal: principalOf(demoted), requestId: why, ifVersion: version }, t0 + 5000), {
        status: 'pending',
      });
      demote('viewer');
      const second = world.run('requestApprove', { principal: principalOf(ids.owner), requestId: why, ifVersion: version }, t0 + 5000);
      t.match(second, { status: 'pending', lapsed: [{ id: `user:${demoted}`, why: /is viewer/ }] }, `${name}: the demoted approval lapsed`);
      t.equal(second.approvals.length, 1, `${name}: one approval counts of two`);
      t.equal(guardedState(world), before, `${name}: nothing guarded changed`);
      demote('admin');
      world.run('requestWithdraw', { principal: principalOf(author), requestId: why }, t0 + 5000);
    }
    t.ok(held > 10, `${held} changes held, none applied by a lapsed approval`);
  });

  await t.test("an approval of the version seen, not of the author's edit since", async (t) => {
    const rule = (plan: string) => jsonBody(JSON.stringify({ rule: { '==': [{ var: 'plan' }, plan] } }));
    const me = principalOf(author);
    // Each command, then the author's edit of the same record while the approver reads the first version.
    const edits: { name: string; first: () => unknown; edit: () => unknown }[] = [
      {
        name: 'flagPatch',
        first: () =>
          world.outcome('flagPatch', { principal: me, flagId: ids.groupFlag, env: 'production', patch: { trafficPercentage: 10 } }, t0),
        edit: () =>
          world.outcome(
            'flagPatch',
            { principal: me, flagId: ids.groupFlag, env: 'production', patch: { enabled: true, trafficPercentage: 100 } },
            t0,
          ),
      },
      {
        name: 'flagRename',
        first: () => world.outcome('flagRename', { principal: me, flagId: ids.flag, name: 'renamed-once' }, t0),
        edit: () => world.outcome('flagRename', { principal: me, flagId: ids.flag, name: 'renamed-twice' }, t0),
      },
      {
        name: 'flagCohorts',
        first: () => world.outcome('flagCohorts', { principal: me, flagId: inheriting, cohorts: ['one'] }, t0),
        edit: () => world.outcome('flagCohorts', { principal: me, flagId: inheriting, cohorts: ['everyone'] }, t0),
      },
      {
        name: 'audienceUpdate',
        first: () =>
          world.outcome(
            'audienceUpdate',
            { principal: me, audienceId: ids.multiAudience, name: 'Beta', rules: [{ attribute: 'plan', values: ['gold'] }] },
            t0,
          ),
        edit: () =>
          world.outcome(
            'audienceUpdate',
            { principal: me, audienceId: ids.multiAudience, name: 'Beta', rules: [{ attribute: 'plan', values: ['free'] }] },
            t0,
          ),
      },
      {
        name: 'fragmentUpdate',
        first: () => world.outcome('fragmentUpdate', { principal: me, projectId: ids.multi, name: 'paying', received: rule('gold') }, t0),
        edit: () => world.outcome('fragmentUpdate', { principal: me, projectId: ids.multi, name: 'paying', received: rule('free') }, t0),
      },
    ];
    for (const { name, first, edit } of edits) {
      const before = guardedState(world);
      const opened = first() as Outcome<unknown>;
      if (opened.applied) throw new Error(`${name}: a guarded change was applied`);
      const seen = requestView(world.store, requestNow(opened.request.id));
      const edited = edit() as Outcome<unknown>;
      if (edited.applied) throw new Error(`${name}: a guarded change was applied`);
      t.equal(edited.request.id, seen.id, `${name}: the author's edit edits the request`);
      const now = requestNow(seen.id);
      t.equal(now.version, seen.version + 1, `${name}: its next version`);
      const stale = attempt('requestApprove', { principal: principalOf(ids.owner), requestId: seen.id, ifVersion: seen.version });
      t.equal(stale.tried, 'refused', `${name}: approving the version seen is refused`);
      t.match(stale.why, /^Change request changed: /);
      t.strictSame(requestNow(seen.id), now, `${name}: nothing recorded`);
      t.equal(guardedState(world), before, `${name}: nothing guarded changed`);
      const fresh = world.run(
        'requestApprove',
        { principal: principalOf(ids.owner), requestId: seen.id, ifVersion: now.version },
        t0 + 5000,
      );
      t.match(fresh, { status: 'pending', approvals: [{ id: `user:${ids.owner}` }] }, `${name}: the version now may be approved`);
      world.run('requestWithdraw', { principal: principalOf(author), requestId: seen.id }, t0 + 5000);
    }
  });
});

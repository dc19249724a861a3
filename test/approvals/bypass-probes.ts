// How each writer command could touch a guarded environment (bypass.test.ts): a probe for every command
// the capabilities declare and the writer's own, tried by each principal that may not bypass the policy
// in the world of bypass-world.ts. A command added without a probe here fails the test: whoever adds it
// says how it could touch a guarded environment (docs/architecture.md, "Adding a capability").
import type { CommandInput, CommandName } from '../../src/writer/thread/commands.js';
import { kOperator, principalOf, type Principal } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { getRollout } from '../../src/release-plans/records.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { getProject } from '../../src/model/records/project-records.js';
import {
  world,
  ids,
  archivedOn,
  t0,
  inheriting,
  cancelled,
  oldSchedule,
  steps,
  oldRollout,
  spareToken,
  hook,
  experimentBody,
  experimentEnv,
  asked,
  turnedOn,
  pendingId,
  mayConfigure,
  kDependencies,
} from './bypass-world.js';

/**
 * How a command is tried: `guarded` probes are built to change a guarded environment (held or refused,
 * never applied); `free` probes say why the command cannot change one (what evaluation reads there is
 * checked unchanged all the same). `inputs` are made for each principal, or once for a command that
 * takes none (the scheduler's, the mailer's, the outbox's).
 */
export type Probe<N extends CommandName> =
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
 * The relied-on flags `principal` changes: the pending request's author (the editor) changing its flag
 * edits their own request (the version probes below try that), so only the others try it.
 */
const reliedOnFlags = (principal: Principal): string[] =>
  kDependencies.flag.filter(
    (flagId) => (flagId !== asked.flagId && flagId !== turnedOn.asked) || principal.kind !== 'user' || principal.userId !== ids.editor,
  );

/** A flag's name now: the manifest API names flags by it. */
const flagName = (flagId: string): string => getFlag(world.store, flagId)!.name;

export const kProbes: { [N in CommandName]: Probe<N> } = {
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
    inputs: () => [{ counts: [{ flagId: ids.groupFlag, environment: '', evaluations: 1, lastEvaluatedAt: t0 }] }],
  },
  recordFlagSetReads: {
    free: 'reads of flag sets are counted, not configured',
    inputs: () => [{ reads: [{ projectId: ids.multi, environment: 'production', at: t0 }] }],
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
  flagArchive: {
    guarded: true,
    inputs: (principal, projectId) =>
      projectId === ids.single
        ? [{ principal, flagId: ids.flag }]
        : [ids.groupFlag, ...reliedOnFlags(principal)].map((flagId) => ({ principal, flagId })),
  },
  flagRestore: {
    guarded: true,
    inputs: (principal, projectId) => [{ principal, flagId: archivedOn.get(projectId)! }],
  },
  flagLifecycle: {
    free: 'type, owner and lifetime are not what evaluation reads',
    inputs: () => [{ principal: principalOf(ids.editor), flagId: ids.groupFlag, patch: { type: 'kill-switch', owner: 'probe' } }],
  },
  countUsageReport: {
    free: 'usage is counted, not configured',
    inputs: () => [
      {
        sender: { kind: 'token' as const, tokenId: world.tokenIds.multiWrite!, projectId: ids.multi },
        batchId: 'probe-batch',
        counts: [{ flagId: ids.groupFlag, environment: '', evaluations: 1, lastEvaluatedAt: t0 }],
      },
    ],
  },
  codeRefsPush: {
    free: 'code references are what CI found in source code, which evaluation never reads',
    inputs: () => [
      {
        principal: kOperator,
        projectId: ids.multi,
        received: jsonBody(JSON.stringify({ repository: 'probe', branch: 'main', commit: 'c0', references: [] })),
      },
    ],
  },
};

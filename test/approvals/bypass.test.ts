// Approvals that nothing goes around (issue 46, item 3): every writer command the capabilities declare
// (and the writer's own), enumerated from the declarations, is run against a project whose environments
// are guarded, as each principal that may not bypass the policy. A command built to change a guarded
// environment must be held as a change request or refused; no command, whatever it is, may leave what
// evaluation reads there changed. The world is bypass-world.ts, the probes bypass-probes.ts. A command
// added without a probe fails the test: whoever adds it says how it could touch a guarded environment
// (docs/architecture.md, "Adding a capability").
import t from 'tap';
import { kCapabilityCommands, kStoreLayout } from '../../src/capabilities.js';
import { kWriterCommands } from '../../src/writer/thread/demo-seed.js';
import type { CommandName, Outcome } from '../../src/writer/thread/commands.js';
import { kOperator, principalOf, type Principal } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { kChangeRequestRecords, type ChangeRequest } from '../../src/approvals/records.js';
import { requestView } from '../../src/approvals/request-view.js';
import { kProbes, type Probe } from './bypass-probes.js';
import {
  askedOn,
  askedRequest,
  attempt,
  guardedState,
  ids,
  inheriting,
  kDependencies,
  kPrincipals,
  pendingPlans,
  scheduled,
  type Tried,
  t0,
  turnedOn,
  world,
} from './bypass-world.js';

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

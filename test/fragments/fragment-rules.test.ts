// Shared fragments' rules in process (issue 47): the names a rule refers to; a stored rule's references
// replaced (the same object when the project has none); a flag's rule checked with its project's
// fragments, in PATCH's words when it names none; a fragment's own rule checked as flagd checks an
// evaluator; a change checked with every flag using it (naming the flag it would break); a fragment in
// use not deleted (naming each flag and environment); an import's evaluators made fragments, the file
// winning a clash, and a clash that would break another flag refusing the whole file.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { kNoFragments } from '../../src/flags/records/fragment-records.js';
import { resolvedTyped } from '../../src/flags/records/fragment-resolve.js';
import { sharedRuleProblems, typedProblems } from '../../src/flags/variant-rules.js';
import { fragmentRule, listFragments } from '../../src/flags/records/fragment-records.js';
import { jsonBody } from '../../src/model/request-body.js';
import { ruleRefs } from '../../src/targeting/refs.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { fragmentView } from '../../src/fragments/fragment-commands.js';

const kPro = { '==': [{ var: 'plan' }, 'pro'] };
/** A rule that uses fragment "pro" 20 times: with a 60 KiB "pro", 1.2 MiB resolved, over a rule's 1 MiB. */
const kHeavy = { if: [...Array.from({ length: 20 }, (): unknown => ({ $ref: 'pro' })), 'a', 'b'] };
const kBig = { in: [{ var: 'plan' }, Array.from({ length: 6000 }, (_, i) => `plan-${String(i).padStart(4, '0')}`)] };
const kTyped = { variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting: { if: [{ $ref: 'pro' }, 'a', 'b'] } };

t.test('ruleRefs: every name a rule refers to, anywhere in it; a $ref beside other keys or not a string is none', async (t) => {
  t.same([...ruleRefs({ if: [{ $ref: 'x' }, 'a', { or: [{ $ref: 'y' }, { $ref: 'x' }] }] })].sort(), ['x', 'y']);
  t.same([...ruleRefs({ if: [{ $ref: 'x', other: 1 }, { $ref: 7 }, 'a'] })], []);
});

t.test('resolvedTyped: the references replaced; the same object when the project has no fragments', async (t) => {
  t.equal(resolvedTyped(kTyped, kNoFragments), kTyped, 'nothing walked for a project without fragments');
  const resolved = resolvedTyped(kTyped, { pro: kPro });
  t.same(resolved.targeting, { if: [kPro, 'a', 'b'] });
  t.same(kTyped.targeting, { if: [{ $ref: 'pro' }, 'a', 'b'] }, 'the stored rule is left as written');
});

t.test("typedProblems: a reference checked against the project's fragments, in PATCH's words", async (t) => {
  t.same(typedProblems(kTyped, { pro: kPro }), []);
  t.same(typedProblems(kTyped, { other: kPro }), [
    { path: 'targeting.if[0]', message: '$ref "pro" names no shared fragment of this project (known: "other")' },
  ]);
  t.same(typedProblems(kTyped), [{ path: 'targeting.if[0]', message: '$ref "pro" names no shared fragment: this project has none' }]);
});

t.test("sharedRuleProblems: a fragment's rule checked as flagd checks an evaluator, paths from the rule", async (t) => {
  t.same(sharedRuleProblems(kPro), []);
  t.same(sharedRuleProblems({ if: [{ nope: [1] }, true, false] }), [{ path: 'if[0]', message: 'unknown operator "nope"' }]);
  t.match(sharedRuleProblems(JSON.parse('{"in": [1, {"__proto__": 1}]}')), [{ message: /__proto__/ }]);
});

t.test('the commands: a change checked with every flag using it, a fragment in use not deleted, each naming the flag', async (t) => {
  const world = buildWorld(tempDataDir());
  t.teardown(() => world.store.close());
  const { ids } = world;
  const fragment = (command: 'fragmentCreate' | 'fragmentUpdate', projectId: string, name: string, rule: unknown) =>
    command === 'fragmentCreate'
      ? world.run('fragmentCreate', { principal: kOperator, projectId, received: jsonBody(JSON.stringify({ name, rule })) })
      : world.run('fragmentUpdate', { principal: kOperator, projectId, name, received: jsonBody(JSON.stringify({ rule })) });
  fragment('fragmentCreate', ids.single, 'pro', kPro);
  fragment('fragmentCreate', ids.multi, 'pro', kPro);
  world.run('flagCreate', { principal: kOperator, projectId: ids.single, body: { name: 'tiers', ...kTyped } });
  world.run('flagPatch', { principal: kOperator, flagId: ids.groupFlag, env: 'staging', patch: kTyped });

  world.run('flagPatch', { principal: kOperator, flagId: ids.groupFlag, env: 'production', patch: { ...kTyped, targeting: kHeavy } });
  const tooBig = refusedCommand(t, world, 'INVALID_REQUEST', () => fragment('fragmentUpdate', ids.multi, 'pro', kBig));
  // Past the project's count of its references (src/flags/fragment-refs.ts), before any flag's check.
  t.match(
    tooBig,
    /^used by flag "search" in staging, flag "search" in production: with this rule the project's references would add \d+ bytes .* at most 1048576 bytes/,
  );

  const inUse = refusedCommand(t, world, 'INVALID_REQUEST', () =>
    world.run('fragmentDelete', { principal: kOperator, projectId: ids.multi, name: 'pro' }),
  );
  t.equal(
    inUse,
    'shared fragment "pro" is used by flag "search" in staging, flag "search" in production: change their rules first (remove its {"$ref": "pro"})',
  );
  const viewer = refusedCommand(t, world, 'FORBIDDEN', () =>
    world.run('fragmentDelete', { principal: principalOf(ids.viewer), projectId: ids.single, name: 'pro' }),
  );
  t.match(viewer, /Editor, Admin or Owner/);
  const editor = world.run('fragmentUpdate', {
    principal: principalOf(ids.editor),
    projectId: ids.single,
    name: 'pro',
    received: jsonBody(JSON.stringify({ rule: { '==': [{ var: 'plan' }, 'team'] } })),
  });
  t.match(fragmentView(editor), { name: 'pro', rule: { '==': [{ var: 'plan' }, 'team'] } }, 'an Editor may change one');
});

t.test('flags import: $evaluators become fragments (an evaluator using another written out); the file wins a clash', async (t) => {
  const world = buildWorld(tempDataDir());
  t.teardown(() => world.store.close());
  const { ids } = world;
  const file = (evaluators: Record<string, unknown>, targeting: unknown) => ({
    flags: { imported: { state: 'ENABLED', variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting } },
    $evaluators: evaluators,
  });
  const first = world.run('flagsImport', {
    principal: kOperator,
    projectId: ids.single,
    env: null,
    document: file({ pro: kPro, proOrStaff: { or: [{ $ref: 'pro' }, { var: 'staff' }] } }, { if: [{ $ref: 'proOrStaff' }, 'a', 'b'] }),
  });
  t.same(first.fragments, [
    { name: 'pro', outcome: 'created' },
    { name: 'proOrStaff', outcome: 'created' },
  ]);
  world.store.resetReadTxn();
  t.same(
    listFragments(world.store, ids.single).map((f) => [f.name, fragmentRule(f)]),
    [
      ['pro', kPro],
      ['proOrStaff', { or: [kPro, { var: 'staff' }] }],
    ],
    'written out',
  );
  const imported = getFlag(world.store, first.flags[0]!.id)!;
  t.same(imported.kind === 'flag' ? imported.state.typed?.targeting : null, { if: [{ $ref: 'proOrStaff' }, 'a', 'b'] }, 'the $ref kept');

  const kTeam = { '==': [{ var: 'plan' }, 'team'] };
  const second = world.run('flagsImport', { principal: kOperator, projectId: ids.single, env: null, document: file({ pro: kTeam }, {}) });
  t.same(second.fragments, [{ name: 'pro', outcome: 'updated' }], 'the file wins a clash');
  world.store.resetReadTxn();
  t.match(world.store.listAudit(ids.single, { limit: 2, before: null }), [{ action: 'flag.patch' }, { action: 'fragment.update' }]);

  // "proOrStaff" (kept, unused by the file) does not use "pro" any more; make a flag that does, then
  // import a "pro" that would break it: the whole file is refused.
  world.run('flagCreate', {
    principal: kOperator,
    projectId: ids.single,
    body: { name: 'heavy', variants: { a: 'A', b: 'B' }, targeting: kHeavy },
  });
  const refused = refusedCommand(t, world, 'INVALID_REQUEST', () =>
    world.run('flagsImport', { principal: kOperator, projectId: ids.single, env: null, document: file({ pro: kBig }, {}) }),
  );
  t.match(
    refused,
    /^The file was not imported, nothing changed: \$evaluators\.pro: used by flag "heavy": with this rule the project's references/,
  );
});

// A fragment's new rule checked off the writer thread (issue 96, item 8): the rule's own problems found
// from the body's bytes by the check thread (src/fragments/rule-checker.ts) are those the writer finds;
// the writer takes them as given, so that its transaction does no work that grows with the rule's own
// check, and still checks in its transaction everything that depends on the store (every flag that uses
// the fragment, the project's bound).
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { fragmentRuleProblems } from '../../src/fragments/fragment-commands.js';
import { checkFragmentRule, fragmentBodyRuleProblems } from '../../src/fragments/rule-checker.js';
import { listFragments } from '../../src/flag-records/fragment-records.js';
import { jsonBody } from '../../src/model/request-body.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const kPro = { '==': [{ var: 'plan' }, 'pro'] };
const kBad = { if: [{ nope: [1] }, true, false] };
/** A rule that uses fragment "pro" 20 times: with a 60 KiB "pro", 1.2 MiB resolved, past the project's limit. */
const kHeavy = { if: [...Array.from({ length: 20 }, (): unknown => ({ $ref: 'pro' })), 'a', 'b'] };
const kBig = { in: [{ var: 'plan' }, Array.from({ length: 6000 }, (_, i) => `plan-${String(i).padStart(4, '0')}`)] };
const kTyped = { variants: { a: 'A', b: 'B' }, defaultVariant: 'b' };

t.test('the check thread finds the problems the writer would, from the bytes received', async (t) => {
  const body = (rule: unknown) => jsonBody(JSON.stringify({ rule }));
  t.same(await checkFragmentRule(body(kPro)), []);
  t.same(await checkFragmentRule(body(kBad)), fragmentRuleProblems(kBad));
  t.match(await checkFragmentRule(body(kBad)), [/unknown operator "nope"/]);
  t.same(await checkFragmentRule(body({ $ref: 'x' })), fragmentRuleProblems({ $ref: 'x' }));
  t.equal(await checkFragmentRule(jsonBody('{"rule": ')), null, 'a body the writer refuses before reading its rule: left to it');
  t.equal(fragmentBodyRuleProblems(jsonBody('{"other": 1}')), null, 'no rule: left to the writer');
});

t.test('the writer takes the rule problems given, and still checks what depends on the store', async (t) => {
  const world = buildWorld(tempDataDir());
  t.teardown(() => world.store.close());
  const { ids } = world;
  world.run('fragmentCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ name: 'pro', rule: kPro })),
  });
  const update = (rule: unknown, ruleProblems?: string[]) =>
    world.run('fragmentUpdate', {
      principal: kOperator,
      projectId: ids.single,
      name: 'pro',
      received: jsonBody(JSON.stringify({ rule })),
      ruleProblems,
    });

  // Problems given are the writer's answer, and nothing is written.
  const given = refusedCommand(t, world, 'INVALID_REQUEST', () =>
    update({ '==': [{ var: 'plan' }, 'team'] }, ['rule: found off the writer thread']),
  );
  t.match(given, /rule: found off the writer thread/);
  // None given: the writer checks the rule itself, as before.
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => update(kBad)),
    /unknown operator "nope"/,
  );

  // A flag uses the fragment 20 times: a rule without problems of its own that would take the project's
  // references past their limit (a state of the store) is still refused in the transaction.
  world.run('flagCreate', { principal: kOperator, projectId: ids.single, body: { name: 'uses-pro', ...kTyped, targeting: kHeavy } });
  t.same(fragmentRuleProblems(kBig), [], 'no problem of its own');
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => update(kBig, [])),
    /^used by flag "uses-pro": /,
  );
  t.same(listFragments(world.store, ids.single)[0]!.rule, kPro, 'the fragment as it was');

  update({ '==': [{ var: 'plan' }, 'team'] }, []);
  t.same(listFragments(world.store, ids.single)[0]!.rule, { '==': [{ var: 'plan' }, 'team'] }, 'applied');
});

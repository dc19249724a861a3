// ifBranch (the playground's "which condition held") on a rule whose top is an `if` of two operands,
// `{"if": [condition, then]}` (issue 47's leftover: it named no branch): the one condition is named held
// or not, as the engine's own answer for the same context says; one operand has no branches to name.
import t from 'tap';
import { compileFlag } from '../../src/targeting/compiled-flag.js';
import { evaluateFlag } from '../../src/targeting/evaluate.js';
import { ifBranch } from '../../src/targeting/if-branch.js';

const engineVariant = (targeting: Record<string, unknown>, context: Record<string, unknown>) =>
  evaluateFlag(
    compileFlag('k', { state: 'ENABLED', variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting, metadata: {} }, {}),
    context,
    0,
  ).variant;

t.test('a two-operand `if`: its one condition, held or not, as the engine answers', async (t) => {
  const rule = { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'a'] };
  t.same(ifBranch(rule, 'k', { plan: 'pro' }, 0), { held: 1, conditions: 1 });
  t.equal(engineVariant(rule, { plan: 'pro' }), 'a', 'the engine took that branch');
  t.same(ifBranch(rule, 'k', { plan: 'free' }, 0), { held: null, conditions: 1 }, 'none held: its else is null');
  t.equal(engineVariant(rule, { plan: 'free' }), 'b', "the engine's default variant");
});

t.test('one operand has no branches; three or more as before', async (t) => {
  t.equal(ifBranch({ if: ['a'] }, 'k', {}, 0), null);
  const rule = { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'a', { '==': [{ var: 'plan' }, 'team'] }, 'b', null] };
  t.same(ifBranch(rule, 'k', { plan: 'team' }, 0), { held: 2, conditions: 2 });
});

// The rollout form's conversion to the API's body (src/web-console/browser/rollout-steps.ts): each row a
// step (a percentage, or the weights typed, blank weights naming no bucket), each hold but the last's in
// ms from its amount and unit, the guard's fields as the API's guard; what is not a number is sent as
// typed and a blank left out, so the server's rules and texts judge it.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { type GuardFields, rolloutRequest, type StepRow } from '../../../src/web-console/browser/rollout-steps.js';

const noGuard: GuardFields = { source: 'none', expression: '', min: '', max: '', interval: { amount: '', unit: 's' }, onBreach: 'pause' };
const row = (percentage: string, amount = '', unit: StepRow['hold']['unit'] = 'h', weights: Record<string, string> = {}): StepRow => ({
  percentage,
  weights,
  hold: { amount, unit },
});

t.test('percentage steps: numbers as numbers, holds in ms, the last held for good', async (t) => {
  t.same(rolloutRequest([row('10', '1', 'h'), row(' 50 ', '90', 'm'), row('75', '45', 's'), row('100', '3', 'd')], null, noGuard), {
    steps: [
      { trafficPercentage: 10, holdMs: 3_600_000 },
      { trafficPercentage: 50, holdMs: 5_400_000 },
      { trafficPercentage: 75, holdMs: 45_000 },
      { trafficPercentage: 100 },
    ],
  });
  t.same(rolloutRequest([row('1.5', '0.5', 'd'), row('100')], null, noGuard).steps[0], { trafficPercentage: 1.5, holdMs: 43_200_000 });
});

t.test('what is not a number is sent as typed; a blank hold is left out, for the server to name', async (t) => {
  t.same(rolloutRequest([row('fifty', 'soon'), row(''), row('100')], null, noGuard), {
    steps: [{ trafficPercentage: 'fifty', holdMs: 'soon' }, { trafficPercentage: '' }, { trafficPercentage: 100 }],
  });
});

t.test("weights steps: the variants' weights in the variants' order, a blank weight naming no bucket", async (t) => {
  const steps = [row('', '1', 'h', { off: '90', on: '10' }), row('', '', 'h', { on: '100', off: '', gone: '5' })];
  t.same(rolloutRequest(steps, ['on', 'off'], noGuard), {
    steps: [{ variantWeights: { on: 10, off: 90 }, holdMs: 3_600_000 }, { variantWeights: { on: 100 } }],
  });
});

t.test('the guard: its source, the bounds given, the interval in ms, what a breach does', async (t) => {
  const guard: GuardFields = {
    source: 'flagwire',
    expression: ' flagwire_http_requests_total{status="500"} ',
    min: '',
    max: '5',
    interval: { amount: '10', unit: 's' },
    onBreach: 'rollback',
  };
  t.same(rolloutRequest([row('100')], null, guard).guard, {
    flagwire: 'flagwire_http_requests_total{status="500"}',
    max: 5,
    intervalMs: 10_000,
    onBreach: 'rollback',
  });
  const promql: GuardFields = {
    ...guard,
    source: 'prometheus',
    expression: 'max(x)',
    min: '0.1',
    max: 'lots',
    interval: { amount: '', unit: 'm' },
  };
  t.same(rolloutRequest([row('100')], null, promql).guard, { prometheus: 'max(x)', min: 0.1, max: 'lots', onBreach: 'rollback' });
  t.notOk('guard' in rolloutRequest([row('100')], null, noGuard), 'no guard: none sent');
});

// An experiment's plan is bounded to what its statistics can compute (issue 96, item 9): an alpha the
// quantile cannot take (1e-300, 5e-324), or a weight that rounds to no share, is refused naming the
// field and nothing is written; every plan at the bounds computes its results, whatever the data, to a
// body its schema accepts; a record kept before the bounds is refused with why, not a RangeError.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { FlagwireError } from '../../src/errors.js';
import type { Experiment } from '../../src/experiments/records.js';
import { experimentResultsView } from '../../src/experiments/results-view.js';
import { ExperimentResultsBody, kMaxAlpha, kMinAlpha } from '../../src/experiments/schemas.js';
import { jsonBody } from '../../src/model/request-body.js';
import { compileValidator } from '../../src/model/validation.js';
import { experimentPlan, experimentRecord } from '../helpers/experiment-plan.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { evenArms, Random, statisticsOf } from './simulate.js';

const world = buildWorld(tempDataDir());
const { ids } = world;
const plan = experimentPlan(ids.flag, 10_000);
const single = { principal: kOperator, projectId: ids.single, env: null };
const create = (body: object) => world.run('experimentCreate', { ...single, received: jsonBody(JSON.stringify(body)) });

t.test('a plan the statistics cannot compute is refused naming the field, and nothing is written', async (t) => {
  for (const alpha of [1e-300, 5e-324, 1e-16, kMinAlpha / 2, kMaxAlpha + 0.01, 0.99])
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () => create({ ...plan, alpha })),
      /alpha must be a number from 0\.001 to 0\.5/,
      `alpha ${alpha}`,
    );
  for (const weight of [5e-324, 1e-300, 1e-7])
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () => create({ ...plan, variants: [{ variant: 'off', weight }, plan.variants[1]] })),
      /weight must be a positive number from 0\.000001 to 1000000/,
      `weight ${weight}`,
    );
  const made = create({ ...plan, key: 'bounded', alpha: kMinAlpha });
  t.match(made, { alpha: kMinAlpha }, 'the bound itself is accepted');
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () =>
      world.run('experimentUpdate', { ...single, key: 'bounded', received: jsonBody(JSON.stringify({ alpha: 1e-300 })) }),
    ),
    /alpha must be a number from 0\.001 to 0\.5/,
    'a change to it too',
  );
});

const kResultsValidator = compileValidator(ExperimentResultsBody, { quoteKeys: false });

/** Statistics of two arms: none, one subject each, a lopsided split, many subjects, every subject converting. */
function dataShapes() {
  const shapes = [];
  for (const [off, on, rate, value] of [
    [0, 0, 0, 0],
    [1, 1, 1, 1],
    [3, 5_000, 0.5, 7],
    [20_000, 20_000, 0.1, 1e3],
    [500, 500, 1, 3],
  ] as const) {
    const random = new Random(off + on);
    const arms = evenArms(['purchase', 'revenue']);
    for (const [variant, arm] of arms) {
      arm.subjects = variant === 'off' ? off : on;
      for (let s = 0; s < arm.subjects; s++)
        if (random.uniform() < rate) {
          arm.metrics.get('purchase')!.add(1, 1);
          arm.metrics.get('revenue')!.add(Math.round(value * 100), 1, Math.round(value * 50), 1);
        }
    }
    shapes.push(statisticsOf(arms, 100n));
  }
  return shapes;
}

t.test('every plan at the bounds computes its results, whatever the data, to a body its schema accepts', async (t) => {
  const shapes = dataShapes();
  for (const alpha of [kMinAlpha, kMaxAlpha])
    for (const plannedSubjects of [1, 1e12])
      for (const weights of [
        [1e-6, 1e6],
        [1e6, 1e-6],
        [1, 1],
      ]) {
        const experiment: Experiment = {
          ...experimentRecord({ ...plan, plannedSubjects }),
          alpha,
          variants: [
            { variant: 'off', weight: weights[0]! },
            { variant: 'on', weight: weights[1]! },
          ],
        };
        for (const [i, statistics] of shapes.entries()) {
          const body = experimentResultsView(experiment, statistics, false);
          t.same(kResultsValidator.problems(body), [], `alpha ${alpha}, ${plannedSubjects} planned, weights ${weights}, data ${i}`);
        }
      }
});

t.test('a record kept before the bounds is refused with why, not a RangeError', async (t) => {
  const experiment = { ...experimentRecord(plan), alpha: 1e-300 };
  const statistics = dataShapes()[3]!;
  let refused: unknown;
  try {
    experimentResultsView(experiment, statistics, false);
  } catch (err) {
    refused = err;
  }
  t.ok(refused instanceof FlagwireError, `a FlagwireError, not ${String(refused)}`);
  t.match(refused, {
    code: 'INVALID_REQUEST',
    detail:
      /Experiment "checkout-2026" has a plan its results cannot be computed against \(alpha must be a number from 0\.001 to 0\.5.*stop it and change its plan/,
  });
});

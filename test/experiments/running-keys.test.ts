// A running experiment's key stays on its own flag and only there (issue 96, item 9; running-keys.ts):
// put on a second flag (whose exposures would count in its results), changed or dropped on its own flag
// (which would leave it running while it counts nothing), by a flag patch, a flag made with it, or a
// start while another flag carries it, is refused naming the experiment and how to stop it, and nothing
// is written; stopped, every one of those passes.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { jsonBody } from '../../src/model/request-body.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const world = buildWorld(tempDataDir());
const { ids } = world;
const key = 'checkout-2026';
const single = { principal: kOperator, projectId: ids.single, env: null };
const patch = (flagId: string, p: object) => world.run('flagPatch', { flagId, env: null, principal: kOperator, patch: p });
const flagKey = (flagId: string) => {
  world.store.resetReadTxn();
  return effectiveState(getFlag(world.store, flagId)!, null).experiment;
};

world.run('experimentCreate', { ...single, received: jsonBody(JSON.stringify(experimentPlan(ids.flag, 1000))) });
world.run('experimentStart', { ...single, key });

t.test("while it runs, its key is not put on a second flag: that flag's exposures would count in its results", async (t) => {
  const onSecond = /Experiment "checkout-2026" runs on flag checkout, so flag banner cannot carry its key too.*Nothing was changed/;
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => patch(ids.flag2, { experiment: key })),
    onSecond,
    'a patch',
  );
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () =>
      world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: { name: 'other', experiment: key } }),
    ),
    /so flag other cannot carry its key too/,
    'a flag made with it',
  );
  t.equal(flagKey(ids.flag2), undefined);
});

t.test('while it runs, its own flag keeps its key: changed or dropped is refused, telling to stop it first', async (t) => {
  const kept =
    /Flag checkout runs experiment "checkout-2026": its experiment key cannot be changed or dropped while the experiment runs.*Stop the experiment first \(POST \/api\/v1\/experiments\/checkout-2026\/stop/;
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => patch(ids.flag, { experiment: null })),
    kept,
    'dropped',
  );
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => patch(ids.flag, { experiment: 'another-key' })),
    kept,
    'switched',
  );
  t.equal(flagKey(ids.flag), key);
  t.equal(world.run('experimentStop', { ...single, key }).status, 'stopped');
  t.equal(patch(ids.flag, { experiment: 'another-key' }).changed, true, 'stopped, its flag is free');
  t.equal(patch(ids.flag2, { experiment: key }).changed, true, 'and so is its key');
});

t.test('a start is refused while another flag carries its key there', async (t) => {
  patch(ids.flag, { experiment: null });
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('experimentStart', { ...single, key })),
    /Experiment "checkout-2026" runs on flag checkout, so flag banner cannot carry its key too/,
  );
  patch(ids.flag2, { experiment: null });
  t.match(world.run('experimentStart', { ...single, key }), { status: 'running' });
  t.equal(flagKey(ids.flag), key);
});

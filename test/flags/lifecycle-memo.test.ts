// A project's lifecycle facts kept between reads (src/flags/lifecycle-facts.ts): a flag's lifecycle read
// again reads none of the project's scans anew while nothing moved, and reads them anew once a scan is
// pushed; a change to what a flag set serves (a flag patched into it) and a read of the set recorded
// (recordFlagSetReads) show at the next read. In process, through the writer's own commands.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { flagLifecycle } from '../../src/flags/lifecycle-facts.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { getProject } from '../../src/model/records/project-records.js';
import { jsonBody } from '../../src/model/request-body.js';
import type { KeyedKind, StoreReader } from '../../src/store/interfaces.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { literalReference } from '../helpers/code-ref-push.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());
const kDayMs = 24 * 3600 * 1000;

// One reader for every read, as a front end has: it counts the reads of the project's code scans.
let scanReads = 0;
const reader = new Proxy(world.store, {
  get(target, prop) {
    const value = Reflect.get(target, prop) as unknown;
    if (prop === 'listKeyedBy')
      return (kind: KeyedKind<unknown>, ...rest: unknown[]) => {
        if (kind.name === 'codeRefs') scanReads++;
        return (value as (...a: unknown[]) => unknown).call(target, kind, ...rest);
      };
    return typeof value === 'function' ? value.bind(target) : value;
  },
}) as StoreReader;

const t0 = Date.now();
// Reads recorded since long before the flag: a set read before then would be read unseen.
world.run('recordFlagSetReads', { reads: [] }, t0 - 100 * kDayMs);
const created = world.run('flagCreate', {
  projectId: world.ids.single,
  principal: kOperator,
  // On for half, bucketed by Flagwire's hash: flagd's language cannot say it, so no flag set serves it.
  body: { name: 'half', enabled: true, trafficPercentage: 50 },
});
const read = (now = t0 + kDayMs) => {
  world.store.resetReadTxn();
  return flagLifecycle(reader, getFlag(world.store, created.id)!, getProject(world.store, world.ids.single)!, now);
};
const push = (keys: string[]) =>
  world.run('codeRefsPush', {
    principal: kOperator,
    projectId: world.ids.single,
    received: jsonBody(
      JSON.stringify({
        repository: 'acme/app',
        branch: 'main',
        commit: `c${keys.length}`,
        references: keys.map((key, i) => literalReference(key, i + 1)),
      }),
    ),
  });

t.test('read again with nothing changed: the project is not read anew', async (t) => {
  const first = read();
  t.equal(first.usageKnown, true, 'no flag set serves it');
  const after = scanReads;
  t.same(read(), first);
  t.same(read(), first);
  t.equal(scanReads, after, "the scans were read once, for the first read's facts");
});

t.test('a scan pushed: read anew', async (t) => {
  t.equal(read().codeReferences, null, 'never scanned');
  push(['half', 'half']);
  t.equal(read().codeReferences, 2, 'the new scan counted');
  push(['other']);
  t.equal(read().codeReferences, 0, "the branch's next scan replaced it");
});

t.test('its flag set changes, and a read of it is recorded: both seen at the next read', async (t) => {
  world.run('recordFlagSetReads', { reads: [{ projectId: world.ids.single, environment: null, at: t0 }] });
  t.equal(read().usageKnown, true, 'its set was read, but it does not serve the flag');
  world.run('flagPatch', { flagId: created.id, env: null, principal: kOperator, patch: { trafficPercentage: 100 } });
  t.equal(read().usageKnown, false, 'on for everyone: the set serves it now, and a stock flagd provider read it');
  const later = read(t0 + 39 * kDayMs);
  t.equal(later.usageKnown, true, 'no read of its set in the 30 days before');
  t.equal(later.stage, 'unused', 'so its missing evaluations say it is unused');
});

// The shape issue 55 found from outside, against a real server: a write token's project has a small
// shared fragment named by 20 flags, then PATCHes it to 0.96 MB. The PATCH is refused with the spec's 400
// in PATCH's words (the project's references would add more than 1 MiB to its flags' rules), nothing
// changes, and every other request answers, none with a 5xx: another organisation's flag PATCHed and
// evaluated, the project's snapshot and flag set read with a read token, and OFREP's bulk evaluation
// asked anonymously, each answering as the small fragment says. (Before, the PATCH was accepted,
// compiled into each of the 20 flags in each worker, and another project's writes waited seconds for it
// or answered 503: bench/fragment-scale.bench.ts measures that.)
import t from 'tap';
import { kFragmentRecords } from '../../src/flags/records/fragment-records.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const base = server.baseUrl;

/** About 0.96 MB as compact JSON. */
const kBig = { in: [{ var: 'plan' }, Array.from({ length: 87_000 }, (_, i) => `p-${String(i).padStart(6, '0')}`)] };
const kSmall = { in: [{ var: 'plan' }, ['pro']] };
const state = () => world.snapshot() + JSON.stringify(world.store.listKeyed(kFragmentRecords));

t.test('a 0.96 MB fragment for 20 flags: refused in PATCH words, nothing changed, and no request answers 5xx', async (t) => {
  t.ok(JSON.stringify(kBig).length > 950_000 && JSON.stringify(kBig).length < 1_000_000, 'the fragment is about 0.96 MB');
  const made = await call(base, 'POST', '/api/v1/fragments', { token: secrets.write, body: { name: 'big', rule: kSmall } });
  t.equal(made.status, 201, made.text);
  const typed = { variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting: { if: [{ $ref: 'big' }, 'a', 'b'] } };
  for (let i = 0; i < 20; i++) {
    const flag = await call(base, 'POST', '/api/v1/flags', {
      token: secrets.write,
      body: { name: `uses-${i}`, enabled: true, trafficPercentage: 100, ...typed },
    });
    t.equal(flag.status, 201, `flag ${i} made`);
  }

  world.store.resetReadTxn();
  const before = state();
  const update = await call(base, 'PATCH', '/api/v1/fragments/big', { token: secrets.write, body: { rule: kBig } });
  t.equal(update.status, 400, update.text.slice(0, 300));
  t.equal(update.json.error, 'Invalid request');
  t.match(
    update.json.detail,
    /^used by flag "uses-0", flag "uses-1", .*flag "uses-19": with this rule the project's references would add \d+ bytes \(\d+\.\d MiB\) to its flags' rules in all \(each use of a shared fragment counts its size\); they may add at most 1048576 bytes \(1 MiB\)$/,
  );
  world.store.resetReadTxn();
  t.equal(state(), before, 'nothing changed');

  // Every other request answers, none with a 5xx, each as the small fragment says.
  const patched = await call(base, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { trafficPercentage: 30 } });
  t.equal(patched.status, 200, patched.text);
  const evaluated = await call(base, 'GET', `/v1/flags/${ids.flagB}?targetingKey=u1`);
  t.equal(evaluated.status, 200, evaluated.text);
  const snapshot = await call(base, 'GET', `/v1/snapshots/${ids.single}`, { token: secrets.read });
  t.equal(snapshot.status, 200, snapshot.text.slice(0, 300));
  const uses = (snapshot.json.flags as { name: string; state: { typed?: { targeting: unknown } } }[]).filter((f) =>
    f.name.startsWith('uses-'),
  );
  t.equal(uses.length, 20);
  t.ok(
    uses.every((f) => JSON.stringify(f.state.typed?.targeting) === JSON.stringify({ if: [kSmall, 'a', 'b'] })),
    'the snapshot carries the fragment as it is',
  );
  const set = await call(base, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read });
  t.equal(set.status, 200, set.text.slice(0, 300));
  t.equal(Object.keys(set.json.flags as object).filter((name) => name.startsWith('uses-')).length, 20);
  const bulk = await call(base, 'POST', '/ofrep/v1/evaluate/flags', {
    body: { context: { targetingKey: 'u1', plan: 'pro' } },
    headers: { 'X-Flagwire-Project': ids.single },
  });
  t.equal(bulk.status, 200, bulk.text.slice(0, 300));
  const answers = (bulk.json.flags as { key: string; variant?: string }[]).filter((f) => f.key.startsWith('uses-'));
  t.same(
    answers.map((f) => f.variant),
    Array(20).fill('a'),
  );
});

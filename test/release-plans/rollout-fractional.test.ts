// A progressive rollout of a fractional flag (issue 44) over the Management API, against a real server
// stepped by its scheduler: each step's percentage lets in exactly the keys whose fractional bucket is
// below it, so every step only adds keys, as for a modulo flag (design §2); a scheduled change may not
// change its bucketing.
import t from 'tap';
import { fractionalBucket } from '../../src/evaluation/engine/bucket.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const base = server.baseUrl;
const kHourS = 3600;
const kKeys = Array.from({ length: 200 }, (_, i) => `user-${i}`);

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test("each step of a fractional flag's rollout only adds keys, by their fractional bucket", async (t) => {
  const made = await call(base, 'POST', '/api/v1/flags', {
    token: world.secrets.write,
    body: { name: 'frac-rollout', bucketing: 'fractional', enabled: true, trafficPercentage: 0 },
  });
  t.equal(made.status, 201, made.text);
  const id = made.json.id as string;
  const served = async () => (await call(base, 'GET', `/api/v1/flags/${id}`, { token: world.secrets.read })).json.trafficPercentage;
  const inKeys = async () => {
    const on = new Set<string>();
    for (const key of kKeys) if ((await call(base, 'GET', `/v1/flags/${id}?targetingKey=${key}`)).json.enabled) on.add(key);
    return on;
  };
  const percentages = [10, 30, 60, 100];
  const steps = percentages.map((p, i) =>
    i < percentages.length - 1 ? { trafficPercentage: p, holdMs: kHourS * 1000 } : { trafficPercentage: p },
  );
  const started = await call(base, 'POST', `/api/v1/flags/${id}/rollouts`, { token: world.secrets.write, body: { steps } });
  t.equal(started.status, 201, started.text);
  let before = new Set<string>();
  for (const [i, p] of percentages.entries()) {
    if (i > 0) {
      t.equal((await call(base, 'POST', `/__test/clock?advance=${kHourS}`)).status, 200);
      await until(`step ${p}%`, async () => (await served()) === p);
    }
    const on = await inKeys();
    t.same([...on].sort(), kKeys.filter((k) => fractionalBucket(id, k) < p).sort(), `${p}%: the keys whose fractional bucket is below it`);
    t.same(
      [...before].filter((k) => !on.has(k)),
      [],
      `${p}%: no key that was in is out`,
    );
    t.ok(on.size > before.size, `${p}%: keys added (${before.size} -> ${on.size})`);
    before = on;
  }
  t.equal(before.size, kKeys.length, '100%: everyone');

  // A scheduled change is a PATCH, checked as one when it is made: it cannot change the bucketing either.
  const snapshot = world.snapshot();
  // The server's clock went 3 hours ahead: a day ahead of this one is in its future.
  const at = Date.now() + 24 * kHourS * 1000;
  const scheduled = await call(base, 'POST', `/api/v1/flags/${id}/schedules`, {
    token: world.secrets.write,
    body: { at, patch: { bucketing: 'modulo' } },
  });
  t.equal(scheduled.status, 400, scheduled.text);
  t.match(scheduled.json.detail, /the flag's bucketing is "fractional" and cannot become "modulo"/);
  t.equal(world.snapshot(), snapshot, 'nothing changed');
});

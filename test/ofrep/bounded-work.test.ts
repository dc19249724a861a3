// Black-box: evaluation work per request is bounded (issue 42, items 2 and 7). The probe's shapes against
// the real server: a flag whose rule `merge`s or `cat`s context values many times over, asked anonymously
// over OFREP with a large context, six at once, in waves. A 200 KB context is refused before any rule
// runs (400 INVALID_CONTEXT); one under the context limits makes the rule overrun its work budget, which
// answers the caller's default the OpenFeature way (400 GENERAL naming the limit). Meanwhile another
// project's plain flag, asked over the Evaluation API and OFREP, is answered 200 every time (never the
// 500 a timed-out batch gave), and the server's memory stays bounded. On the Evaluation API (context: the
// query string) a rule past the limit answers without variant and value. Bounds here only catch hangs
// and leaks: how fast is measured in bench/.
import t from 'tap';
import { call, type Reply } from '../helpers/http.js';
import { kNoEvalBodyBudget, startWorldServer } from '../helpers/world-server.js';
import { rssMiB } from '../reliability/support.js';
import { overBudgetMessage } from '../../src/targeting/compiled-flag.js';

/** A hang, not a slow machine: the suite runs at load 10 on 2 cores. */
const kHangMs = 60_000;
/** Server memory allowed over what it was before (the probe's six requests took it to 2.6 GiB). */
const kMaxGrowthMiB = 300;
const kWaves = 10;
const kAtOnce = 6;

t.setTimeout(10 * kHangMs);

// Waves of large contexts from one address: its evaluation body bytes per second (eval-body-rate.test.ts's) lifted.
const { server, world } = await startWorldServer(t, { FLAGWIRE_EVAL_WORKERS: '2', ...kNoEvalBodyBudget });
const { ids, secrets } = world;
const pid = server.proc.pid!;

const references = (name: string) => Array.from({ length: 400 }, () => ({ var: name }));
const shapes = {
  merge: { if: [{ in: ['zz', { merge: references('l') }] }, 'a', 'b'] },
  cat: { if: [{ in: ['zz', { cat: references('s') }] }, 'a', 'b'] },
};
const keys: Record<string, string> = {};
for (const [name, targeting] of Object.entries(shapes)) {
  const r = await call(server.baseUrl, 'POST', '/api/v1/flags', {
    token: secrets.write,
    body: { name: `probe-${name}`, enabled: true, trafficPercentage: 100, variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting },
  });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  keys[name] = r.json.id;
}

const list = (n: number) => Array.from({ length: n }, (_, i) => `value-${i}`);
/** The probe's: 200 KB. */
const kLarge = { targetingKey: 'u1', l: list(12_000), s: 'x'.repeat(60_000) };
/** Within OFREP's context limits (docs/operations.md: Evaluation work): about 60 KB. */
const kFitting = { targetingKey: 'u1', l: list(4_000), s: 'x'.repeat(10_000) };

const ofrep = (key: string, context: object) => call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${key}`, { body: { context } });

/** Resolves to the reply, or rejects after kHangMs. */
async function within(what: string, request: Promise<Reply>): Promise<Reply> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${kHangMs} ms`)), kHangMs)),
  );
  try {
    return await Promise.race([request, hang]);
  } finally {
    clearTimeout(timer);
  }
}

t.test('the contexts are the sizes they stand for', async (t) => {
  t.ok(JSON.stringify({ context: kLarge }).length > 200_000, 'the large one is over 200 KB');
  t.ok(JSON.stringify({ context: kFitting }).length < 65_536, 'the fitting one is under 64 KiB, its characters too');
});

t.test('one request of each shape: the caller default with an error code', async (t) => {
  for (const [name, key] of Object.entries(keys)) {
    const large = await within(name, ofrep(key, kLarge));
    t.equal(large.status, 400, `${name}, 200 KB context: 400`);
    t.equal(large.json.errorCode, 'INVALID_CONTEXT', `${name}, 200 KB context: INVALID_CONTEXT`);
    t.match(large.json.errorDetails, /more than 65536 characters/, 'the details name the limit');
    const fitting = await within(name, ofrep(key, kFitting));
    t.same(
      [fitting.status, fitting.json],
      [400, { key, errorCode: 'GENERAL', errorDetails: overBudgetMessage(`probe-${name}`) }],
      `${name}, fitting context: GENERAL naming the work limit, no value (the caller's default)`,
    );
  }
});

t.test('the Evaluation API: a rule past the work limit answers without variant and value', async (t) => {
  // Its context is the query string (uWS holds headers to 4 KiB): 3,000 characters, cat 400 times over.
  const r = await within('cat over /v1', call(server.baseUrl, 'GET', `/v1/flags/${keys.cat}?targetingKey=u1&s=${'x'.repeat(3_000)}`));
  t.equal(r.status, 200, '200, as for any rule that names no variant');
  t.same(r.json, { id: keys.cat, name: 'probe-cat', enabled: true }, 'the caller default applies: no variant, no value');
});

t.test('six at once, in waves: other projects plain flags answer 200, memory stays bounded', async (t) => {
  const rssBefore = rssMiB(pid);
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 25);
  // Another project's plain flag, asked over both APIs for as long as the waves last.
  const others = new Map<number, number>();
  let stop = false;
  const neighbour = (async () => {
    while (!stop) {
      const [v1, of] = await Promise.all([
        within('plain flag', call(server.baseUrl, 'GET', `/v1/flags/${ids.flagB}?targetingKey=u1`)),
        within('plain flag over OFREP', ofrep(ids.flagB, { targetingKey: 'u1' })),
      ]);
      for (const status of [v1.status, of.status]) others.set(status, (others.get(status) ?? 0) + 1);
    }
  })();
  const attacks = new Map<string, number>();
  try {
    for (let wave = 0; wave < kWaves; wave++) {
      const replies = await Promise.all(
        Array.from({ length: kAtOnce }, (_, i) => {
          const name = i % 2 === 0 ? 'merge' : 'cat';
          const context = wave % 2 === 0 ? kLarge : kFitting;
          return within(`${name} #${i}`, ofrep(keys[name]!, context)).then((r) => `${r.status} ${r.json.errorCode}`);
        }),
      );
      for (const r of replies) attacks.set(r, (attacks.get(r) ?? 0) + 1);
    }
  } finally {
    stop = true;
    await neighbour;
    clearInterval(sampler);
  }
  t.same(
    Object.fromEntries(attacks),
    { '400 INVALID_CONTEXT': (kWaves / 2) * kAtOnce, '400 GENERAL': (kWaves / 2) * kAtOnce },
    'every probe request answered with an error code',
  );
  t.same(
    [...others.keys()],
    [200],
    `the other project's plain flag answered 200 every time (${JSON.stringify(Object.fromEntries(others))})`,
  );
  t.ok(peak - rssBefore < kMaxGrowthMiB, `server RSS ${rssBefore.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB at the peak`);
});

// A shared fragment against another project (issue 55, item 1), on each build given, in one run: one
// write token's project ("attacker", Org A's) makes a small fragment, N flags that name it (N = 20, 60),
// then PATCHes the fragment to 0.96 MB, while a read token asks for its snapshot and its flag set in a
// loop and anonymous clients ask OFREP for all its flags in bulk (each loop paced at 20 a second). Another organisation's project
// ("victim") is meanwhile evaluated (GET /v1/flags/{id}, one at a time) and PATCHed (one every 100 ms):
// its p50/p99 in a quiet phase (the baseline) and in the attack's phase, the server's resident memory
// (peak and after), every 5xx answered to anyone, and what the fragment's PATCH answered and took.
// The phase is bounded (PHASE seconds): a request still running at its end is abandoned and counted.
// Run: npm run build && PHASE=30 node dist/bench/fragment-scale.bench.js BASE_CHECKOUT NEW_CHECKOUT (PHASE: seconds, default 30)
// (each checkout built: dist/ present; the same data is seeded for each, by this build's writer commands,
// which have no schema change against the base).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { kOperator } from '../src/actor/audit-actor.js';
import { jsonBody } from '../src/model/request-body.js';
import { call, type Reply } from '../test/helpers/http.js';
import { startTestServer, tempDataDir, type TestServer } from '../test/helpers/server.js';
import { buildWorld } from '../test/helpers/world.js';
import { machineInfo } from './environment.js';

const kBuilds = process.argv.slice(2, 4);
const kPhaseMs = Number(process.env.PHASE ?? 30) * 1000;
const kFlagCounts = [20, 60];

/** About 0.96 MB as compact JSON: a list of plan names. */
const kBigFragment = { in: [{ var: 'plan' }, Array.from({ length: 87_000 }, (_, i) => `p-${String(i).padStart(6, '0')}`)] };
const kSmallFragment = { in: [{ var: 'plan' }, ['pro']] };

function rssMib(server: TestServer): number {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Tally {
  evals: number[];
  patches: number[];
  fivexx: number;
  failed: number;
  peakRss: number;
}

/** A request timed; a 5xx or a failed request (abandoned at the phase's end, or refused) counted. */
async function timed(tally: Tally, into: number[] | null, request: () => Promise<Reply>): Promise<Reply | null> {
  const started = performance.now();
  try {
    const reply = await request();
    if (reply.status >= 500) tally.fivexx++;
    into?.push(performance.now() - started);
    return reply;
  } catch {
    tally.failed++;
    return null;
  }
}

async function runBuild(checkout: string, flags: number): Promise<Record<string, string | number>> {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  const { ids, secrets } = world;
  world.run('fragmentCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ name: 'big', rule: kSmallFragment })),
  });
  await world.store.close();
  const server = await startTestServer({
    dataDir,
    cli: join(checkout, 'dist/src/cli/cli.js'),
    env: { FLAGWIRE_EVAL_WORKERS: '2', FLAGWIRE_RATE_LIMIT: '1000000000' },
  });
  const base = server.baseUrl;
  try {
    const typed = { variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting: { if: [{ $ref: 'big' }, 'a', 'b'] } };
    for (let i = 0; i < flags; i++) {
      const made = await call(base, 'POST', '/api/v1/flags', {
        token: secrets.write,
        body: { name: `uses-${i}`, enabled: true, trafficPercentage: 100, ...typed },
      });
      if (made.status !== 201) throw new Error(`flag ${i}: ${made.status} ${made.text}`);
    }
    // The victim: another organisation's project, evaluated and PATCHed one request at a time.
    const victim = (tally: Tally, until: () => boolean) =>
      Promise.all([
        (async () => {
          for (let i = 0; !until(); i++)
            await timed(tally, tally.evals, () => call(base, 'GET', `/v1/flags/${ids.flagB}?targetingKey=u${i}`));
        })(),
        (async () => {
          for (let i = 0; !until(); i++) {
            await timed(tally, tally.patches, () =>
              call(base, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { trafficPercentage: i % 101 } }),
            );
            await sleep(100);
          }
        })(),
        (async () => {
          while (!until()) {
            tally.peakRss = Math.max(tally.peakRss, rssMib(server));
            await sleep(100);
          }
        })(),
      ]);
    const tally = (): Tally => ({ evals: [], patches: [], fivexx: 0, failed: 0, peakRss: 0 });

    // Warm-up, then the quiet phase: the baseline.
    await victim(
      tally(),
      (
        (end) => () =>
          Date.now() > end
      )(Date.now() + 2000),
    );
    const quiet = tally();
    const rssBefore = rssMib(server);
    await victim(
      quiet,
      (
        (end) => () =>
          Date.now() > end
      )(Date.now() + kPhaseMs / 2),
    );

    // The attack's phase.
    const loud = tally();
    const attack = tally();
    const end = Date.now() + kPhaseMs;
    const over = () => Date.now() > end;
    const abort = new AbortController();
    const phaseEnd = setTimeout(() => abort.abort(), kPhaseMs + 1000);
    let update = 'abandoned at the end of the phase';
    const attacker = Promise.all([
      (async () => {
        const started = performance.now();
        const reply = await timed(attack, null, () =>
          fetch(`${base}/api/v1/fragments/big`, {
            method: 'PATCH',
            headers: { authorization: `Bearer ${secrets.write}`, 'content-type': 'application/json' },
            body: JSON.stringify({ rule: kBigFragment }),
            signal: abort.signal,
          }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text(), json: undefined })),
        );
        if (reply !== null) update = `${reply.status} in ${((performance.now() - started) / 1000).toFixed(2)} s`;
      })(),
      ...[
        () => call(base, 'GET', `/v1/snapshots/${ids.single}`, { token: secrets.read }),
        () => call(base, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read }),
        () =>
          call(base, 'POST', '/ofrep/v1/evaluate/flags', {
            body: { context: { targetingKey: 'x', plan: 'p-000001' } },
            headers: { 'X-Flagwire-Project': ids.single },
          }),
        () =>
          call(base, 'POST', '/ofrep/v1/evaluate/flags', {
            body: { context: { targetingKey: 'y', plan: 'pro' } },
            headers: { 'X-Flagwire-Project': ids.single },
          }),
      ].map(async (ask) => {
        // Paced (each loop at most 20 a second): what one client of each kind asks, not a flood, so the
        // victim's p99 moves with what the fragment costs, not with the machine's CPU being taken.
        while (!over()) {
          await timed(attack, null, ask);
          await sleep(50);
        }
      }),
    ]);
    await victim(loud, over);
    await Promise.race([attacker, sleep(2000)]);
    clearTimeout(phaseEnd);
    abort.abort();
    await sleep(500);
    const ms = (v: number) => v.toFixed(1);
    return {
      build: checkout,
      flags,
      'fragment PATCH': update,
      'victim GET p50/p99 quiet (ms)': `${ms(percentile(quiet.evals, 50))} / ${ms(percentile(quiet.evals, 99))}`,
      'victim GET p50/p99 attack (ms)': `${ms(percentile(loud.evals, 50))} / ${ms(percentile(loud.evals, 99))}`,
      'victim PATCH p50/p99 quiet (ms)': `${ms(percentile(quiet.patches, 50))} / ${ms(percentile(quiet.patches, 99))}`,
      'victim PATCH p50/p99 attack (ms)': `${ms(percentile(loud.patches, 50))} / ${ms(percentile(loud.patches, 99))}`,
      'GET p99 ratio': (percentile(loud.evals, 99) / percentile(quiet.evals, 99)).toFixed(2),
      'PATCH p99 ratio': (percentile(loud.patches, 99) / percentile(quiet.patches, 99)).toFixed(2),
      'RSS quiet / peak attack (MiB)': `${rssBefore.toFixed(0)} / ${loud.peakRss.toFixed(0)}`,
      '5xx (victim, attacker)': `${quiet.fivexx + loud.fivexx}, ${attack.fivexx}`,
      'requests failed or abandoned (victim, attacker)': `${quiet.failed + loud.failed}, ${attack.failed}`,
      'victim GETs in the attack': loud.evals.length,
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  if (kBuilds.length === 0) throw new Error('usage: PHASE=30 node dist/bench/fragment-scale.bench.js BASE_CHECKOUT [NEW_CHECKOUT]');
  console.log(
    JSON.stringify({
      machine: machineInfo(),
      load: loadavg()
        .map((l) => l.toFixed(1))
        .join(' '),
      phaseSeconds: kPhaseMs / 1000,
    }),
  );
  for (const flags of kFlagCounts)
    for (const checkout of kBuilds) {
      const row = await runBuild(checkout, flags);
      console.log(JSON.stringify(row));
    }
}

await main();

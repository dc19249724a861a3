// One tenant rewriting a large fragment against another's writes (issue 96, item 8): project A (Org A's)
// PATCHes its shared fragment to one of two different 0.96 MB rules every 0.75 s (inside the rate
// limit), one request at a time, while project B (Org B's) is PATCHed one request every 100 ms and
// evaluated one request at a time. Prints B's PATCH and GET p50/p99 in a quiet phase (the baseline) and
// while A rewrites, measured in the same run, A's PATCH times, and every 5xx. A's client runs on a thread
// of its own, each of its two bodies encoded once: encoding a 0.96 MB body and reading the answer in the
// event loop that times B's requests held B's timings up by the bench's own work, as no two tenants share
// a client. A_CLIENT=same-thread runs it as before, in B's event loop, for a comparison.
// Run: npm run build && PHASE=30 node dist/bench/fragment-rewrite.bench.js [CHECKOUT] (default: this one)
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { kOperator } from '../src/actor/audit-actor.js';
import { jsonBody } from '../src/model/request-body.js';
import { call, type Reply } from '../test/helpers/http.js';
import { startTestServer, tempDataDir } from '../test/helpers/server.js';
import { buildWorld } from '../test/helpers/world.js';
import { runHeader } from './environment.js';

const kCheckout = process.argv[2] ?? process.cwd();
const kPhaseMs = Number(process.env.PHASE ?? 30) * 1000;
const kEveryMs = 750;

/** About 0.96 MB as compact JSON: a list of plan names, `k` making each rewrite differ from the last. */
const bigRule = (k: number) => ({
  in: [{ var: 'plan' }, Array.from({ length: 87_000 }, (_, i) => `p${k}-${String(i).padStart(5, '0')}`)],
});

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What A's client is given, and what it reports. */
interface AttackerStart {
  base: string;
  token: string;
  /** When it stops (Date.now()). */
  end: number;
  /** Its bodies encoded once, before the phase (its own thread), or each time (B's event loop, as before). */
  encodeOnce: boolean;
}
interface AttackerReport {
  patches: number[];
  fivexx: number;
  statuses: Record<number, number>;
}

/** A's client: its fragment PATCHed to one of two large rules every kEveryMs, one request at a time. */
async function attack({ base, token, end, encodeOnce }: AttackerStart): Promise<AttackerReport> {
  const tally: Tally = { evals: [], patches: [], fivexx: 0 };
  const statuses: Record<number, number> = {};
  const encoded = encodeOnce ? [0, 1].map((k) => new TextEncoder().encode(JSON.stringify({ rule: bigRule(k) }))) : [];
  for (let k = 0; Date.now() <= end; k++) {
    const started = Date.now();
    const reply = await timed(tally, tally.patches, () =>
      encodeOnce
        ? call(base, 'PATCH', '/api/v1/fragments/big', { token, raw: encoded[k % 2]! })
        : call(base, 'PATCH', '/api/v1/fragments/big', { token, body: { rule: bigRule(k % 2) } }),
    );
    statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
    await sleep(Math.max(0, kEveryMs - (Date.now() - started)));
  }
  return { patches: tally.patches, fivexx: tally.fivexx, statuses };
}

/** A's client on a thread of its own (this module, as a worker). */
function attackOnThread(start: AttackerStart): Promise<AttackerReport> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL(import.meta.url), { workerData: start });
    thread.once('message', resolve);
    thread.once('error', reject);
  });
}

interface Tally {
  evals: number[];
  patches: number[];
  fivexx: number;
}

async function timed(tally: Tally, into: number[], request: () => Promise<Reply>): Promise<Reply> {
  const started = performance.now();
  const reply = await request();
  if (reply.status >= 500) tally.fivexx++;
  into.push(performance.now() - started);
  return reply;
}

async function main(): Promise<void> {
  console.log(runHeader({ phaseSeconds: kPhaseMs / 1000 }));
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  const { ids, secrets } = world;
  world.run('fragmentCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ name: 'big', rule: { in: [{ var: 'plan' }, ['pro']] } })),
  });
  await world.store.close();
  const server = await startTestServer({
    dataDir,
    cli: join(kCheckout, 'dist/src/cli/cli.js'),
    env: { FLAGWIRE_EVAL_WORKERS: '2', FLAGWIRE_RATE_LIMIT: '1000000000' },
  });
  const base = server.baseUrl;
  try {
    const victim = (tally: Tally, over: () => boolean) =>
      Promise.all([
        (async () => {
          for (let i = 0; !over(); i++)
            await timed(tally, tally.evals, () => call(base, 'GET', `/v1/flags/${ids.flagB}?targetingKey=u${i}`));
        })(),
        (async () => {
          for (let i = 0; !over(); i++) {
            await timed(tally, tally.patches, () =>
              call(base, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { trafficPercentage: i % 101 } }),
            );
            await sleep(100);
          }
        })(),
      ]);
    const until = (ms: number) => {
      const end = Date.now() + ms;
      return () => Date.now() > end;
    };
    const tally = (): Tally => ({ evals: [], patches: [], fivexx: 0 });
    await victim(tally(), until(2000));
    const quiet = tally();
    await victim(quiet, until(kPhaseMs / 2));

    const loud = tally();
    const over = until(kPhaseMs);
    const sameThread = process.env.A_CLIENT === 'same-thread';
    const start: AttackerStart = { base, token: secrets.write, end: Date.now() + kPhaseMs, encodeOnce: !sameThread };
    const [, attacked] = await Promise.all([victim(loud, over), sameThread ? attack(start) : attackOnThread(start)]);
    const ms = (values: number[]) => `${percentile(values, 50).toFixed(1)} / ${percentile(values, 99).toFixed(1)}`;
    console.log(
      JSON.stringify({
        build: kCheckout,
        'B PATCH p50/p99 quiet (ms)': ms(quiet.patches),
        'B PATCH p50/p99 while A rewrites (ms)': ms(loud.patches),
        'B GET p50/p99 quiet (ms)': ms(quiet.evals),
        'B GET p50/p99 while A rewrites (ms)': ms(loud.evals),
        'A client': sameThread ? "B's event loop, each body encoded" : 'its own thread, each body encoded once',
        'A fragment PATCH p50/p99 (ms)': ms(attacked.patches),
        'A fragment PATCH answers': attacked.statuses,
        '5xx (B, A)': `${quiet.fivexx + loud.fivexx}, ${attacked.fivexx}`,
      }),
    );
  } finally {
    await server.stop();
  }
}

if (isMainThread) await main();
else parentPort!.postMessage(await attack(workerData as AttackerStart));

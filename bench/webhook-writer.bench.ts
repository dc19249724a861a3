// What a project's webhook outbox costs the writer, each build given side by side in one run: a flag whose
// served variant is 900 KB, twenty webhooks on its changes, then (1) N PATCHes of it, each queuing a
// delivery per webhook and the change's body once; (2) every pending delivery claimed, each webhook's at
// once (as a node's deliverer claims a batch); (3) the twenty webhooks deleted, each with its deliveries.
// Each step runs the writer's own commands (runCommand), each in one LMDB write transaction synced to
// disk as every write is, and is reported as CPU ms per command (the writer is one thread: its CPU is
// what every other write waits behind), the median of the rounds. Each build's round runs in a process
// of its own on a copy of the same seeded data dir (seeded by this build; no schema change between the
// builds measured), the builds in turn, alternating which goes first.
// Run: npm run build && node dist/bench/webhook-writer.bench.js [--changes N] [--rounds R] [--baseline DIR]
// (DIR: another checkout, built).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { kOperator } from '../src/actor/audit-actor.js';
import { jsonBody } from '../src/model/request-body.js';
import type { StoreWriter } from '../src/store/interfaces.js';
import { listDeliveries } from '../src/webhooks/records.js';
import { tempDataDir } from '../test/helpers/server.js';
import { buildWorld } from '../test/helpers/world.js';
import { machineInfo } from './environment.js';

const { values } = parseArgs({
  options: {
    changes: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    // A child's: the checkout whose build it measures, and the seed it copies.
    measure: { type: 'string' },
    seed: { type: 'string' },
  },
});
const kChanges = Number(values.changes);
const kRounds = Number(values.rounds);
const kHooks = 20;
const kSelf = fileURLToPath(import.meta.url);

type Step = 'PATCH' | 'claim (a webhook batch)' | 'webhook delete';
interface Seed {
  dir: string;
  flagId: string;
  hooks: string[];
}

/** This process's CPU ms over `fn`, divided by `count`. */
function cpuMsPer(count: number, fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / count;
}

/**
 * One build's round, in a process of its own (two builds' modules in one process share lmdb-js's and
 * msgpackr's state): the steps on a copy of the seed.
 */
async function measure(root: string, seed: Seed): Promise<Record<Step, number>> {
  const at = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href);
  const [{ LmdbStore }, { kStoreLayout }, { runCommand }] = await Promise.all([
    at('src/store/lmdb-store.js'),
    at('src/capabilities.js'),
    at('src/writer/thread/commands.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-webhook-bench-'));
  cpSync(seed.dir, dir, { recursive: true });
  const store = LmdbStore.open(dir, { layout: kStoreLayout });
  const now = Date.now();
  const run = (name: string, input: unknown, at = now) => store.transact((w: StoreWriter) => runCommand(w, name, input, at));
  const patch = cpuMsPer(kChanges, () => {
    for (let i = 0; i < kChanges; i++)
      run('flagPatch', { flagId: seed.flagId, env: null, principal: kOperator, patch: { trafficPercentage: i % 100 } }, now + i);
  });
  const batches = seed.hooks.map((id) => store.transact((w: StoreWriter) => listDeliveries(w, id, kChanges).map((d) => d.id)));
  const claim = cpuMsPer(batches.length, () => {
    for (const deliveryIds of batches) run('webhookClaimMany', { deliveryIds, nodeId: 'bench', claimMs: 60_000 }, now + kChanges);
  });
  const remove = cpuMsPer(seed.hooks.length, () => {
    for (const webhookId of seed.hooks) run('webhookDelete', { principal: kOperator, webhookId }, now + kChanges);
  });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { PATCH: patch, 'claim (a webhook batch)': claim, 'webhook delete': remove };
}

/** The test world, a 900 KB flag and twenty webhooks on flag changes, written by this build. */
async function seed(): Promise<Seed> {
  const dir = tempDataDir();
  const world = buildWorld(dir);
  const projectId = world.ids.single;
  const flagId = world.run('flagCreate', {
    projectId,
    principal: kOperator,
    body: { name: 'large', enabled: true, variants: { big: 'z'.repeat(900_000), small: 'y' }, defaultVariant: 'big' },
  }).id;
  const hooks = Array.from(
    { length: kHooks },
    (_, i) =>
      world.run('webhookCreate', {
        principal: kOperator,
        projectId,
        received: jsonBody(JSON.stringify({ url: `https://hooks.example.com/${i}`, events: ['flag'] })),
      }).id,
  );
  await world.store.close();
  return { dir, flagId, hooks };
}

if (values.measure !== undefined) {
  process.stdout.write(JSON.stringify(await measure(values.measure, JSON.parse(values.seed!) as Seed)));
} else {
  const seeded = JSON.stringify(await seed());
  const builds = [{ name: 'this build', root: fileURLToPath(new URL('../..', import.meta.url)) }];
  if (values.baseline !== undefined) builds.push({ name: values.baseline, root: resolve(values.baseline) });
  const results = new Map<string, Record<Step, number>[]>(builds.map((b) => [b.name, []]));
  const loads = [loadavg()[0]!];
  for (let round = 0; round < kRounds; round++) {
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const args = [kSelf, '--changes', String(kChanges), '--measure', build.root, '--seed', seeded];
      results.get(build.name)!.push(JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' })));
    }
    loads.push(loadavg()[0]!);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const load = `load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`;
  console.log(`# ${JSON.stringify(machineInfo())}; ${kChanges} changes of a 900 KB flag to ${kHooks} webhooks, ${kRounds} rounds; ${load}`);
  const compared = builds.length > 1;
  console.log(`| command | ${builds.map((b) => `${b.name}, CPU ms (median)`).join(' | ')} |${compared ? ' baseline / this |' : ''}`);
  console.log(`|---|${builds.map(() => '---:').join('|')}|${compared ? '---:|' : ''}`);
  for (const step of ['PATCH', 'claim (a webhook batch)', 'webhook delete'] as const) {
    const ms = builds.map((b) => median(results.get(b.name)!.map((r) => r[step])));
    console.log(`| ${step} | ${ms.map((m) => m.toFixed(1)).join(' | ')} |${compared ? ` ${(ms[1]! / ms[0]!).toFixed(1)}x |` : ''}`);
  }
}

// A change seen by the stock unleash-client over Flagwire's streaming endpoint (issue 60: "a change seen
// within 1 s over streaming"): a node on the test world, the SDK in streaming mode (its poll set to ten
// minutes, so that only the stream can tell it), and a flag PATCHed through the Management API N times,
// each after a random pause of up to 500 ms (so that changes fall anywhere in the node's poll of its
// commits); the time from the PATCH's 2xx to the SDK's isEnabled giving the new value, p50, p99 and the
// slowest.
// Run: npm run build && node dist/bench/unleash-streaming.bench.js [changes, 50]
import { loadavg } from 'node:os';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { kOperator } from '../src/actor/audit-actor.js';
import { call } from '../test/helpers/http.js';
import { startTestServer, tempDataDir } from '../test/helpers/server.js';
import { buildWorld } from '../test/helpers/world.js';
import { machineInfo } from './environment.js';
import { percentile } from './stats.js';

const kChanges = Number(process.argv[2] ?? 50);
const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids, secrets } = world;
const flagId = world.run('flagCreate', {
  projectId: ids.single,
  body: { name: 'streamed', enabled: true, trafficPercentage: 100 },
  principal: kOperator,
}).id;
const server = await startTestServer({ dataDir, env: { FLAGWIRE_RATE_LIMIT: '1000000000' } });
const unleash = new Unleash({
  url: `${server.baseUrl}/api`,
  appName: 'streaming-bench',
  customHeaders: { Authorization: secrets.read },
  disableMetrics: true,
  refreshInterval: 600_000,
  experimentalMode: { type: 'streaming' },
  storageProvider: new InMemStorageProvider(),
});
await new Promise<void>((resolve, reject) => {
  unleash.once('synchronized', () => resolve());
  unleash.once('error', reject);
});

/** Resolves at the first moment isEnabled('streamed') is `value`, checked at each change the SDK hears. */
function seen(value: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('a change not seen within a minute')), 60_000);
    const check = () => {
      if (unleash.isEnabled('streamed') !== value) return;
      clearTimeout(timer);
      unleash.off('changed', check);
      resolve(performance.now());
    };
    unleash.on('changed', check);
    check();
  });
}

const load0 = loadavg()[0]!.toFixed(1);
const ms: number[] = [];
let enabled = true;
for (let i = 0; i < kChanges; i++) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 500));
  enabled = !enabled;
  const told = seen(enabled);
  const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token: secrets.write, body: { enabled } });
  const answered = performance.now();
  if (r.status !== 200) throw new Error(`PATCH: ${r.status} ${r.text}`);
  ms.push(Math.max(0, (await told) - answered));
}
unleash.destroy();
await server.stop();
await world.store.close();

const sorted = [...ms].sort((a, b) => a - b);
const m = machineInfo();
console.log(`Command: \`node dist/bench/unleash-streaming.bench.js ${kChanges}\``);
console.log(`${new Date().toISOString()}; ${m.cores} cores, ${m.cpu}, node ${m.node}; load ${load0} to ${loadavg()[0]!.toFixed(1)}`);
console.log('| changes | PATCH 2xx to the SDK answering it, p50 ms | p99 ms | slowest ms |');
console.log('|---:|---:|---:|---:|');
console.log(`| ${kChanges} | ${percentile(sorted, 50).toFixed(0)} | ${percentile(sorted, 99).toFixed(0)} | ${sorted.at(-1)!.toFixed(0)} |`);

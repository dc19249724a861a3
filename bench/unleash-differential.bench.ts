// The differential of issue 60 at its full size: 1,000,000 generated contexts, each asked of Flagwire's
// front-end API (POST /api/frontend/all) and of the stock unleash-client evaluating the same flags
// locally from a real Unleash (unleash-server 7.5.1 on a PostgreSQL cluster of its own), after
// `flagwire import unleash --url` carried them into Flagwire: every flag's enabled and variant (name,
// enabled, payload) compared, every mismatch counted and the first ones printed. The flags, the contexts
// and the comparison are test/helpers/unleash-differential.ts's, whose first 2,000 contexts
// test/unleash/frontend-differential.test.ts asks.
//
//   npm run build && node dist/bench/unleash-differential.bench.js [--contexts 1000000] [--concurrency 16]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPostgres } from '../test/helpers/postgres.js';
import { scratchDir } from '../test/helpers/scratch-dir.js';
import { startTestServer } from '../test/helpers/server.js';
import { importForDifferential, kDifferentialEnv, runDifferential, seedDifferentialFlags } from '../test/helpers/unleash-differential.js';
import { startUnleash } from '../test/helpers/unleash-server.js';
import { startUnleashSdk } from '../test/helpers/unleash-sdk.js';
import { machineInfo } from './environment.js';
import { log } from './log.js';

const { values } = parseArgs({
  options: { contexts: { type: 'string', default: '1000000' }, concurrency: { type: 'string', default: '16' } },
});
const kContexts = Number(values.contexts);
const kConcurrency = Number(values.concurrency);
const kShown = 20;

/** What the helpers stop at the end, last started first stopped (the helpers' `t.teardown`). */
const teardowns: (() => unknown)[] = [];
const scope = { teardown: (fn: () => unknown) => void teardowns.push(fn) };

async function main(): Promise<void> {
  const unleash = await startUnleash(scope, await startPostgres(), [{ project: 'default', environment: kDifferentialEnv }]);
  log(`Unleash started in ${unleash.started.wallMs} ms`);
  const names = await seedDifferentialFlags(unleash);
  const dir = scratchDir('flagwire-unleash-differential-');
  const { frontendKey } = await importForDifferential(unleash, dir);
  const server = await startTestServer({ dataDir: dir });
  scope.teardown(() => server.stop());
  const sdk = await startUnleashSdk(scope, unleash.baseUrl, unleash.clientToken('default', kDifferentialEnv), 'differential');
  log(`${names.length} flags imported; asking ${kContexts.toLocaleString('en-US')} contexts, ${kConcurrency} at a time`);
  const mismatches: string[] = [];
  let mismatched = 0;
  const started = Date.now();
  const { contexts, compared } = await runDifferential({
    baseUrl: server.baseUrl,
    frontendKey,
    sdk,
    names,
    from: 0,
    count: kContexts,
    concurrency: kConcurrency,
    onMismatch: (line) => {
      mismatched++;
      if (mismatches.length < kShown) mismatches.push(line);
    },
    onContext: (done) => {
      if (done % 50_000 === 0)
        log(`${done.toLocaleString('en-US')} contexts, ${mismatched} mismatches, ${Math.round(done / ((Date.now() - started) / 1000))}/s`);
    },
  });
  const seconds = (Date.now() - started) / 1000;
  const m = machineInfo();
  console.log(`Command: \`${['node dist/bench/unleash-differential.bench.js', ...process.argv.slice(2)].join(' ')}\``);
  console.log(
    `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; ${m.cores} cores, ${m.cpu}, node ${m.node}; unleash-server 7.5.1, unleash-client ${sdkVersion()}`,
  );
  console.log(
    `\n${contexts.toLocaleString('en-US')} contexts × ${names.length} flags = ${compared.toLocaleString('en-US')} answers compared in ${seconds.toFixed(0)} s: ${mismatched} mismatches`,
  );
  for (const line of mismatches) console.log(`- ${line}`);
  if (mismatched > 0 || contexts !== kContexts) process.exitCode = 1;
}

/** The stock SDK's version, as npm installed it. */
function sdkVersion(): string {
  const main = createRequire(import.meta.url).resolve('unleash-client');
  return (JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')) as { version: string }).version;
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  for (const fn of teardowns.reverse()) await fn();
}

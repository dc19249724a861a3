// How fast an application configured by the OpenFeature Operator sees a change made through the
// Management API (issue 97, item 4): a real Flagwire with its sync service, and the stock flagd provider in
// a process whose environment is exactly what the operator injects for the manifests' InProcessConfiguration
// (test/helpers/openfeature-operator.ts), the cluster's addresses swapped for the test server's. The test
// file checks every change arrives; bench/operator-in-process.bench.ts measures how soon.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { call } from './http.js';
import { type EnvVar, injectedInProcessEnv, storedInProcessConfiguration } from './openfeature-operator.js';
import { plainNode } from './plain-process.js';
import { startTestServer, tempDataDir } from './server.js';
import { buildWorld } from './world.js';

const kApp = fileURLToPath(new URL('./env-flagd-provider.js', import.meta.url));

/**
 * The variables an application container gets: the operator's, each Secret reference read from
 * `secrets` ("name/key"), and `host` and `port` in place of the cluster's relay Service, whose values
 * are returned beside them.
 */
export function applicationEnv(
  injected: readonly EnvVar[],
  secrets: Record<string, string>,
  address: { host: string; port: number },
): { env: Record<string, string>; cluster: { host: string; port: string } } {
  const env: Record<string, string> = {};
  for (const entry of injected) {
    const ref = entry.valueFrom?.secretKeyRef;
    const value = ref === undefined ? entry.value : secrets[`${ref.name}/${ref.key}`];
    if (value === undefined) throw new Error(`${entry.name}: no value (secret ${ref?.name}/${ref?.key})`);
    env[entry.name] = value;
  }
  const cluster = { host: env.FLAGD_HOST!, port: env.FLAGD_PORT! };
  env.FLAGD_HOST = address.host;
  env.FLAGD_PORT = String(address.port);
  return { env, cluster };
}

export interface Convergence {
  /** The application's environment, as it ran (the test server's address in it). */
  env: Record<string, string>;
  /** The relay address the manifests name, which the test server's replaced. */
  cluster: { host: string; port: string };
  /** For each change, milliseconds from sending its PATCH to the application's answer changing. */
  latenciesMs: number[];
}

/** Toggles a flag `changes` times through the Management API, each once the application has seen the last. */
export async function operatorConvergence(changes: number, timeoutMs = 60_000): Promise<Convergence> {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  const server = await startTestServer({ dataDir, syncPort: 'free' });
  const { ids, secrets } = world;
  let app: ReturnType<typeof spawn> | null = null;
  try {
    const created = await call(server.baseUrl, 'POST', '/api/v1/flags', {
      token: secrets.write,
      body: { name: 'operator-toggle', enabled: true, trafficPercentage: 100 },
    });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
    const flagId = created.json.id as string;

    const { env, cluster } = applicationEnv(
      injectedInProcessEnv(storedInProcessConfiguration()),
      { 'flagwire-flagd/selector': `flagSetId=${ids.single},token=${secrets.read}` },
      { host: '127.0.0.1', port: server.syncPort },
    );
    // PATH alone from this process: nothing of the test's own configuration reaches the provider.
    app = spawn(...plainNode([kApp, 'operator-toggle']), {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: app.stdout! })[Symbol.asyncIterator]();
    const next = async (expected: string, what: string): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`never: ${what} within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        const line = await Promise.race([lines.next(), timeout]);
        if (line.done === true || line.value !== expected)
          throw new Error(`${what}: expected "${expected}", got ${JSON.stringify(line.value)}`);
      } finally {
        clearTimeout(timer);
      }
    };
    await next('ready', 'the provider is ready');
    await next('true', 'the first answer');

    const latenciesMs: number[] = [];
    for (let i = 1; i <= changes; i++) {
      const enabled = i % 2 === 0;
      const started = performance.now();
      const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token: secrets.write, body: { enabled } });
      if (r.status !== 200) throw new Error(`PATCH ${i}: ${r.status} ${r.text}`);
      await next(String(enabled), `change ${i} reaching the application`);
      latenciesMs.push(performance.now() - started);
    }
    return { env, cluster, latenciesMs };
  } finally {
    if (app !== null && app.exitCode === null && app.signalCode === null) {
      const exited = new Promise((resolve) => app!.once('exit', resolve));
      app.stdin!.end();
      await exited;
    }
    await server.stop();
    await world.store.close();
  }
}

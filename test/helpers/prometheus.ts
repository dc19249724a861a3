// A private Prometheus for tests: Debian's package (`scripts/ensure.sh prometheus` installs it when
// missing), started on a free port with its own config and data in a scratch directory, scraping the
// targets the test names every second; stopped by its PID at teardown.
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';
import { scratchDir } from './scratch-dir.js';

const kEnsureScript = fileURLToPath(new URL('../../../scripts/ensure.sh', import.meta.url));

export interface TestPrometheus {
  readonly url: string;
  /** Asks Prometheus an instant query; the answer's JSON. */
  query(expression: string): Promise<{ status: string; data?: { result: unknown[] } }>;
  stop(): Promise<void>;
}

/** The port Prometheus will listen on, chosen before it starts (the server it guards needs its URL first). */
export async function prometheusPort(): Promise<number> {
  return freePort();
}

/** Starts Prometheus on `port`, scraping each target (host:port) every second; resolves once it is ready. */
export async function startPrometheus(port: number, targets: Record<string, string>): Promise<TestPrometheus> {
  const bin = execFileSync(kEnsureScript, ['prometheus'], { encoding: 'utf8' }).trim();
  const dir = scratchDir('flagwire-prometheus-');
  const jobs = Object.entries(targets)
    .map(([job, target]) => `  - job_name: ${job}\n    static_configs:\n      - targets: ['${target}']`)
    .join('\n');
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n${jobs}\n`);
  const proc = spawn(
    bin,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // Generous: a loaded 2-core machine starts it in well under a second, but only a hang should fail here.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited with ${proc.exitCode}\n${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`prometheus not ready in 60 s\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async query(expression) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
      return (await response.json()) as { status: string; data?: { result: unknown[] } };
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** A test exporter: one gauge whose value the test sets, served in the Prometheus text format. */
export interface TestExporter {
  readonly target: string;
  set(value: number): void;
  close(): Promise<void>;
}

export async function startExporter(name: string, initial: number): Promise<TestExporter> {
  let value = initial;
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(`# TYPE ${name} gauge\n${name} ${value}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    target: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    set: (v) => (value = v),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

// The packed edge package (scripts/pack-edge.mjs) run as a user deploys it: in Cloudflare's workerd (the
// `workerd` npm package: the Workers runtime, which refuses code generation unless told otherwise) as the
// package's own worker (`@flagwire/edge/worker`) with its settings as bindings, and in Vercel's Edge
// Runtime (the `edge-runtime` npm package) as a script, with code generation from strings and WebAssembly
// refused. Each answers on a free loopback port.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { EdgeRuntime, runServer } from 'edge-runtime';
import { freePort } from '../helpers/free-port.js';
import { plainNode } from '../helpers/plain-process.js';
import { scratchDir } from '../helpers/scratch-dir.js';

const kRoot = fileURLToPath(new URL('../../..', import.meta.url));
const kWorkerd = join(kRoot, 'node_modules/workerd/bin/workerd');

/** The package as npm would unpack it: its folder (package.json, dist/) and the tarball's size. */
export interface PackedEdge {
  readonly dir: string;
  readonly tarball: string;
}

export function packEdge(): PackedEdge {
  const dir = scratchDir('flagwire-edge-');
  const packed = execFileSync(...plainNode([join(kRoot, 'scripts/pack-edge.mjs'), '--out', join(dir, 'packed')]), {
    cwd: kRoot,
    encoding: 'utf8',
  });
  const tarball = packed.trim().split('\n').at(-1)!;
  execFileSync('tar', ['xzf', tarball, '-C', dir]);
  return { dir: join(dir, 'package'), tarball };
}

/** The worker's settings (src/edge/worker.ts). */
export type EdgeBindings = Record<string, string>;

export interface EdgeHost {
  readonly baseUrl: string;
  stop(): Promise<void>;
}

/**
 * `@flagwire/edge/worker` under workerd. Its outbound requests may reach loopback (the test's server):
 * workerd's default network allows public addresses only.
 */
export async function startWorkerd(pkg: PackedEdge, bindings: EdgeBindings): Promise<EdgeHost & { readonly process: ChildProcess }> {
  const port = await freePort();
  const dir = scratchDir('flagwire-workerd-');
  // workerd embeds files from the configuration's own folder.
  copyFileSync(join(pkg.dir, 'dist/worker.js'), join(dir, 'worker.js'));
  const text = (name: string, value: string) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(value)})`;
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "loopback", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-01-01",
  bindings = [${Object.entries(bindings)
    .map(([name, value]) => text(name, value))
    .join(', ')}],
  globalOutbound = "loopback",
);
`,
  );
  const proc = spawn(kWorkerd, ['serve', join(dir, 'config.capnp')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  await untilAnswers(baseUrl, () => (proc.exitCode === null ? null : `workerd exited (${proc.exitCode}): ${output}`));
  return {
    baseUrl,
    process: proc,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The package's FlagwireEdge under Vercel's Edge Runtime: bundled with a fetch listener into one script
 * (the runtime runs scripts, as Vercel runs a bundled Edge Function), made with `options`.
 */
export async function startEdgeRuntime(
  pkg: PackedEdge,
  options: Record<string, unknown>,
): Promise<EdgeHost & { readonly runtime: EdgeRuntime }> {
  const dir = scratchDir('flagwire-edge-runtime-');
  const entry = join(dir, 'entry.mjs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    entry,
    `import { FlagwireEdge } from ${JSON.stringify(join(pkg.dir, 'dist/index.js'))};
const edge = new FlagwireEdge(${JSON.stringify(options)});
addEventListener('fetch', (event) => event.respondWith(edge.fetch(event.request, event)));
`,
  );
  const out = join(dir, 'script.js');
  await build({ entryPoints: [entry], bundle: true, format: 'iife', platform: 'neutral', outfile: out, logLevel: 'warning' });
  const runtime = new EdgeRuntime({ initialCode: readFileSync(out, 'utf8'), codeGeneration: { strings: false, wasm: false } });
  const server = await runServer({ runtime, host: '127.0.0.1', port: await freePort() });
  return { baseUrl: server.url.replace(/\/$/, ''), runtime, stop: () => server.close() };
}

/** Waits (a minute at most) until `baseUrl` answers at all; `failed` says why it never will. */
async function untilAnswers(baseUrl: string, failed: () => string | null): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const why = failed();
    if (why !== null) throw new Error(why);
    try {
      await fetch(`${baseUrl}/`, { signal: AbortSignal.timeout(5_000) });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${baseUrl} did not answer within a minute`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

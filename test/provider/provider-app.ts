// An application that uses the packed provider as a user's would: `npm run pack:provider`'s tarball
// installed with npm into a temporary application folder beside @openfeature/server-sdk, and a small
// program there that sets FlagwireProvider with setProviderAndWait, prints every provider event, and
// answers evaluation requests read from its stdin (one JSON line each) with the SDK's details.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FlagwireProviderOptions } from '../../src/provider/provider.js';
import { plain, plainNode } from '../helpers/plain-process.js';
import { scratchDir } from '../helpers/scratch-dir.js';

const kRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The application: its events and answers are JSON lines on stdout. */
const kAppSource = `
import { createInterface } from 'node:readline';
import { OpenFeature, ProviderEvents } from '@openfeature/server-sdk';
import { FlagwireProvider } from '@flagwire/openfeature-provider';

const out = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
const provider = new FlagwireProvider(JSON.parse(process.argv[2]));
const client = OpenFeature.getClient();
for (const event of [ProviderEvents.Ready, ProviderEvents.Stale, ProviderEvents.Error, ProviderEvents.ConfigurationChanged]) {
  client.addHandler(event, (details) => out({ event, message: details?.message ?? null, flagsChanged: details?.flagsChanged ?? null }));
}
const getters = { boolean: 'getBooleanDetails', string: 'getStringDetails', number: 'getNumberDetails', object: 'getObjectDetails' };
createInterface({ input: process.stdin }).on('line', async (line) => {
  const { id, questions } = JSON.parse(line);
  const started = performance.now();
  const answers = [];
  for (const q of questions) {
    const d = await client[getters[q.type]](q.key, q.defaultValue, q.context);
    answers.push({ value: d.value, variant: d.variant ?? null, reason: d.reason ?? null, errorCode: d.errorCode ?? null,
      errorMessage: d.errorMessage ?? null, flagMetadata: d.flagMetadata });
  }
  out({ id, answers, status: client.providerStatus, revision: provider.revision, ms: performance.now() - started });
});
try {
  await OpenFeature.setProviderAndWait(provider);
  out({ init: 'ok', status: client.providerStatus });
} catch (err) {
  out({ init: 'failed', message: err.message, status: client.providerStatus });
}
`;

export interface Question {
  key: string;
  type: 'boolean' | 'string' | 'number' | 'object';
  defaultValue: unknown;
  context: Record<string, unknown>;
}

export interface Answer {
  value: unknown;
  variant: string | null;
  reason: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  flagMetadata: Record<string, unknown>;
}

export interface Installed {
  /** The application folder: node_modules holds the provider as npm installed it. */
  dir: string;
  /** How it was installed: npm offline from its cache, or (no cache) extracted by hand. */
  how: string;
  /** The packed tarball it was installed from. */
  tarball: string;
}

/**
 * Packs the provider (scripts/pack-provider.mjs, into a folder of this test) and installs the tarball
 * into a new application folder with npm, offline: only npm's cache is read. Where the cache lacks
 * @openfeature/server-sdk, the tarball is extracted into node_modules and the SDK copied from this
 * repository's own (`how` says which).
 */
export function installProviderApp(): Installed {
  const dir = scratchDir('flagwire-provider-app-');
  const packed = execFileSync(...plainNode([join(kRoot, 'scripts/pack-provider.mjs'), '--out', join(dir, 'packed')]), {
    cwd: kRoot,
    encoding: 'utf8',
  });
  const tarball = packed.trim().split('\n').at(-1)!;
  const app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'provider-app', version: '1.0.0', private: true, type: 'module' }));
  writeFileSync(join(app, 'app.mjs'), kAppSource);
  const sdk = JSON.parse(readFileSync(join(kRoot, 'node_modules/@openfeature/server-sdk/package.json'), 'utf8')).version as string;
  try {
    execFileSync(...plain('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball, `@openfeature/server-sdk@${sdk}`]), {
      cwd: app,
      stdio: 'pipe',
    });
    return { dir: app, how: 'npm install --offline', tarball };
  } catch {
    const target = join(app, 'node_modules/@flagwire/openfeature-provider');
    mkdirSync(target, { recursive: true });
    execFileSync('tar', ['xzf', tarball, '-C', target, '--strip-components=1']);
    for (const name of ['server-sdk', 'core'])
      cpSync(join(kRoot, 'node_modules/@openfeature', name), join(app, 'node_modules/@openfeature', name), { recursive: true });
    return { dir: app, how: 'extracted into node_modules (npm had no cached @openfeature/server-sdk)', tarball };
  }
}

/** What the application constructs its provider with (sent as JSON: no logger). */
export type ProviderOptions = Omit<FlagwireProviderOptions, 'logger'>;

/** One run of the application. */
export class AppProcess {
  readonly messages: Record<string, any>[] = [];
  private readonly proc: ChildProcess;
  private buffered = '';
  private next = 0;
  private stderr = '';
  private readonly waiters = new Set<() => void>();

  constructor(app: Installed, options: ProviderOptions) {
    this.proc = spawn(...plainNode([join(app.dir, 'app.mjs'), JSON.stringify(options)]), { cwd: app.dir, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString();
      let end = this.buffered.indexOf('\n');
      while (end >= 0) {
        this.messages.push(JSON.parse(this.buffered.slice(0, end)));
        this.buffered = this.buffered.slice(end + 1);
        end = this.buffered.indexOf('\n');
      }
      for (const wake of this.waiters) wake();
    });
    this.proc.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
  }

  /** The first message (from `from` on) that `match` accepts; a minute at most (only a hang is caught). */
  async waitFor(what: string, match: (m: Record<string, any>) => boolean, from = 0): Promise<Record<string, any>> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = this.messages.slice(from).find(match);
      if (found !== undefined) return found;
      if (Date.now() > deadline || this.proc.exitCode !== null) {
        throw new Error(
          `the application never printed ${what}; it printed:\n${this.messages.map((m) => JSON.stringify(m)).join('\n')}\n${this.stderr}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, 1000);
        const waiters = this.waiters;
        function wake() {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        }
        waiters.add(wake);
      });
    }
  }

  /** Asks every question in one go; the answers, the SDK's status then and the provider's revision. */
  async ask(questions: readonly Question[]): Promise<{ answers: Answer[]; status: string; revision: number | null; ms: number }> {
    const id = this.next++;
    this.proc.stdin!.write(`${JSON.stringify({ id, questions })}\n`);
    return (await this.waitFor(`the answers of request ${id}`, (m) => m.id === id)) as never;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.proc.kill('SIGKILL');
    await exited;
  }
}

// Runs the console against a data dir and checks the --json contract on every call: stdout is exactly
// one JSON object. A run is made in this process (src/cli/main.ts, from the build's bundle of it that
// the binary runs, with the environment given explicitly): a Node start per command was most of the CLI
// tests' CPU. The
// real binary (`node dist/src/cli/flagwire.cjs ...`) runs where the process itself is what is tested
// (`process: true`), and where a command reads more of its process than argv and env: bytes that are
// not UTF-8 on the command line, stdin (user password, unless the test gives its input), a cwd, test-hook
// settings, PostgreSQL (--database, unless the test asks for it in this process: inProcess), serve and
// migrate-to-postgres.
// test/cli/cli-binary.test.ts proves both give the same exit status and bytes.
import { execFile } from 'node:child_process';
import { Readable } from 'node:stream';
import type { StoreWriter } from '../../src/store/interfaces.js';
import type { CommandInput, CommandName, CommandOutput } from '../../src/writer/thread/commands.js';
import { plainNode } from './plain-process.js';
import { kCli, kTestWriteTimeout } from './server.js';
import { exportStore } from './store-export.js';

export interface CliResult {
  code: number;
  /** The one JSON object on stdout (with --json), else undefined. */
  json: any;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Add `--json` (default true). */
  json?: boolean;
  /** Add `--data <dir>` (default true when a data dir is given). */
  data?: boolean;
  /** Extra environment; FLAGWIRE_DATA is removed unless set here. */
  env?: Record<string, string>;
  cwd?: string;
  /** Run the real binary in a child process (default: in this process where that is the same run). */
  process?: boolean;
  /**
   * A PostgreSQL run (--database) in this process too, where it would have a process of its own, and
   * beside the other runs rather than after them (console commands that must wait on the database's
   * locks at the same moment), each on a data dir no other run has open. For a database no test hangs:
   * a run that hangs fails after the minute a process is given, and leaves its connection in this
   * process. A console process costs about 0.5 CPU s, the same run in this process a tenth of that.
   */
  inProcess?: boolean;
  /**
   * Standard input, all of it: a run in this process reads it (`user password` then needs no process of
   * its own: a console process costs about 0.5 CPU s), a child process gets it on its stdin.
   */
  input?: string;
}

/** Thrown when stdout breaks the --json contract; the test fails with the raw output. */
export class ContractError extends Error {}

function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...kTestWriteTimeout };
  delete env.FLAGWIRE_DATA;
  return { ...env, ...extra };
}

/**
 * A command-line argument: text, or bytes given as they are (an argument that is not UTF-8, which a
 * string cannot carry: Node would encode it as UTF-8).
 */
export type CliArg = string | Buffer;

/** Bytes for bash's `$'...'` quoting, every byte escaped. */
function bashBytes(arg: CliArg): string {
  return `$'${[...Buffer.from(arg)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('')}'`;
}

/** Commands that read more of their process than argv and env, or run on: the real binary (user password: unless given its input). */
const kProcessOnly = new Set(['serve', 'user password', 'migrate-to-postgres']);
/** The environment an in-process run is given; any other setting a test passes needs a process of its own. */
const kInProcessEnv = new Set(['FLAGWIRE_DATA']);

function needsProcess(args: readonly CliArg[], options: CliOptions): boolean {
  if (options.process === true || options.cwd !== undefined) return true;
  if (Object.keys(options.env ?? {}).some((k) => !kInProcessEnv.has(k))) return true;
  // A string that is not well-formed UTF-16 reaches a child's argv as other bytes; a NUL cannot reach it at all.
  if (!args.every((a): a is string => typeof a === 'string' && !/[\uD800-\uDFFF\0]/u.test(a))) return true;
  const words = args as readonly string[];
  // PostgreSQL runs (the multinode tests) keep their process unless asked otherwise (inProcess): a hung
  // database must not hang the test process, and the hang bound below ends the console as it ended before.
  if (words.includes('--database') && options.inProcess !== true) return true;
  const command = `${words[0]} ${words[1]}`;
  if (command === 'user password' && options.input !== undefined) return false;
  return kProcessOnly.has(words[0] ?? '') || kProcessOnly.has(command);
}

/** The bound of a console run; it only catches a hang: a command at load 15 on two cores has taken over 15 s. */
const kCliHangMs = 60_000;

type Main = typeof import('../../src/cli/main.js');

let loadedMain: Promise<Main['main']> | null = null;

/**
 * main, loaded on the first in-process run: the build's bundle of it where the binary would run that
 * (src/cli/bundled.ts), else main.js's modules. The bundle is one script V8 caches, about 0.05 CPU s to
 * load; main.js is some 250 modules, 0.4-0.6 CPU s of a test process, more when loaded under tap's async
 * hooks (during a test, not before it). A file that never runs the console in this process loads neither.
 */
function consoleMain(): Promise<Main['main']> {
  loadedMain ??= (async () => {
    const { runsBundled } = await import('../../src/cli/bundled.js');
    // A specifier tsc does not resolve: the bundle is the build's, made after tsc.
    const bundle = '../../src/cli/bundle/main.js';
    return ((await import(runsBundled() ? bundle : '../../src/cli/main.js')) as Main).main;
  })();
  return loadedMain;
}

/** In-process runs go one at a time: each opens and closes the store as a console process would. */
let inProcessQueue: Promise<unknown> = Promise.resolve();

function runInProcess(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  besideOthers: boolean,
  input: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = async () => {
    const stdin = Readable.from([Buffer.from(input)]);
    const main = await consoleMain();
    const o = await main(argv, { env, commandLine: Buffer.from(argv.map((a) => `${a}\0`).join('')), stdin });
    if (o === null) throw new Error(`flagwire ${argv.join(' ')} is long-running: run it with process: true`);
    return o;
  };
  if (besideOthers) return boundedByHang(run(), `flagwire ${argv.join(' ')}`);
  const outcome = inProcessQueue.then(run);
  inProcessQueue = outcome.catch(() => undefined);
  return outcome;
}

/** `running`, or a rejection once it has run for the minute a console process is given (kCliHangMs). */
async function boundedByHang<T>(running: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${kCliHangMs} ms`)), kCliHangMs);
  });
  try {
    return await Promise.race([running, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** `flagwire <args> --json --data <dataDir>`; resolves with the exit code and output, never rejects on exit status. */
export async function cli(dataDir: string | null, args: readonly CliArg[], options: CliOptions = {}): Promise<CliResult> {
  const json = options.json ?? true;
  if (!needsProcess(args, options)) {
    const argv = [...(args as readonly string[])];
    if (json) argv.push('--json');
    if (dataDir !== null && (options.data ?? true)) argv.push('--data', dataDir);
    const { code, stdout, stderr } = await runInProcess(argv, baseEnv(options.env), options.inProcess === true, options.input ?? '');
    let parsed: unknown;
    if (json) {
      try {
        parsed = parseOneObject(stdout);
      } catch (e) {
        throw new ContractError(`flagwire ${args.join(' ')}: ${(e as Error).message}; exit ${code}\nstdout: ${stdout}\nstderr: ${stderr}`);
      }
    }
    return { code, json: parsed, stdout, stderr };
  }
  // As users run it, without the test runner's loaders (plain-process.ts).
  const argv: CliArg[] = [kCli, ...args];
  if (json) argv.push('--json');
  if (dataDir !== null && (options.data ?? true)) argv.push('--data', dataDir);
  // Bytes reach the child's command line only through a shell that writes them.
  const [file, fileArgs] = argv.every((a) => typeof a === 'string')
    ? plainNode(argv as string[])
    : ['bash', ['-c', `exec ${plainNode([]).flat().map(bashBytes).join(' ')} ${argv.map(bashBytes).join(' ')}`]];
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      fileArgs,
      { env: baseEnv(options.env), cwd: options.cwd, timeout: kCliHangMs, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        if (err && typeof err.code !== 'number') {
          reject(new Error(`flagwire ${args.join(' ')} did not exit normally (${err.message})\n${stderr}`));
          return;
        }
        let parsed: unknown;
        if (json) {
          try {
            parsed = parseOneObject(stdout);
          } catch (e) {
            reject(
              new ContractError(`flagwire ${args.join(' ')}: ${(e as Error).message}; exit ${code}\nstdout: ${stdout}\nstderr: ${stderr}`),
            );
            return;
          }
        }
        resolve({ code, json: parsed, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** Exactly one JSON object (not an array, not several values), one line, newline-terminated. */
export function parseOneObject(stdout: string): Record<string, unknown> {
  if (!stdout.endsWith('\n') || stdout.indexOf('\n') !== stdout.length - 1) throw new Error('stdout is not exactly one line');
  const value: unknown = JSON.parse(stdout);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('stdout is not a JSON object');
  return value as Record<string, unknown>;
}

/**
 * Runs writer commands in this process, in one transaction, against the same data dir (the console
 * has no command for some set-up, such as flags, and 50 tokens are faster this way).
 */
export type RunCommand = <N extends CommandName>(name: N, input: CommandInput<N>, now?: number) => CommandOutput<N>;

export async function inStore<T>(dataDir: string, fn: (run: RunCommand, w: StoreWriter) => T): Promise<T> {
  const [{ Store }, { runCommand }] = await Promise.all([import('./store.js'), import('../../src/writer/thread/commands.js')]);
  const store = Store.open(dataDir);
  try {
    return store.transact((w) => fn((name, input, now = Date.now()) => runCommand(w, name, input, now), w));
  } finally {
    await store.close();
  }
}

// ---- assertions --------------------------------------------------------------------------------

type Tap = typeof import('tap').t;
/** The `t` a tap subtest callback receives. */
export type TestContext = Parameters<Parameters<Tap['test']>[0]>[0];

export interface Refusal {
  /** Exit status (default 1). */
  code?: number;
  /** The error title, e.g. `Forbidden`. */
  error: string;
  detail?: RegExp;
}

/**
 * Runs a command that must be refused: exit 1 (or `code`), `{error, detail}` and nothing else on
 * stdout, and not one byte of the store changed (an export before and after, commit counter included).
 */
export async function expectRefused(t: TestContext, dataDir: string, args: readonly CliArg[], expected: Refusal): Promise<CliResult> {
  const before = await exportStore(dataDir);
  const r = await cli(dataDir, args);
  const what = `flagwire ${args.join(' ')}`;
  t.equal(r.code, expected.code ?? 1, `${what}: exit ${expected.code ?? 1}`);
  t.strictSame(Object.keys(r.json).sort(), ['detail', 'error'], `${what}: {error, detail}`);
  t.equal(r.json.error, expected.error, `${what}: error title`);
  if (expected.detail) t.match(r.json.detail, expected.detail, `${what}: detail`);
  t.strictSame(await exportStore(dataDir), before, `${what}: store unchanged`);
  return r;
}

/** Runs a command that must succeed with --json; fails the test (with its output) otherwise. */
export async function ok(t: TestContext, dataDir: string, args: readonly string[], options: CliOptions = {}): Promise<any> {
  const r = await cli(dataDir, args, options);
  t.equal(r.code, 0, `flagwire ${args.join(' ')}: exit 0${r.code === 0 ? '' : ` (${r.stdout.trim()} ${r.stderr.trim()})`}`);
  return r.json;
}

/**
 * Several commands that must all be refused, run at once (they are independent): each gets exit 1
 * (or its `code`) and its `{error, detail}`, and the store is unchanged after all of them. That is as
 * strict as checking each one alone: every committed transaction bumps the store's commit counter,
 * so no write can hide behind another.
 */
export async function expectAllRefused(
  t: TestContext,
  dataDir: string,
  cases: readonly (readonly [readonly CliArg[], Refusal])[],
): Promise<CliResult[]> {
  const before = await exportStore(dataDir);
  const results = await Promise.all(cases.map(([args]) => cli(dataDir, args)));
  cases.forEach(([args, expected], i) => {
    const r = results[i]!;
    const what = `flagwire ${args.join(' ')}`;
    t.equal(r.code, expected.code ?? 1, `${what}: exit ${expected.code ?? 1}`);
    t.strictSame(Object.keys(r.json).sort(), ['detail', 'error'], `${what}: {error, detail}`);
    t.equal(r.json.error, expected.error, `${what}: error title`);
    if (expected.detail) t.match(r.json.detail, expected.detail, `${what}: detail`);
  });
  t.strictSame(
    await exportStore(dataDir),
    before,
    `store unchanged after: ${cases.map(([args]) => args.slice(0, 2).join(' ')).join(', ')}`,
  );
  return results;
}

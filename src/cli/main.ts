// The console's run (cli.ts is its entry point): the command line in, the exit status and output out,
// with the environment given explicitly, so the same run can be made inside another process (tests).
import { kStoreLayout } from '../capabilities.js';
import { ConfigError, resolveChangeLogBounds, resolveDatabaseUrl, resolveDataDir } from '../config.js';
import { FlagwireError } from '../errors.js';
import { StoreOpenError } from '../store/data-file.js';
import type { StoreReader } from '../store/interfaces.js';
import { openForCli, writeRefusalOnOpen, type CliStore } from '../store/open-store.js';
import { runOutcome } from '../writer/thread/commands.js';
import { ChangeRequested } from '../writer/change-requested.js';
import type { WriterCommand } from '../writer/command.js';
import { UsageError, wantsJson } from './command/args.js';
import { answerBeforeRun, type CliIo, configFailure, failure, kExitFailed, kExitRequested, type Outcome, usageFailure } from './answers.js';
import { kCliCommands } from './commands.js';
import type { CliContext } from './command/cli-command.js';
import { renderJson } from './command/output.js';
import { cliTestHook } from './test-hooks.js';

/** Opens the store on first use, so usage errors and --help never touch the data dir (or PostgreSQL). */
class StoreContext implements CliContext {
  readonly now = Date.now();
  private opened: Promise<CliStore> | null = null;
  /** Said on stderr once a read ran on a database's copy without the database (stdout stays the same). */
  readNote = '';
  /** The command's own notes (CliContext.note), said on stderr after readNote. */
  private notes = '';

  /** `createsDataDir`: this command may create a missing data directory (serve, org create). */
  constructor(
    readonly dataFlag: string | undefined,
    readonly databaseFlag: string | undefined,
    private readonly createsDataDir: boolean,
    private readonly io: CliIo,
  ) {}

  /** Read on use (cli.ts: the process's stream is made as it is first read). */
  get stdin(): NodeJS.ReadableStream {
    return this.io.stdin;
  }

  private open(): Promise<CliStore> {
    this.opened ??= (async () => {
      const dataDir = resolveDataDir(this.dataFlag, this.io.env, this.createsDataDir);
      const databaseUrl = resolveDatabaseUrl(this.databaseFlag, this.io.env);
      const opened = await openForCli(dataDir, kStoreLayout, databaseUrl, resolveChangeLogBounds(this.io.env));
      cliTestHook('store-open');
      return opened;
    })();
    return this.opened;
  }

  note(line: string): void {
    this.notes += `flagwire: ${line}\n`;
  }

  /** What goes to stderr beside the command's output. */
  get stderr(): string {
    return this.readNote + this.notes;
  }

  async write<I, O>(command: WriterCommand<I, O>, input: I): Promise<O> {
    // One command, one transaction: a thrown error aborts it and nothing is written.
    const { writes } = await this.open().catch((err: unknown) => {
      throw writeRefusalOnOpen(err);
    });
    const [result] = await writes.commit(() => [
      (w) => {
        const output = runOutcome(w, command, input, this.now);
        cliTestHook('in-transaction');
        return output;
      },
    ]);
    cliTestHook('committed');
    if (!result!.ok) throw result!.error;
    // Held as a change request (committed as such): the change itself was not applied.
    if (!result!.value.applied) throw new ChangeRequested(result!.value.request, result!.value.edited);
    return result!.value.value;
  }

  async read<T>(fn: (store: StoreReader) => T): Promise<T> {
    const { store, copyOnly } = await this.open();
    if (copyOnly) {
      this.readNote =
        "flagwire: read this data directory's copy of a PostgreSQL database as it was last brought up to date here; pass --database URL to read the database itself\n";
    }
    return fn(store);
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    // The write path owns the store: closing it closes both.
    if (opened)
      await opened.then(
        ({ writes }) => writes.close(),
        () => undefined,
      );
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<Outcome | null> {
  const answered = answerBeforeRun(argv, kCliCommands, io);
  if ('outcome' in answered) return answered.outcome;
  const { line } = answered;
  const { spec } = line;

  const ctx = new StoreContext(line.data, line.database, spec.createsDataDir === true, io);
  try {
    const result = await spec.run(line.args, ctx);
    if (spec.longRunning) return null;
    return {
      code: spec.exitCode?.(result) ?? 0,
      stdout: line.json ? renderJson(result) : `${spec.human(result, ctx.now)}\n`,
      stderr: ctx.stderr,
    };
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(line.json, err);
    if (err instanceof ConfigError) return configFailure(line.json, err.message);
    if (err instanceof FlagwireError) return failure(line.json, err, kExitFailed);
    if (err instanceof ChangeRequested) {
      return {
        code: kExitRequested,
        stdout: line.json
          ? renderJson({ changeRequest: err.request, edited: err.edited })
          : `${err.edited ? 'Change request edited' : 'Change requested'}: ${err.message}.\n`,
        stderr: ctx.stderr,
      };
    }
    if (err instanceof StoreOpenError) return failure(line.json, new FlagwireError('STORE_UNAVAILABLE', err.message), kExitFailed);
    throw err;
  } finally {
    await ctx.close();
  }
}

/**
 * One console run: the exit status and what goes to stdout and stderr, or null for a long-running
 * command (serve). Never rejects: an unexpected error is an INTERNAL failure with its stack on stderr.
 */
export function main(argv: readonly string[], io: CliIo): Promise<Outcome | null> {
  return run(argv, io).catch((err: unknown): Outcome => {
    // A bug, not a failed command: still one JSON object for scripts, and the stack for people.
    const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
    return failure(
      wantsJson(argv),
      new FlagwireError('INTERNAL', `unexpected error: ${err instanceof Error ? err.message : String(err)}`),
      kExitFailed,
      `${text}\n`,
    );
  });
}

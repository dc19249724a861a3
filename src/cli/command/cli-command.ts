// What a command of the command line is: its shape (args.ts), what it runs and how it prints. Each
// capability declares its own (src/capability/capability.ts); the command line's index and help are
// derived from them (src/capabilities.ts).
import type { StoreReader } from '../../store/interfaces.js';
import type { WriterCommand } from '../../writer/command.js';
import { readFileSync } from 'node:fs';
import { type Args, type CommandSpec, type OptionSpec, UsageError } from './args.js';

/**
 * What a command may do: run one writer command (its own transaction), or read the store. Both wait
 * for the store to open: with PostgreSQL, its local copy is brought up to date first.
 */
export interface CliContext {
  write<I, O>(command: WriterCommand<I, O>, input: I): Promise<O>;
  read<T>(fn: (store: StoreReader) => T): Promise<T>;
  /** Start time of this run, Unix ms (what the writer commands get as `now`). */
  readonly now: number;
  /** The --data flag as given (serve passes it to loadConfig). */
  readonly dataFlag: string | undefined;
  /** The --database flag as given (serve passes it to loadConfig). */
  readonly databaseFlag: string | undefined;
  /** Standard input, where a command reads a secret (src/cli/command/read-secret.ts). */
  readonly stdin: NodeJS.ReadableStream;
  /** Says a line for people on stderr once the command ends; stdout (and --json's object) stays the same. */
  note(line: string): void;
}

export interface CliCommand<R = unknown> extends CommandSpec {
  run(args: Args, ctx: CliContext): R | Promise<R>;
  /** The text for people; the JSON output is the result itself. */
  human(result: R, now: number): string;
  /** The exit status of a run that succeeded, when not 0 (plan: 2 when the file would change something). */
  exitCode?(result: R): number;
  /** Runs until stopped by a signal (serve): nothing is printed when `run` returns. */
  longRunning?: boolean;
  /** May create a missing data directory (serve, org create); every other command refuses one. */
  createsDataDir?: boolean;
}

/** Option shapes: a string (`--name VALUE`), one that repeats, a boolean switch. */
export const str = (value: string, help: string, required = false): OptionSpec => ({ type: 'string', value, help, required });
export const many = (value: string, help: string, required = false): OptionSpec => ({
  type: 'string',
  value,
  help,
  multiple: true,
  required,
});
export const bool = (help: string): OptionSpec => ({ type: 'boolean', help });

/** `--as USER_ID` of a command that changes flags (or what a flag is changed by). */
export const kAsFlagEditor =
  'the person making the change (a user id): the audit log names them (actor user:<id>) instead of "console". They must be an Editor, Admin or Owner of the project\'s organisation, or the owner of a personal project';

/** An option whose value is JSON text; a usage error naming it when it is not. */
export function jsonOption(name: string, text: string, help: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--${name} must be JSON (${(err as Error).message})`, help);
  }
}

/** The text of an option's file (--file unless named); a usage error naming it when it cannot be read. */
export function readFileOption(args: Args, usage: string, option = 'file'): string {
  const file = args.required(option);
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read --${option} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      `Usage: flagwire ${usage}`,
    );
  }
}

/** Help for positional arguments that mean the same in every command. */
const kArgumentHelp: Readonly<Record<string, string>> = {
  ORG_ID: 'an organisation id (org_...; `flagwire org list` shows them)',
  USER_ID: 'a user id (usr_...; `flagwire user list` shows them)',
  PROJECT_ID: 'a project id (prj_...; `flagwire project list` shows them)',
  FLAG_ID: 'a flag id (flg_...; `flagwire flag list PROJECT_ID` shows them)',
  AUDIENCE_ID: 'an audience id (aud_...; `flagwire audience list PROJECT_ID` shows them)',
  TOKEN_ID: 'a token id (`flagwire token list PROJECT_ID` shows them)',
  SCHEDULE_ID: 'a scheduled change id (sch_...; `flagwire schedule list PROJECT_ID` shows them)',
  ROLLOUT_ID: 'a rollout id (rol_...; `flagwire rollout list PROJECT_ID` shows them)',
  WEBHOOK_ID: 'a webhook id (whk_...; `flagwire webhook list PROJECT_ID` shows them)',
  DELIVERY_ID: 'a delivery id (msg_...; `flagwire webhook deliveries WEBHOOK_ID` shows them)',
};

/** A table entry; ids among its positionals get the shared help unless it says otherwise. */
export function command<R>(spec: CliCommand<R>): CliCommand {
  const shared = Object.fromEntries(spec.positionals.filter((p) => Object.hasOwn(kArgumentHelp, p)).map((p) => [p, kArgumentHelp[p]!]));
  return { ...spec, argumentHelp: { ...shared, ...spec.argumentHelp } } as unknown as CliCommand;
}

// The command line's answers that need no command to run: help, the version, and usage errors (the
// exit status and output contract is atop cli.ts). They read only the commands' shapes (CommandSpec),
// so cli.ts gives them from the table the build derives (commands.json, scripts/cli-manifest.mjs)
// without loading a capability, and main.ts from the commands themselves: the same bytes either way.
import { readFileSync } from 'node:fs';
import { type CommandLine, type CommandSpec, parseCommandLine, undecodableArguments, UsageError, wantsJson } from './command/args.js';
import { renderJson } from './command/output.js';
import { errorBody, FlagwireError } from '../errors.js';

export const kExitFailed = 1;
export const kExitUsage = 2;
/** The change was held as a change request (an approval policy guards what it changes): nothing applied yet. */
export const kExitRequested = 3;

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a run reads from its process besides the arguments. */
export interface CliIo {
  /** The environment (FLAGWIRE_DATA, FLAGWIRE_DATABASE_URL). */
  env: NodeJS.ProcessEnv;
  /** The command line as the bytes given (/proc/self/cmdline), to find arguments that are not UTF-8; null where unknown. */
  commandLine: Buffer | null;
  /** Standard input (`user password` reads the password from it): the process's own, or a test's text. */
  stdin: NodeJS.ReadableStream;
}

/** A command line to run: a command, its arguments, and whether its answer is JSON. */
export type RunnableLine<S extends CommandSpec> = CommandLine<S> & { spec: S };

/** `argv` answered without running a command (help, version, a usage error), or the command line to run. */
export function answerBeforeRun<S extends CommandSpec>(
  argv: readonly string[],
  specs: readonly S[],
  io: CliIo,
): { outcome: Outcome } | { line: RunnableLine<S> } {
  let line: CommandLine<S>;
  try {
    line = parseCommandLine(argv, specs);
  } catch (err) {
    if (err instanceof UsageError) return { outcome: usageFailure(wantsJson(argv), err) };
    throw err;
  }
  if (line.version) {
    const version = packageVersion();
    return { outcome: { code: 0, stdout: line.json ? renderJson({ version }) : `flagwire ${version}\n`, stderr: '' } };
  }
  if (line.help || line.spec === null) return { outcome: { code: 0, stdout: `${line.helpText}\n`, stderr: '' } };
  const undecodable = undecodableArguments(argv, io.commandLine);
  if (undecodable.length > 0) {
    const which = undecodable.map((i) => `argument ${i + 1} ("${argv[i]}")`).join(', ');
    return {
      outcome: usageFailure(
        line.json,
        new UsageError(
          `${which} ${undecodable.length === 1 ? 'is' : 'are'} not valid UTF-8 (shown with U+FFFD for the bytes that do not decode); pass text as UTF-8 (check the encoding of the terminal or script)`,
          line.helpText,
        ),
      ),
    };
  }
  return { line: line as RunnableLine<S> };
}

export function failure(json: boolean, err: FlagwireError, code: number, stderr = ''): Outcome {
  return json
    ? { code, stdout: renderJson(errorBody(err)), stderr }
    : { code, stdout: '', stderr: `${stderr}error: ${err.title}: ${err.detail}\n` };
}

/** A setting that cannot be used (config.ts's ConfigError, by its message): exit 2, its one line on stderr. */
export function configFailure(json: boolean, message: string): Outcome {
  const stderr = `flagwire: ${message}\n`;
  return json
    ? { code: kExitUsage, stdout: renderJson(errorBody(new FlagwireError('INVALID_REQUEST', message))), stderr }
    : { code: kExitUsage, stdout: '', stderr };
}

export function usageFailure(json: boolean, err: UsageError): Outcome {
  const stderr = `flagwire: ${err.message}\n\n${err.help}\n`;
  return json
    ? { code: kExitUsage, stdout: renderJson(errorBody(new FlagwireError('INVALID_REQUEST', `usage: ${err.message}`))), stderr }
    : { code: kExitUsage, stdout: '', stderr };
}

/** The version in package.json (this file is dist/src/cli/answers.js). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

#!/usr/bin/env node
// `flagwire <command> [--data DIR] [--json]`: the console (design §3). Each command opens the store,
// runs one writer command in one transaction (or reads), closes the store and prints. LMDB serialises
// these transactions with a running server's writer, so this is safe while the server runs.
//
// Exit status and output (a public contract; scripts depend on it):
//   0  done; with --json exactly one JSON object on stdout (`plan`: nothing would change)
//   1  the command failed; with --json {"error": title, "detail": text} on stdout
//   2  usage or configuration error; help or the setting's problem on stderr (and, with --json,
//      an {"error", "detail"} object on stdout, so a script always has one object to parse);
//      `plan` also exits 2 when applying the file would change something (its plan on stdout; with
//      --json the plan object has `changed`, an error object does not)
//   3  the change was not applied: an approval policy guards what it changes, and a change request
//      now holds it (docs/approvals.md); with --json {"changeRequest": {...}} on stdout
//
// Pipelines run a command per step, so this entry loads as little as it can (docs/architecture.md,
// "The command line's start"). The bin is the build's one CommonJS file of it and what it imports at
// once (dist/src/cli/flagwire.cjs), so help and usage errors start no ES module loader; this module
// runs the same code from its modules, for whoever names it. Help, the version and usage errors are
// answered from the commands' shapes that the build derives from them (commands.json), with no
// capability loaded; a command runs from the build's bundle of main.js (bundle/main.cjs: one script V8
// caches, src/cli/bundle-script.ts), not some 300 modules; serve from its own (bundle/serve/main.js),
// whose threads run from theirs. A process given a test's own capability (FLAGWIRE_TEST_CAPABILITY) has
// commands the derived table lacks, and the capability's module shares Flagwire's modules: it runs
// main.js for all.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { CommandSpec } from './command/args.js';
import { answerBeforeRun, type CliIo, type Outcome } from './answers.js';
import { runsBundled } from './bundled.js';

type Main = typeof import('./main.js');

/** The command line as the bytes given, where the system shows them (Linux); else null. */
function commandLineBytes(): Buffer | null {
  try {
    return readFileSync('/proc/self/cmdline');
  } catch {
    return null;
  }
}

/** Answers the command line, or runs its command. */
async function run(): Promise<void> {
  const argv = process.argv.slice(2);
  const io: CliIo = {
    env: process.env,
    commandLine: commandLineBytes(),
    // On use: process.stdin makes its stream as it is first read (node:fs's streams, or node:net's for a
    // pipe), start-up CPU that only `user password` needs.
    get stdin() {
      return process.stdin;
    },
  };
  let outcome: Outcome | null;
  if (runsBundled()) {
    const specs = JSON.parse(readFileSync(new URL('./commands.json', import.meta.url), 'utf8')) as (CommandSpec & {
      longRunning?: boolean;
    })[];
    const answered = answerBeforeRun(argv, specs, io);
    if ('outcome' in answered) {
      outcome = answered.outcome;
    } else {
      // serve's settings are read before its bundle loads, from modules of their own: a bad one is answered
      // at about the cost of --help, not of loading the bundle (issue 57). Good ones are read again by serve,
      // whose start-up tries its ports before the writer and the threads start (src/server/start.ts).
      const { line } = answered;
      const problem = line.spec.name === 'serve' ? (await import('./serve-config.js')).serveConfigProblem(line, io.env) : null;
      if (problem !== null) {
        outcome = problem;
      } else {
        // Specifiers tsc does not resolve: the bundles are the build's, made after tsc. serve (the one
        // long-running command) loads the server, every route and every command: its bundle is one file.
        // Any other command runs its bundle from the bundle's CommonJS module, so that the process starts
        // no ES module loader (scripts/build-cli.mjs); the module's exports are the script's, promised.
        const serveBundle = './bundle/serve/main.js';
        const { main } = (
          line.spec.longRunning === true ? await import(serveBundle) : await createRequire(import.meta.url)('./bundle/main.cjs')
        ) as Main;
        outcome = await main(argv, io);
      }
    }
  } else {
    outcome = await (await import('./main.js')).main(argv, io);
  }
  if (outcome !== null) {
    if (outcome.stderr !== '') process.stderr.write(outcome.stderr);
    if (outcome.stdout !== '') process.stdout.write(outcome.stdout);
    // exitCode, not exit(): a piped stdout is flushed before the process ends.
    process.exitCode = outcome.code;
  }
}

// Not a top-level await: the build makes this module and what it imports at once one CommonJS file, the
// bin (dist/src/cli/flagwire.cjs, scripts/build-cli.mjs), and CommonJS has none. A failure still ends
// the process with its stack and exit status 1, as an unhandled rejection does.
void run();

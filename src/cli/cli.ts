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
import { readFileSync } from 'node:fs';
import { main, type Outcome } from './main.js';

/** The command line as the bytes given, where the system shows them (Linux); else null. */
function commandLineBytes(): Buffer | null {
  try {
    return readFileSync('/proc/self/cmdline');
  } catch {
    return null;
  }
}

const outcome: Outcome | null = await main(process.argv.slice(2), { env: process.env, commandLine: commandLineBytes() });
if (outcome !== null) {
  if (outcome.stderr !== '') process.stderr.write(outcome.stderr);
  if (outcome.stdout !== '') process.stdout.write(outcome.stdout);
  // exitCode, not exit(): a piped stdout is flushed before the process ends.
  process.exitCode = outcome.code;
}

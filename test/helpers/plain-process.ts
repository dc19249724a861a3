// Child processes that run as users run them: without the test runner's hooks.
//
// `npm test` runs the files as plain Node processes (scripts/run-tests.mjs), but a file may also be run
// by tap's runner (`npx tap FILE`), which starts it with its loaders in NODE_OPTIONS, and @tapjs/processinfo wraps every spawn
// of the test process to put its --import back into the child's NODE_OPTIONS, even when the test gave
// the child an environment without it (so removing it from the child's env does nothing; callers do
// not). A Node child then loads that hook first and routes every module it loads through it: each
// server start cost about 3 CPU s more (api/limits.test.ts, nine servers: 54 CPU s with the hook, 27
// without), a console run ~0.7 s instead of ~0.25 s, and nothing reads what the hook records. `env -u NODE_OPTIONS` removes the variable after the wrap has run, then execs the
// command: the child keeps env's process id, so signals, exit codes and timeouts are the command's own.

/** The file and arguments that run `file args` with no NODE_OPTIONS, whatever the runner's spawn hook adds. */
export function plain(file: string, args: readonly string[] = []): [string, string[]] {
  return ['env', ['-u', 'NODE_OPTIONS', file, ...args]];
}

/** The file and arguments that run this Node on `args` as users run it. */
export function plainNode(args: readonly string[]): [string, string[]] {
  return plain(process.execPath, args);
}

// Module hooks (node:module register) that name every module a process loads on its stderr, one
// `loaded URL` line each (a built-in's URL is node:NAME): test/cli/cli-start.test.ts runs the command
// line with them (`node --import module-log.js cli.js ...`) to see what a command loads.
export async function load(url: string, context: unknown, next: (url: string, context: unknown) => Promise<unknown>): Promise<unknown> {
  process.stderr.write(`loaded ${url}\n`);
  return next(url, context);
}

// serve's settings as its command line and environment give them: read by the command itself
// (commands.ts) and, first, by the command line's entry (cli.ts), which answers a bad one before it loads
// serve's bundle: that costs about what `flagwire --help` does, not the server's modules as well
// (issue 57). A port that cannot be bound is start-up's to refuse, before the writer and the threads
// start (src/server/start.ts): tried here too, it spared that failure the bundle's load but cost every
// good start node:net's first use on the main thread.
import type { CommandLine } from './command/args.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { configFailure, type Outcome } from './answers.js';

type ServeLine = Pick<CommandLine, 'args' | 'data' | 'database'>;

export function serveConfig(line: ServeLine, env: NodeJS.ProcessEnv): Readonly<Config> {
  const { args } = line;
  return loadConfig(
    {
      port: args.string('port'),
      host: args.string('host'),
      data: line.data,
      database: line.database,
      flagsFile: args.string('flags-file'),
      flagsProject: args.string('flags-project'),
      upstream: args.string('upstream'),
      upstreamToken: args.string('upstream-token'),
    },
    env,
  );
}

/**
 * serve's answer to a setting it cannot use (exit 2, as the command itself gives it), or null: the
 * settings can be used (a port they name may still be taken: start-up refuses it), or their problem is
 * not a setting's, and serve itself reports it.
 */
export function serveConfigProblem(line: ServeLine & Pick<CommandLine, 'json'>, env: NodeJS.ProcessEnv): Outcome | null {
  try {
    serveConfig(line, env);
    return null;
  } catch (err) {
    return err instanceof ConfigError ? configFailure(line.json, err.message) : null;
  }
}

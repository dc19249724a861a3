// serve's settings as its command line and environment give them: read by the command itself
// (commands.ts) and, first, by the command line's entry (cli.ts), which answers a bad one, or a port that
// cannot be bound, before it loads serve's bundle: that costs about what `flagwire --help` does
// (0.15 CPU s), not the server's modules as well (0.33 CPU s, a taken port 0.41: issue 57).
import type { CommandLine } from '../cli-command/args.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { bindProblem } from '../server/bind-problem.js';
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
 * serve's answer to a setting it cannot use or a port it cannot bind (exit 2, as the command itself
 * gives it), or null: the settings can be used and the port bound (start-up binds it later: a port taken
 * in between is refused then), or their problem is not a setting's, and serve itself reports it.
 */
export async function serveConfigProblem(line: ServeLine & Pick<CommandLine, 'json'>, env: NodeJS.ProcessEnv): Promise<Outcome | null> {
  try {
    const config = serveConfig(line, env);
    const problem = config.port === 0 ? null : await bindProblem(config.host, config.port);
    return problem === null ? null : configFailure(line.json, problem.message);
  } catch (err) {
    return err instanceof ConfigError ? configFailure(line.json, err.message) : null;
  }
}

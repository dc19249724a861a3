// The command line's index: its own two commands (serve, migrate-to-postgres) around every capability's
// (src/capabilities.ts). Each entry is a command line shape (args.ts), what it runs (one writer command
// in one transaction, or a store read) and how it prints for people (output.ts); the --json output is
// the returned value itself.
import { kCapabilityList, kStoreLayout } from '../capabilities.js';
import { type Capability, loadPart } from '../capability/capability.js';
import { bool, command, type CliCommand, str } from './command/cli-command.js';
import { UsageError } from './command/args.js';

/** `serve`: first in the index, before every capability's commands. */
const kServe = command({
  name: 'serve',
  usage: 'serve [--port N] [--host H] [--demo] [--flags-file PATH --flags-project PROJECT_ID] [--upstream URL --upstream-token SECRET]',
  summary: 'run the service (FLAGWIRE_PORT, default 8080; FLAGWIRE_HOST, default 127.0.0.1); --demo seeds an empty data dir',
  positionals: [],
  options: {
    port: str('N', 'the port to listen on (overrides FLAGWIRE_PORT; default 8080; 0 picks a free one)'),
    host: str('H', 'the address to listen on (overrides FLAGWIRE_HOST; default 127.0.0.1)'),
    demo: bool('seed demo data into an empty data dir and print its ids and token secrets once (npm start uses it)'),
    'flags-file': str(
      'PATH',
      'follow this Flagwire flag file: applied at start and on every change, as `apply --prune` (overrides FLAGWIRE_FLAGS_FILE)',
    ),
    'flags-project': str('PROJECT_ID', 'the project the flag file sets (overrides FLAGWIRE_FLAGS_PROJECT)'),
    upstream: str(
      'URL',
      'run as a read-only relay of the Flagwire node at URL, its HTTP base URL (overrides FLAGWIRE_UPSTREAM_URL; not with --database)',
    ),
    'upstream-token': str('SECRET', 'the relay key made on the upstream, fwr_... (overrides FLAGWIRE_UPSTREAM_TOKEN)'),
  },
  createsDataDir: true,
  longRunning: true,
  async run(args, ctx) {
    // Loaded only here: the other commands never pay for uWebSockets.js and the worker pool.
    const [{ serveConfig }, { startServer }] = await Promise.all([import('./serve-config.js'), import('../server/start.js')]);
    const config = serveConfig({ args, data: ctx.dataFlag, database: ctx.databaseFlag }, process.env);
    await startServer(config, { demo: args.flag('demo'), handleSignals: true });
    return null;
  },
  human: () => '',
});

/** The command line's commands not (yet) declared by a capability. */

/** `migrate-to-postgres`: last in the index, after every capability's commands. */
const kMigrate = command({
  name: 'migrate-to-postgres',
  usage: 'migrate-to-postgres --database URL [--data DIR]',
  summary: 'copy this data dir into an empty PostgreSQL database, which becomes the system of record -> {revision, records}',
  positionals: [],
  options: {},
  notes:
    "Refused while a server serves the data dir (a change it made during the copy would stay behind): stop it first. A database that already holds Flagwire data is refused. The data dir becomes that database's copy: start the node on it with --database URL.",
  async run(_args, ctx) {
    const [{ resolveDatabaseUrl, resolveDataDir }, { migrateToPostgres }] = await Promise.all([
      import('../config.js'),
      import('../store/open-store.js'),
    ]);
    const databaseUrl = resolveDatabaseUrl(ctx.databaseFlag);
    if (databaseUrl === null)
      throw new UsageError(
        'missing --database (or FLAGWIRE_DATABASE_URL)',
        'Usage: flagwire migrate-to-postgres --database URL [--data DIR]',
      );
    return migrateToPostgres(resolveDataDir(ctx.dataFlag, process.env, false), kStoreLayout, databaseUrl);
  },
  human: (result: { revision: number; records: number }) =>
    `Copied ${result.records} records into PostgreSQL (revision ${result.revision}); this data directory is now its copy: start nodes with --database.`,
});

/** The command line's commands: serve, then each capability's in the order given, then migrate-to-postgres. */
export async function cliCommands(capabilities: readonly Capability[]): Promise<readonly CliCommand[]> {
  return [kServe, ...(await loadPart(capabilities, 'cli')).flatMap((commands) => commands ?? []), kMigrate];
}

/**
 * Every command of the command line, the capabilities' in the order src/capabilities.ts lists them:
 * loaded when this module loads (the command line's own, OnUse: src/capability/capability.ts).
 */
export const kCliCommands: readonly CliCommand[] = await cliCommands(kCapabilityList);

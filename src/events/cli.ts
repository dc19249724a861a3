// The command line's events commands (docs/cli.md: Events): a project's events settings shown and
// changed (through the writer, audited as the console or --as's user), and its raw events exported to
// a file, read from the data dir's tally file directly (LMDB lets this process read it beside a
// running server), or with --database from PostgreSQL's tally, where every node keeps them.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { principalOf } from '../actor/audit-actor.js';
import { type CliCommand, command, str } from '../cli/command/cli-command.js';
import { FlagwireError } from '../errors.js';
import { resolveDatabaseUrl, resolveDataDir } from '../config.js';
import { requireProject } from '../model/records/lookups.js';
import { jsonBody } from '../model/request-body.js';
import { type RawEventPages, TallyFile } from './tally/tally-file.js';
import { exportFormat, jsonLines, localJsonLines, parquet, parquetWriter, timeParam } from './export.js';
import { ExportScratch } from './export-scratch.js';
import { type EventSettings, kMaxRetentionDays } from './schemas.js';
import { eventSettingsOf } from './settings-commands.js';
import { kEventCommands } from './command-table.js';

const kAsAdmin = 'the person changing it (a user id), an Admin or Owner of the organisation; left out, the operator';

const renderSettings = (settings: EventSettings): string =>
  settings.rawEventRetentionDays === null
    ? 'Raw events are not kept (only the statistics).'
    : `Raw events are kept for ${settings.rawEventRetentionDays} days.`;

interface Exported {
  out: string;
  format: string;
  bytes: number;
}

export const kEventsCli: readonly CliCommand[] = [
  command({
    name: 'events settings',
    usage: 'events settings PROJECT_ID [--raw-retention-days N|off] [--as USER_ID]',
    summary: "show or change a project's events settings: how many days its raw events are kept -> {rawEventRetentionDays}",
    positionals: ['PROJECT_ID'],
    options: {
      'raw-retention-days': str('N|off', `keep each counted event as received for N days (1 to ${kMaxRetentionDays}); off keeps none`),
      as: str('USER_ID', kAsAdmin),
    },
    run: (args, ctx) => {
      const projectId = args.positional('PROJECT_ID');
      const days = args.string('raw-retention-days');
      if (days === undefined) return ctx.read((r) => eventSettingsOf(requireProject(r, projectId)));
      if (days !== 'off' && !/^[0-9]+$/.test(days))
        throw new FlagwireError('INVALID_REQUEST', `--raw-retention-days must be a number of days or off, not "${days}"`);
      const body = { rawEventRetentionDays: days === 'off' ? null : Number(days) };
      return ctx.write(kEventCommands.eventSettingsSet, {
        principal: principalOf(args.string('as')),
        projectId,
        received: jsonBody(JSON.stringify(body)),
      });
    },
    human: renderSettings,
  }),
  command({
    name: 'events export',
    usage: 'events export PROJECT_ID --out FILE [--env NAME] [--from TIME] [--to TIME] [--format jsonl|parquet]',
    summary:
      "write a project environment's raw events stored from --from to before --to to a file, as JSON lines or Parquet -> {out, format, bytes}",
    positionals: ['PROJECT_ID'],
    options: {
      out: str('FILE', 'the file to write (replaced if it exists)', true),
      env: str('NAME', 'the environment: required on a multi-environment project'),
      from: str('TIME', 'the earliest time of storing, Unix ms or ISO 8601 (default: the first)'),
      to: str('TIME', 'the time of storing to stop before, Unix ms or ISO 8601 (default: now)'),
      format: str('FORMAT', 'jsonl (the default) or parquet'),
    },
    run: async (args, ctx): Promise<Exported> => {
      const project = await ctx.read((r) => requireProject(r, args.positional('PROJECT_ID')));
      const env = args.string('env');
      if (project.kind === 'single' ? env !== undefined : env === undefined || !project.environments.includes(env))
        throw new FlagwireError(
          'INVALID_REQUEST',
          project.kind === 'single'
            ? 'a single-environment project has no environments: leave --env out'
            : `--env must name one of ${project.environments.join(', ')}`,
        );
      const format = exportFormat(args.string('format'));
      // Still exported: events kept before retention was turned off stay until their own expiry.
      if (eventSettingsOf(project).rawEventRetentionDays === null)
        ctx.note(
          `project ${project.id} keeps no raw events (retention is off): this export has only those kept before it was turned off; keep them with \`flagwire events settings ${project.id} --raw-retention-days N\``,
        );
      const range = {
        from: timeParam('--from', args.string('from'), 0),
        to: timeParam('--to', args.string('to'), ctx.now + 1),
        now: ctx.now,
      };
      const dataDir = resolveDataDir(ctx.dataFlag, process.env, false);
      const pages = await rawPages(dataDir, resolveDatabaseUrl(ctx.databaseFlag, process.env));
      const scope = { projectId: project.id, environment: env ?? '' };
      const out = args.required('out');
      if (format === 'parquet') await parquetWriter();
      try {
        const lines = pages === null ? null : localJsonLines(pages);
        const chunks = format === 'jsonl' ? jsonLines(lines, scope, range) : parquet(lines, scope, range, new ExportScratch(dataDir));
        return { out, format, bytes: await writeChunks(out, chunks) };
      } finally {
        await pages?.close();
      }
    },
    human: (result: Exported) => `Wrote ${result.bytes} bytes of ${result.format} to ${result.out}.`,
  }),
];

/**
 * Where the export reads: PostgreSQL's tally (one connection; its client loaded only here), or the
 * data dir's tally file, null when it has none (nothing was ever counted there).
 */
async function rawPages(dataDir: string, databaseUrl: string | null): Promise<(RawEventPages & { close(): Promise<void> }) | null> {
  if (databaseUrl !== null) return (await import('./tally/pg-tally.js')).PgTally.open(databaseUrl, 1);
  return TallyFile.exists(dataDir) ? TallyFile.open(dataDir) : null;
}

/** Writes `chunks` to `path` as they come; returns how many bytes. */
async function writeChunks(path: string, chunks: AsyncIterable<Uint8Array>): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  for await (const chunk of chunks) {
    bytes += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
  return bytes;
}

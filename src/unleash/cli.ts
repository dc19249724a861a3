// The command line's `flagwire import unleash` (issue 60, item 4; docs/unleash-migration.md): an Unleash
// instance read (import-reader.ts), planned into the organisation's projects (import-plan.ts) and, with
// --apply, applied in one writer command (import-commands.ts).
import { readFileSync } from 'node:fs';
import { UsageError } from '../cli/command/args.js';
import { principalOf } from '../actor/audit-actor.js';
import { bool, command, kAsFlagEditor, many, str, type CliCommand } from '../cli/command/cli-command.js';
import { FlagwireError } from '../errors.js';
import { importInput } from './import-commands.js';
import { kUnleashImportCommands } from './command-table.js';
import { importPlan } from './import-plan.js';
import { readExportFiles, readUnleashApi } from './import-reader.js';
import { type ImportOutcome, renderImport } from './import-text.js';

const kUsage = 'import unleash --org ORG_ID (--url URL --token TOKEN | --file EXPORT_FILE...) [--apply [--skip-refused]] [--as USER_ID]';

function readFiles(paths: readonly string[]) {
  return paths.map((name) => {
    try {
      return { name, text: readFileSync(name, 'utf8') };
    } catch (err) {
      throw new UsageError(
        `cannot read --file ${name}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        `Usage: flagwire ${kUsage}`,
      );
    }
  });
}

export const kUnleashCli: readonly CliCommand[] = [
  command({
    name: 'import unleash',
    usage: kUsage,
    summary:
      "plan (and with --apply, make) an Unleash instance's projects, environments and flags as the organisation's projects; every flag that would not answer as it does in Unleash named with why -> {plan, applied}",
    positionals: [],
    options: {
      org: str('ORG_ID', 'the organisation the projects are made in (a project of the same name is updated)', true),
      url: str('URL', "a running Unleash's address, without /api (its admin API is read)"),
      token: str('TOKEN', 'an admin API token of that Unleash'),
      file: many('EXPORT_FILE', "Unleash's feature export of one environment (repeat, one file per environment)"),
      apply: bool('apply the plan, all of it or nothing'),
      as: str('USER_ID', `${kAsFlagEditor}; making a project needs an Admin or Owner`),
      'skip-refused': bool(
        'with --apply: apply without the flags that cannot be carried (otherwise nothing is applied while there are any)',
      ),
    },
    notes:
      'Nothing is applied without --apply. Exit status 0: nothing to change; 2: a plan with changes (as `flagwire plan`). docs/unleash-migration.md says what is carried and what is not.',
    async run(args, ctx): Promise<ImportOutcome> {
      const usage = `Usage: flagwire ${kUsage}`;
      const url = args.string('url');
      const files = args.all('file');
      if ((url === undefined) === (files === undefined)) throw new UsageError('give exactly one of --url (with --token) and --file', usage);
      if (url !== undefined && args.string('token') === undefined) throw new UsageError('--url needs --token, an admin API token', usage);
      if (args.flag('skip-refused') && !args.flag('apply')) throw new UsageError('--skip-refused goes with --apply', usage);
      const source = url !== undefined ? await readUnleashApi(url, args.string('token')!) : readExportFiles(readFiles(files!));
      const orgId = args.required('org');
      const plan = await ctx.read((r) => importPlan(r, source, orgId));
      if (!args.flag('apply')) return { plan, applied: null };
      if (plan.refused.length > 0 && !args.flag('skip-refused'))
        throw new FlagwireError(
          'INVALID_REQUEST',
          `Nothing was applied: ${plan.refused.length} flag(s) cannot be carried (${plan.refused.map((f) => `${f.project}/${f.flag}`).join(', ')}); run without --apply to see why, or add --skip-refused to import the others.`,
        );
      const applied = await ctx.write(kUnleashImportCommands.unleashImport, importInput(plan, principalOf(args.string('as'))));
      return { plan, applied: applied.projects };
    },
    human: renderImport,
    exitCode: (outcome: ImportOutcome) => (outcome.applied === null && outcome.plan.projects.some((p) => p.changes.length > 0) ? 2 : 0),
  }),
];

// The command line's flags as code (docs/flags-as-code.md): export, plan, apply.
import { writeFileSync } from 'node:fs';
import { principalOf } from '../actor/audit-actor.js';
import { type Args, UsageError } from '../cli/command/args.js';
import { bool, command, kAsFlagEditor, readFileOption, str, type CliCommand } from '../cli/command/cli-command.js';
import { requireProject } from '../model/records/lookups.js';
import { jsonBody } from '../model/request-body.js';
import { type ApplyConditions, flagsPlan } from './apply-commands.js';
import { kFlagSetReadCommands } from '../flags/records/flag-set-read-commands.js';
import { kFlagsAsCodeCommands } from './command-table.js';
import { type ExportFormat, exportProject, kExportFormats } from './export.js';
import { fileText } from './flag-file.js';
import { renderApplied, renderPlan } from './plan-text.js';
import { savedPlanConditions } from './saved-plan.js';
import type { PlanResult } from './schemas.js';

const kExportUsage = 'export PROJECT_ID [--format flagwire|flagd] [--env NAME]';
const kPlanUsage = 'plan PROJECT_ID --file FILE [--prune] [--out PLAN_FILE]';
const kApplyUsage = 'apply PROJECT_ID --file FILE [--prune] [--if-revision N | --plan PLAN_FILE] [--as USER_ID]';

/** apply's conditions: `--if-revision N`, or a saved plan's revision and digest (`--plan PLAN_FILE`). */
function applyConditions(args: Args, projectId: string): ApplyConditions {
  const usage = `Usage: flagwire ${kApplyUsage}`;
  const revision = args.string('if-revision');
  if (args.string('plan') !== undefined) {
    if (revision !== undefined) throw new UsageError('--plan already names the revision: leave out --if-revision', usage);
    const saved = savedPlanConditions(readFileOption(args, kApplyUsage, 'plan'), projectId);
    if (!saved.ok) throw new UsageError(`--plan ${args.string('plan')} ${saved.problem}`, usage);
    return saved.conditions;
  }
  if (revision !== undefined && !/^\d+$/.test(revision))
    throw new UsageError(`--if-revision must be a revision number (from \`flagwire plan\`), not "${revision}"`, usage);
  return { ifProjectRevision: revision === undefined ? null : Number(revision), ifPlan: null };
}

export const kFlagsAsCodeCli: readonly CliCommand[] = [
  command({
    name: 'export',
    usage: kExportUsage,
    summary: "write a project's flags, audiences and environments as a file (Flagwire's format, or flagd's) -> the file",
    positionals: ['PROJECT_ID'],
    options: {
      format: str(
        'flagwire|flagd',
        'flagwire (default): everything, applies back with `flagwire apply`; flagd: each flag as the sync service serves it, those flagd cannot say exactly named in x-flagwire-omitted',
      ),
      env: str('NAME', "flagd's format of a multi-environment project: the environment to export (flagd has none)"),
    },
    notes: 'The same project state always gives the same bytes: commit the file, and `flagwire plan` shows what changed since.',
    async run(args, ctx) {
      const format = args.string('format') ?? 'flagwire';
      if (!(kExportFormats as readonly string[]).includes(format))
        throw new UsageError(`--format must be flagwire or flagd, not "${format}"`, `Usage: flagwire ${kExportUsage}`);
      const env = args.string('env') ?? null;
      const { projectId, document } = await ctx.read((r) => {
        const project = requireProject(r, args.positional('PROJECT_ID'));
        return { projectId: project.id, document: exportProject(r, project, { format: format as ExportFormat, env }, 'console', ctx.now) };
      });
      // A flagd file may be served by a stock flagd that reports nothing: a read of the set it holds.
      if (format === 'flagd')
        await ctx.write(kFlagSetReadCommands.recordFlagSetReads, { reads: [{ projectId, environment: env, at: ctx.now }] });
      return document;
    },
    human: (document: Record<string, unknown>) => fileText(document).trimEnd(),
  }),
  command({
    name: 'plan',
    usage: kPlanUsage,
    summary:
      'what applying a flag file would change, field by field; exit status 0: nothing, 2: something (drift) -> {projectId, revision, changed, changes, digest, notInFile, ignored}',
    positionals: ['PROJECT_ID'],
    options: {
      file: str('FILE', 'a Flagwire flag file (as `flagwire export` writes it)', true),
      prune: bool('also plan to delete the flags the file does not name'),
      out: str('PLAN_FILE', 'also save the plan there, as --json prints it, for `flagwire apply --plan PLAN_FILE`'),
    },
    notes:
      'The plan names the revision it was made at: `flagwire apply --if-revision N` applies only if the project has not changed since; `apply --plan PLAN_FILE` applies the saved plan and no other.',
    async run(args, ctx) {
      const result = await ctx.read((r) =>
        flagsPlan(r, { projectId: args.positional('PROJECT_ID'), document: readFileOption(args, kPlanUsage), prune: args.flag('prune') }),
      );
      const saveTo = args.string('out');
      if (saveTo !== undefined) {
        try {
          writeFileSync(saveTo, `${JSON.stringify(result, null, 2)}\n`);
        } catch (err) {
          throw new UsageError(
            `cannot write --out ${saveTo}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
            `Usage: flagwire ${kPlanUsage}`,
          );
        }
      }
      return result;
    },
    human: renderPlan,
    exitCode: (result: PlanResult) => (result.changed ? 2 : 0),
  }),
  command({
    name: 'apply',
    usage: kApplyUsage,
    summary:
      'make a project what a flag file says, all or nothing, each change audited -> {projectId, revision, changed, changes, digest, notInFile, ignored}',
    positionals: ['PROJECT_ID'],
    options: {
      file: str('FILE', 'a Flagwire flag file (as `flagwire export` writes it)', true),
      prune: bool('also delete the flags the file does not name'),
      'if-revision': str('N', 'refuse (nothing applied) unless the project is still at revision N, the one `flagwire plan` showed'),
      plan: str(
        'PLAN_FILE',
        'a plan saved by `flagwire plan --out` (or --json, or the API): refuse (nothing applied) unless the project is still at its revision and the file makes exactly its changes',
      ),
      as: str('USER_ID', kAsFlagEditor),
    },
    notes:
      'Applying the same file again changes nothing and writes no audit entry. A refused file names the place in it, and nothing is written. ' +
      'With --as, flag changes need the Editor role (or higher); adding environments and defining audiences need Admin or Owner.',
    run(args, ctx) {
      const projectId = args.positional('PROJECT_ID');
      return ctx.write(kFlagsAsCodeCommands.flagsApply, {
        principal: principalOf(args.string('as')),
        projectId,
        received: jsonBody(readFileOption(args, kApplyUsage)),
        prune: args.flag('prune'),
        ...applyConditions(args, projectId),
      });
    },
    human: renderApplied,
  }),
];

// The command line's experiment commands (docs/cli.md): create, list, show, start, stop, results. A
// plan is sent as the Management API's body would carry it, so every refusal reads as the API's; the
// results are computed from this data directory's tally file, as the API's are from the node's.
import { principalOf } from '../actor/audit-actor.js';
import { UsageError } from '../cli/command/args.js';
import { command, type CliCommand, kAsFlagEditor, many, str } from '../cli/command/cli-command.js';
import { formatTime, renderTable } from '../cli/command/output.js';
import { resolveDataDir, resolveDatabaseUrl } from '../config.js';
import { FlagwireError } from '../errors.js';
import { statisticsView } from '../events/statistics.js';
import { resolveEnvParam } from '../model/environments.js';
import { requireProject } from '../model/records/lookups.js';
import { jsonBody } from '../model/request-body.js';
import type { StoreReader } from '../store/interfaces.js';
import { TallyFile } from '../events/tally/tally-file.js';
import { kExperimentCommands } from './command-table.js';
import { experimentNotFound, experimentView } from './experiment-commands.js';
import { getExperiment, listExperiments } from './records.js';
import { experimentResultsView, hasTypedVariants, lookOf } from './results-view.js';
import type { ExperimentBody, ExperimentResultsBody } from './schemas.js';

const kCreateUsage =
  'experiment create PROJECT_ID KEY --flag FLAG_ID --variant NAME=WEIGHT... --control NAME --metric EVENT:KIND... --primary EVENT --planned N [--alpha A] [--env NAME] [--as USER_ID]';
const kKeyHelp = { KEY: "the experiment's key: what its flag state carries as `experiment` and its events are counted under" };
const kEnv = str('NAME', 'multi-environment project: the environment (required there)');

function renderExperiment(e: ExperimentBody): string {
  const where = e.environment === null ? '' : ` in ${e.environment}`;
  const arms = e.variants.map((v) => `${v.variant}=${v.weight}${v.variant === e.control ? ' (control)' : ''}`).join(', ');
  const metrics = e.metrics.map((m) => `${m.metric}:${m.kind}${m.metric === e.primaryMetric ? ' (primary)' : ''}`).join(', ');
  return `Experiment ${e.key}${where}, ${e.status} (started ${formatTime(e.startedAt)}, stopped ${formatTime(e.stoppedAt)}) on flag ${e.flagId}
Arms: ${arms}
Metrics: ${metrics}
Planned subjects: ${e.plannedSubjects}; alpha ${e.alpha}; lowest sample-ratio p-value ${e.lowestSrmPValue}`;
}

function renderResults(r: ExperimentResultsBody): string {
  const srm = `Sample ratio: ${r.srm.verdict} (p = ${r.srm.pValue.toPrecision(3)}; observed ${r.srm.observed.map((x) => x.toFixed(3)).join(' / ')}, planned ${r.srm.planned.map((x) => x.toFixed(3)).join(' / ')})`;
  const rows = r.comparisons.map((c) => [c.metric, c.variant, c.decision, c.verdict]);
  return `${renderExperiment(r.experiment)}\n${srm}\n${renderTable(['METRIC', 'VARIANT', 'DECISION', 'VERDICT'], rows)}\n${r.srm.sentence}`;
}

/** `--variant on=50`: an arm and its weight, as the API's body names them. */
function parseArm(text: string): { variant: string; weight: number } {
  const at = text.lastIndexOf('=');
  if (at <= 0) throw new UsageError(`--variant must be NAME=WEIGHT (got "${text}")`, `Usage: flagwire ${kCreateUsage}`);
  return { variant: text.slice(0, at), weight: Number(text.slice(at + 1)) };
}

/** `--metric checkout:conversion`: a tracked event and how it counts. */
function parseMetric(text: string): { metric: string; kind: string } {
  const at = text.lastIndexOf(':');
  if (at <= 0)
    throw new UsageError(`--metric must be EVENT:KIND, KIND conversion or mean (got "${text}")`, `Usage: flagwire ${kCreateUsage}`);
  return { metric: text.slice(0, at), kind: text.slice(at + 1) };
}

function readExperiment(r: StoreReader, projectId: string, env: string | null, key: string) {
  const project = requireProject(r, projectId);
  const resolved = resolveEnvParam(project, env, true, 'list');
  const experiment = getExperiment(r, project.id, resolved, key);
  if (experiment === undefined) throw experimentNotFound(key);
  return experiment;
}

const keyCommand = (name: 'start' | 'stop', summary: string) =>
  command({
    name: `experiment ${name}`,
    usage: `experiment ${name} PROJECT_ID KEY [--env NAME] [--as USER_ID]`,
    summary,
    positionals: ['PROJECT_ID', 'KEY'],
    argumentHelp: kKeyHelp,
    options: { env: kEnv, as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(name === 'start' ? kExperimentCommands.experimentStart : kExperimentCommands.experimentStop, {
        principal: principalOf(args.string('as')),
        projectId: args.positional('PROJECT_ID'),
        env: args.string('env') ?? null,
        key: args.positional('KEY'),
      }),
    human: renderExperiment,
  });

export const kExperimentCli: readonly CliCommand[] = [
  command({
    name: 'experiment create',
    usage: kCreateUsage,
    summary: 'make an experiment on a flag (not started): its arms, control, metrics and planned size -> the experiment',
    positionals: ['PROJECT_ID', 'KEY'],
    argumentHelp: kKeyHelp,
    options: {
      flag: str('FLAG_ID', 'the flag it runs on', true),
      variant: many(
        'NAME=WEIGHT',
        "an arm: a variant the flag answers (a boolean flag's on or off) and its planned weight; two or more",
        true,
      ),
      control: str('NAME', 'the arm the others are compared with', true),
      metric: many('EVENT:KIND', "a tracked event and how it counts: conversion, or mean (of each subject's total)", true),
      primary: str('EVENT', 'the metric the experiment decides on', true),
      planned: str('N', 'subjects planned over every arm', true),
      alpha: str('A', 'the error rate of every interval and test (default 0.05)'),
      env: kEnv,
      as: str('USER_ID', kAsFlagEditor),
    },
    run: (args, ctx) => {
      const alpha = args.string('alpha');
      const body = {
        key: args.positional('KEY'),
        flagId: args.required('flag'),
        variants: (args.all('variant') ?? []).map(parseArm),
        control: args.required('control'),
        metrics: (args.all('metric') ?? []).map(parseMetric),
        primaryMetric: args.required('primary'),
        plannedSubjects: Number(args.required('planned')),
        ...(alpha === undefined ? {} : { alpha: Number(alpha) }),
      };
      return ctx.write(kExperimentCommands.experimentCreate, {
        principal: principalOf(args.string('as')),
        projectId: args.positional('PROJECT_ID'),
        env: args.string('env') ?? null,
        received: jsonBody(JSON.stringify(body)),
      });
    },
    human: renderExperiment,
  }),
  command({
    name: 'experiment list',
    usage: 'experiment list PROJECT_ID [--env NAME]',
    summary: "a project environment's experiments, by key -> {experiments: [...]}",
    positionals: ['PROJECT_ID'],
    options: { env: kEnv },
    run: (args, ctx) =>
      ctx.read((r) => {
        const project = requireProject(r, args.positional('PROJECT_ID'));
        const env = resolveEnvParam(project, args.string('env') ?? null, true, 'list');
        return { experiments: listExperiments(r, project.id, env).map(experimentView) };
      }),
    human: (result: { experiments: ExperimentBody[] }) =>
      result.experiments.length === 0
        ? 'No experiments.'
        : renderTable(
            ['KEY', 'STATUS', 'FLAG', 'PRIMARY', 'STARTED'],
            result.experiments.map((e) => [e.key, e.status, e.flagId, e.primaryMetric, formatTime(e.startedAt)]),
          ),
  }),
  command({
    name: 'experiment show',
    usage: 'experiment show PROJECT_ID KEY [--env NAME]',
    summary: 'an experiment: its plan, status and sample-ratio history -> the experiment',
    positionals: ['PROJECT_ID', 'KEY'],
    argumentHelp: kKeyHelp,
    options: { env: kEnv },
    run: (args, ctx) =>
      ctx.read((r) => experimentView(readExperiment(r, args.positional('PROJECT_ID'), args.string('env') ?? null, args.positional('KEY')))),
    human: renderExperiment,
  }),
  keyCommand(
    'start',
    "start an experiment: its flag's state takes its key, so exposures are counted (refused where the environment is guarded) -> the experiment",
  ),
  keyCommand('stop', "stop an experiment: its flag's state drops its key; its statistics are kept -> the experiment"),
  command({
    name: 'experiment results',
    usage: 'experiment results PROJECT_ID KEY [--env NAME]',
    summary:
      "an experiment's results from this data directory's counted events: effects with always-valid intervals, verdicts, the sample-ratio check -> the results",
    positionals: ['PROJECT_ID', 'KEY'],
    argumentHelp: kKeyHelp,
    options: { env: kEnv },
    async run(args, ctx) {
      if (resolveDatabaseUrl(ctx.databaseFlag, process.env) !== null)
        throw new FlagwireError(
          'NOT_FOUND',
          "This command reads the data directory's tally file; with PostgreSQL the counts are in the database: read the results through the API (GET /api/v1/experiments/{key}/results).",
        );
      const { experiment, typed } = await ctx.read((r) => {
        const found = readExperiment(r, args.positional('PROJECT_ID'), args.string('env') ?? null, args.positional('KEY'));
        return { experiment: found, typed: hasTypedVariants(r, found) };
      });
      const tally = TallyFile.open(resolveDataDir(ctx.dataFlag, process.env, false));
      const scope = { projectId: experiment.projectId, environment: experiment.environment ?? '' };
      let view: ExperimentResultsBody;
      try {
        view = experimentResultsView(
          experiment,
          statisticsView(experiment.key, experiment.environment, tally.experiment(scope, experiment.key)),
          typed,
        );
      } finally {
        await tally.close();
      }
      const look = lookOf(experiment, view, ctx.now);
      if (look !== null) await ctx.write(kExperimentCommands.experimentLook, look);
      return view;
    },
    human: renderResults,
  }),
];

// The flags capability's command-line commands (src/capability/capability.ts): create, list, stale,
// show, rename, describe, tags, cohorts, variants and delete a flag, its lifecycle, archive and restore.
import { principalOf } from '../actor/audit-actor.js';
import { type Args, splitList, UsageError } from '../cli/command/args.js';
import { bool, command, type CliCommand, jsonOption, kAsFlagEditor, many, str } from '../cli/command/cli-command.js';
import * as flagOut from './cli-output.js';
import { isStale, kDefaultStaleDays, kFlagTypes, kMaxStaleDays, staleBefore, type Flag } from '../model/flags.js';
import { kLifecycleStages, stageParam } from './lifecycle.js';
import { flagLifecycle, projectLifecycle } from './lifecycle-facts.js';
import type { FlagLifecycle } from './lifecycle-shapes.js';
import { requireProject } from '../model/records/lookups.js';
import { requireFlag } from './flag-lookups.js';
import type { Project } from '../model/projects.js';
import { representFlag } from './representation.js';
import type { EnvironmentsFlag, FlatFlag } from './representation-shapes.js';
import type { StoreReader } from '../store/interfaces.js';
import { kFlagCommands } from './command-table.js';
import { getUsage, listFlags } from './records/flag-store.js';
import { flagEtag } from './flag-version.js';

/** Every flag edit's precondition (flag-version.ts): the version `flag version` printed. */
const kIfVersion = str(
  'ETAG',
  'the version you read (`flag version`, or the ETag a GET answered): refused, and nothing changed, if the flag has changed since',
);

const kFlagCreateUsage =
  'flag create PROJECT_ID --name NAME [--enabled] [--percentage N] [--env NAME]... [--bucketing modulo|fractional] [--type TYPE] [--owner NAME] [--lifetime DAYS|permanent] [--as USER_ID]';
const kFlagVariantsUsage =
  'flag variants FLAG_ID [--variants JSON] [--default-variant NAME] [--targeting JSON] [--metadata JSON] [--env NAME] [--if-version ETAG] [--as USER_ID]';

type FlagView = FlatFlag | EnvironmentsFlag;

interface StaleFlags {
  days: number;
  /** The cut-off, Unix ms: evaluated last before it (or never, and created before it). */
  before: number;
  flags: FlagView[];
}

/** The Management API's representation of a flag (a group flag in its environments form). */
function flagView(r: StoreReader, flag: Flag): FlagView {
  return representFlag(flag, requireProject(r, flag.projectId), null, getUsage(r, flag.id));
}

/**
 * `flag stale`: not evaluated for `days` days, by the usage the server writes once a minute (docs/operations.md:
 * Flag usage): evaluated last before the cut-off, or never evaluated and created before it (a flag
 * created since has had no chance to be used).
 */
function staleFlags(r: StoreReader, project: Project, days: number, now: number): StaleFlags {
  const before = staleBefore(now, days);
  const flags: FlagView[] = [];
  for (const flag of listFlags(r, project.id)) {
    const usage = getUsage(r, flag.id);
    if (isStale(flag, usage, before)) flags.push(representFlag(flag, project, null, usage));
  }
  return { days, before, flags };
}

/**
 * `flag create`'s body for POST /api/v1/flags's rules. On a multi-environment project --env names the
 * environments that --enabled and --percentage set (every other environment starts off, at 0%); without
 * --env the values go at the top level, which the API's rules accept only on a single-environment project.
 */
function flagCreateBody(args: Args, help: string): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  if (args.flag('enabled')) state.enabled = true;
  const percentage = args.string('percentage');
  if (percentage !== undefined) {
    // The console converts the text; the range is the API's rule (same 400 text).
    if (!/^-?\d+(\.\d+)?$/.test(percentage)) throw new UsageError(`--percentage must be a number, not "${percentage}"`, help);
    state.trafficPercentage = Number(percentage);
  }
  const environments = args.list('env');
  const body: Record<string, unknown> = { name: args.required('name') };
  // The value as given: the API's rule names the two it takes.
  const bucketing = args.string('bucketing');
  if (bucketing !== undefined) body.bucketing = bucketing;
  Object.assign(body, lifecycleOptions(args, help, false));
  if (environments === undefined) return { ...body, ...state };
  return { ...body, environments: Object.fromEntries(environments.map((env) => [env, { ...state }])) };
}

/**
 * --type, --owner and --lifetime as the API's body takes them (the API's rules check the values): "" returns
 * one to its default where `clears` (flag lifecycle), and a number of days is sent as a number.
 */
function lifecycleOptions(args: Args, help: string, clears: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [option, key] of [
    ['type', 'type'],
    ['owner', 'owner'],
    ['lifetime', 'lifetimeDays'],
  ] as const) {
    const value = args.string(option);
    if (value === undefined) continue;
    if (value === '' && clears) out[key] = null;
    else if (key === 'lifetimeDays' && value !== 'permanent') {
      if (!/^\d+$/.test(value)) throw new UsageError(`--lifetime must be a whole number of days or "permanent", not "${value}"`, help);
      out[key] = Number(value);
    } else out[key] = value;
  }
  return out;
}

const kLifecycleOptions = {
  type: str('TYPE', `what the flag is for: ${kFlagTypes.join(', ')} (default release)`),
  owner: str('NAME', "who answers for the flag: a user's or team's name"),
  lifetime: str('DAYS', 'expected lifetime in days, or "permanent" (default: by type, release and experiment 40, others permanent)'),
};

const kFlagLifecycleUsage =
  'flag lifecycle FLAG_ID [--type TYPE] [--owner NAME] [--lifetime DAYS|permanent] [--if-version ETAG] [--as USER_ID]';

export const kFlagCli: readonly CliCommand[] = [
  command({
    name: 'flag create',
    usage: kFlagCreateUsage,
    summary: "create a flag, on any plan and on personal projects, with POST /api/v1/flags's rules -> the flag as the API shows it",
    positionals: ['PROJECT_ID'],
    options: {
      name: str('NAME', "the flag's name, unique in the project (exact)", true),
      enabled: bool('turn the flag on (default off)'),
      percentage: str(
        'N',
        'the share of traffic it is on for, 0-100 (default 0, as in the API; --percentage 100 turns it on for everyone)',
      ),
      env: many(
        'NAME',
        'multi-environment project: an environment that --enabled and --percentage apply to (repeat, or a comma list); other environments start off at 0%. Not for a single-environment project',
      ),
      bucketing: str(
        'modulo|fractional',
        "how the percentage buckets keys, fixed for the flag's life: modulo (default), design §2's public function; fractional, flagd's fractional point, for a flag served to flagd and OpenFeature in-process providers",
      ),
      ...kLifecycleOptions,
      as: str('USER_ID', kAsFlagEditor),
    },
    notes: "Refusals are the Management API's 400 texts: on a multi-environment project --enabled/--percentage need --env.",
    async run(args, ctx) {
      const body = flagCreateBody(args, `Usage: flagwire ${kFlagCreateUsage}`);
      const flag = await ctx.write(kFlagCommands.flagCreate, {
        projectId: args.positional('PROJECT_ID'),
        body,
        principal: principalOf(args.string('as')),
      });
      return ctx.read((r) => flagView(r, flag));
    },
    human: flagOut.renderFlagView,
  }),
  command({
    name: 'flag list',
    usage: 'flag list PROJECT_ID',
    summary: "a project's flags, oldest first, as the Management API shows them -> {flags}",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r): { flags: FlagView[] } => {
        const project = requireProject(r, args.positional('PROJECT_ID'));
        return { flags: listFlags(r, project.id).map((f) => representFlag(f, project, null, getUsage(r, f.id))) };
      }),
    human: (result: { flags: FlagView[] }) => flagOut.renderFlagViews(result.flags),
  }),
  command({
    name: 'flag stale',
    usage: 'flag stale PROJECT_ID [--days N]',
    summary: `a project's flags not evaluated for N days (default ${kDefaultStaleDays}), oldest first -> {days, before, flags}`,
    positionals: ['PROJECT_ID'],
    options: {
      days: str('N', `whole days without an evaluation, 1 to ${kMaxStaleDays} (default ${kDefaultStaleDays})`),
    },
    notes:
      'A flag is stale when its latest evaluation (Evaluation API or OFREP, project routes included) is older than N days, ' +
      'or when it was never evaluated and was created more than N days ago. The server writes evaluation counts once a minute.',
    run(args, ctx) {
      const days = args.integer('days', 1, kMaxStaleDays) ?? kDefaultStaleDays;
      return ctx.read((r) => staleFlags(r, requireProject(r, args.positional('PROJECT_ID')), days, ctx.now));
    },
    human: flagOut.renderStaleFlags,
  }),
  command({
    name: 'flag show',
    usage: 'flag show FLAG_ID',
    summary: 'one flag as the Management API shows it (a group flag with every environment) -> flag',
    positionals: ['FLAG_ID'],
    options: {},
    run: (args, ctx) => ctx.read((r) => flagView(r, requireFlag(r, args.positional('FLAG_ID')))),
    human: flagOut.renderFlagView,
  }),
  command({
    name: 'flag version',
    usage: 'flag version FLAG_ID',
    summary: "a flag's version, the ETag its GET answers, for an edit's --if-version -> {id, etag}",
    positionals: ['FLAG_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r) => {
        const flag = requireFlag(r, args.positional('FLAG_ID'));
        return { id: flag.id, etag: flagEtag(flag) };
      }),
    human: (result: { id: string; etag: string }) => result.etag,
  }),
  command({
    name: 'flag rename',
    usage: 'flag rename FLAG_ID NAME [--if-version ETAG] [--as USER_ID]',
    summary: 'rename a flag -> flag',
    positionals: ['FLAG_ID', 'NAME'],
    argumentHelp: { NAME: 'the new name, unique in the project (exact)' },
    options: { 'if-version': kIfVersion, as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kFlagCommands.flagRename, {
        flagId: args.positional('FLAG_ID'),
        name: args.positional('NAME'),
        principal: principalOf(args.string('as')),
        ifMatch: args.string('if-version') ?? '',
      }),
    human: flagOut.renderFlag,
  }),
  command({
    name: 'flag describe',
    usage: 'flag describe FLAG_ID TEXT [--if-version ETAG] [--as USER_ID]',
    summary: 'set a flag\'s description ("" clears it) -> flag',
    positionals: ['FLAG_ID', 'TEXT'],
    argumentHelp: { TEXT: 'the description ("" clears it)' },
    options: { 'if-version': kIfVersion, as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kFlagCommands.flagDescribe, {
        flagId: args.positional('FLAG_ID'),
        text: args.positional('TEXT'),
        principal: principalOf(args.string('as')),
        ifMatch: args.string('if-version') ?? '',
      }),
    human: flagOut.renderFlag,
  }),
  command({
    name: 'flag tags',
    usage: 'flag tags FLAG_ID T1,T2 [--if-version ETAG] [--as USER_ID]',
    summary: 'replace a flag\'s tags ("" clears them) -> flag',
    positionals: ['FLAG_ID', 'TAGS'],
    argumentHelp: { TAGS: 'the new tags as a comma list ("" clears them)' },
    options: { 'if-version': kIfVersion, as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kFlagCommands.flagTags, {
        flagId: args.positional('FLAG_ID'),
        tags: splitList(args.positional('TAGS')),
        principal: principalOf(args.string('as')),
        ifMatch: args.string('if-version') ?? '',
      }),
    human: flagOut.renderFlag,
  }),
  command({
    name: 'flag cohorts',
    usage: 'flag cohorts FLAG_ID C1,C2 [--if-version ETAG] [--as USER_ID]',
    summary: 'set the flag-wide cohort list of a group flag ("" clears it) -> flag',
    positionals: ['FLAG_ID', 'COHORTS'],
    argumentHelp: { COHORTS: 'the cohorts as a comma list ("" clears them)' },
    options: { 'if-version': kIfVersion, as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kFlagCommands.flagCohorts, {
        flagId: args.positional('FLAG_ID'),
        cohorts: splitList(args.positional('COHORTS')),
        principal: principalOf(args.string('as')),
        ifMatch: args.string('if-version') ?? '',
      }),
    human: flagOut.renderFlag,
  }),
  command({
    name: 'flag variants',
    usage: kFlagVariantsUsage,
    summary:
      "set a flag's typed variants, default variant, targeting rule and metadata (flagd's), as PATCH /api/v1/flags/{id} does -> {changed, flag}",
    positionals: ['FLAG_ID'],
    options: {
      variants: str('JSON', 'variant name -> value, all of one type (boolean, string, number or object); {} makes it a boolean flag again'),
      'default-variant': str('NAME', 'the variant served when no rule decides; "" for none (the caller\'s own default)'),
      targeting: str('JSON', "a flagd targeting rule (JsonLogic with flagd's operators); {} removes it"),
      metadata: str('JSON', "flagd's flag metadata, names to strings, numbers or booleans; {} removes it"),
      env: str('NAME', 'group flag: the environment to set (required there)'),
      'if-version': kIfVersion,
      as: str('USER_ID', kAsFlagEditor),
    },
    notes:
      "Only the options given change; the result is checked whole, with the Management API's texts (docs/api.md: Typed variants). " +
      'A rule too long for the command line: --targeting "$(cat rule.json)".',
    async run(args, ctx) {
      const help = `Usage: flagwire ${kFlagVariantsUsage}`;
      const patch: Record<string, unknown> = {};
      const variants = args.string('variants');
      if (variants !== undefined) patch.variants = jsonOption('variants', variants, help);
      const fallback = args.string('default-variant');
      if (fallback !== undefined) patch.defaultVariant = fallback === '' ? null : fallback;
      const targeting = args.string('targeting');
      if (targeting !== undefined) patch.targeting = jsonOption('targeting', targeting, help);
      const metadata = args.string('metadata');
      if (metadata !== undefined) patch.metadata = jsonOption('metadata', metadata, help);
      if (Object.keys(patch).length === 0)
        throw new UsageError('give at least one of --variants, --default-variant, --targeting, --metadata', help);
      const result = await ctx.write(kFlagCommands.flagPatch, {
        flagId: args.positional('FLAG_ID'),
        env: args.string('env') ?? null,
        patch,
        principal: principalOf(args.string('as')),
        ifMatch: args.string('if-version') ?? '',
      });
      return ctx.read((r) => ({ changed: result.changed, flag: flagView(r, result.flag) }));
    },
    human: (result: { changed: boolean; flag: FlagView }) =>
      `${result.changed ? 'Changed.' : 'No change.'}\n${flagOut.renderFlagView(result.flag)}`,
  }),
  command({
    name: 'flag delete',
    usage: 'flag delete FLAG_ID [--if-version ETAG] [--as USER_ID]',
    summary: 'delete a flag -> {id, deleted}',
    positionals: ['FLAG_ID'],
    options: { 'if-version': kIfVersion, as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kFlagCommands.flagDelete, {
        flagId: args.positional('FLAG_ID'),
        principal: principalOf(args.string('as')),
        ifMatch: args.string('if-version') ?? '',
      }),
    human: flagOut.renderDeleted,
  }),
  command({
    name: 'flag lifecycle',
    usage: kFlagLifecycleUsage,
    summary: "a flag's type, owner, lifetime and lifecycle stage; with options, change them first -> the lifecycle",
    positionals: ['FLAG_ID'],
    options: { ...kLifecycleOptions, 'if-version': kIfVersion, as: str('USER_ID', kAsFlagEditor) },
    notes: '"" returns --type, --owner or --lifetime to its default. The stages: docs/api.md, Flag lifecycle.',
    async run(args, ctx) {
      const patch = lifecycleOptions(args, `Usage: flagwire ${kFlagLifecycleUsage}`, true);
      const flagId = args.positional('FLAG_ID');
      if (Object.keys(patch).length > 0)
        await ctx.write(kFlagCommands.flagLifecycle, {
          flagId,
          patch,
          principal: principalOf(args.string('as')),
          ifMatch: args.string('if-version') ?? '',
        });
      return ctx.read((r) => {
        const flag = requireFlag(r, flagId);
        return flagLifecycle(r, flag, requireProject(r, flag.projectId), ctx.now);
      });
    },
    human: (view: FlagLifecycle) => flagOut.renderLifecycles([view]),
  }),
  command({
    name: 'flag lifecycles',
    usage: 'flag lifecycles PROJECT_ID [--stage STAGE] [--owner NAME]',
    summary: "a project's flags with their lifecycle, archived ones too, oldest first -> {flags}",
    positionals: ['PROJECT_ID'],
    options: {
      stage: str('STAGE', `only flags at this stage: ${kLifecycleStages.join(', ')}`),
      owner: str('NAME', 'only flags of this owner'),
    },
    run: (args, ctx) =>
      ctx.read((r) => {
        const only = { stage: stageParam(args.string('stage')), owner: args.string('owner') ?? null };
        return { flags: projectLifecycle(r, requireProject(r, args.positional('PROJECT_ID')), ctx.now, only) };
      }),
    human: (result: { flags: FlagLifecycle[] }) => flagOut.renderLifecycles(result.flags),
  }),
  archiveCommand('archive', 'archive a flag: no evaluation surface serves it; its name, history and audit are kept -> the flag'),
  archiveCommand('restore', 'restore an archived flag: it serves again as it was archived -> the flag'),
];

/** `flag archive` and `flag restore`: one writer command each, through the approvals gate as any write. */
function archiveCommand(verb: 'archive' | 'restore', summary: string): CliCommand {
  return command({
    name: `flag ${verb}`,
    usage: `flag ${verb} FLAG_ID [--if-version ETAG] [--as USER_ID]`,
    summary,
    positionals: ['FLAG_ID'],
    options: { 'if-version': kIfVersion, as: str('USER_ID', kAsFlagEditor) },
    async run(args, ctx) {
      const input = {
        flagId: args.positional('FLAG_ID'),
        principal: principalOf(args.string('as')),
        ifMatch: args.string('if-version') ?? '',
      };
      const flag = await ctx.write(verb === 'archive' ? kFlagCommands.flagArchive : kFlagCommands.flagRestore, input);
      return ctx.read((r) => flagView(r, flag));
    },
    human: flagOut.renderFlagView,
  });
}

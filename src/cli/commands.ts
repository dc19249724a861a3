// The console's command table: each entry is a command line shape (args.ts), what it runs (one
// writer command in one transaction, or a store read) and how it prints for people (output.ts).
// The --json output is the returned value itself.
import type { Org, Plan, Role, Standing, User } from '../model/accounts.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { kCapabilityList } from '../capabilities.js';
import { FlagwireError } from '../errors.js';
import { isStale, kDefaultStaleDays, kMaxStaleDays, staleBefore, type Flag } from '../model/flags.js';
import { hashPassword, kMinPasswordLength, passwordProblem } from '../model/passwords.js';
import type { Audience, AudienceRule, Project, ProjectKind } from '../model/projects.js';
import { requireFlag, requireOrg, requireProject, requireToken, requireUser } from '../model/lookups.js';
import type { StoreReader } from '../store/interfaces.js';
import { representFlag, type EnvironmentsFlag, type FlatFlag } from '../model/representation.js';
import { kMaxGracePeriodSeconds, tokenView, type TokenView } from '../tokens/token-commands.js';
import { flagsPlan } from '../flags-as-code/apply-commands.js';
import type { PlanResult } from '../flags-as-code/schemas.js';
import { type ExportFormat, exportProject, kExportFormats } from '../flags-as-code/export.js';
import { fileText } from '../flags-as-code/flag-file.js';
import { renderApplied, renderPlan } from '../flags-as-code/plan-text.js';
import { savedPlanConditions } from '../flags-as-code/saved-plan.js';
import type { ApplyConditions } from '../flags-as-code/apply-commands.js';
import { type DeliveryBody, deliveryView, type WebhookBody, type WebhookCreated, webhookView } from '../webhooks/schemas.js';
import { renderCreatedWebhook, renderDeliveries, renderWebhooks } from '../webhooks/webhook-text.js';
import { kKeptDeliveries } from '../webhooks/webhook-commands.js';
import { splitList, UsageError, type Args } from './args.js';
import { bool, command, type ConsoleCommand, jsonOption, kAsFlagEditor, many, str } from './console-command.js';
import * as out from './output.js';
import { readSecretLine } from './read-secret.js';

const kDefaultAuditLimit = 50;
const kMaxAuditLimit = 1000;

// Option texts used by several commands.
const kAsTokenUser = 'the person acting (a user id); the audit log names them (actor user:<id>)';
const kPlanHelp =
  'free (default), pro, teams, enterprise or teams-trial; the Management API and audiences need teams, enterprise or an active teams-trial';
const kTrialEndsHelp = 'when a teams-trial ends: a date (2031-06-30, UTC midnight) or a date-time with a zone; default 14 days from now';
const kRuleHelp = 'ATTR=V1[,V2...]: the request attribute ATTR must equal one of the values; repeat for more rules (all must match)';

/** `--rule plan=beta,pro` -> {attribute: 'plan', values: ['beta', 'pro']}. */
function parseRule(text: string, help: string): AudienceRule {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--rule must look like ATTR=V1[,V2...], not "${text}"`, help);
  return { attribute: text.slice(0, eq).trim(), values: splitList(text.slice(eq + 1)) };
}

function rules(args: Args, help: string): AudienceRule[] | undefined {
  return args.all('rule')?.map((r) => parseRule(r, help));
}

/** The Management API's representation of a flag (a group flag in its environments form). */
function flagView(r: StoreReader, flag: Flag): FlagView {
  return representFlag(flag, requireProject(r, flag.projectId), null, r.getUsage(flag.id));
}

/**
 * `flag stale`: not evaluated for `days` days, by the usage the server writes once a minute (docs/operations.md:
 * Flag usage): evaluated last before the cut-off, or never evaluated and created before it (a flag
 * created since has had no chance to be used).
 */
function staleFlags(r: StoreReader, project: Project, days: number, now: number): StaleFlags {
  const before = staleBefore(now, days);
  const flags: FlagView[] = [];
  for (const flag of r.listFlags(project.id)) {
    const usage = r.getUsage(flag.id);
    if (isStale(flag, usage, before)) flags.push(representFlag(flag, project, null, usage));
  }
  return { days, before, flags };
}

export type FlagView = FlatFlag | EnvironmentsFlag;

export interface StaleFlags {
  days: number;
  /** The cut-off, Unix ms: evaluated last before it (or never, and created before it). */
  before: number;
  flags: FlagView[];
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
  if (environments === undefined) return { ...body, ...state };
  return { ...body, environments: Object.fromEntries(environments.map((env) => [env, { ...state }])) };
}

const kOrgCreateUsage = 'org create --name NAME [--plan free|pro|teams|enterprise|teams-trial] [--trial-ends ISO-8601]';
const kProjectCreateUsage = 'project create --name NAME (--org ORG_ID | --owner USER_ID) [--kind single|multi] [--env NAME]...';
const kProjectListUsage = 'project list [--org ORG_ID | --owner USER_ID]';
const kAudienceCreateUsage = 'audience create PROJECT_ID --name NAME --rule ATTR=V1[,V2...] [--rule ...]';
const kAudienceUpdateUsage = 'audience update AUDIENCE_ID [--name NAME] [--rule ATTR=V1[,V2...]]...';
const kFlagVariantsUsage =
  'flag variants FLAG_ID [--variants JSON] [--default-variant NAME] [--targeting JSON] [--metadata JSON] [--env NAME] [--as USER_ID]';
const kFlagsImportUsage = 'flags import PROJECT_ID --file FILE [--env NAME] [--as USER_ID]';
const kExportUsage = 'export PROJECT_ID [--format flagwire|flagd] [--env NAME]';
const kPlanUsage = 'plan PROJECT_ID --file FILE [--prune] [--out PLAN_FILE]';
const kApplyUsage = 'apply PROJECT_ID --file FILE [--prune] [--if-revision N | --plan PLAN_FILE] [--as USER_ID]';

/** The text of an option's file (--file unless named); a usage error naming it when it cannot be read. */
function readFileOption(args: Args, usage: string, option = 'file'): string {
  const file = args.required(option);
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read --${option} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      `Usage: flagwire ${usage}`,
    );
  }
}

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
  return { ifRevision: revision === undefined ? null : Number(revision), ifPlan: null };
}

const kFlagCreateUsage = 'flag create PROJECT_ID --name NAME [--enabled] [--percentage N] [--env NAME]... [--as USER_ID]';

/** The command line's commands not (yet) declared by a capability. */
const kOwnCommands: readonly ConsoleCommand[] = [
  command({
    name: 'serve',
    usage: 'serve [--port N] [--host H] [--demo] [--flags-file PATH --flags-project PROJECT_ID]',
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
    },
    createsDataDir: true,
    longRunning: true,
    async run(args, ctx) {
      // Loaded only here: the other commands never pay for uWebSockets.js and the worker pool.
      const [{ loadConfig }, { startServer }] = await Promise.all([import('../config.js'), import('../server/start.js')]);
      const config = loadConfig({
        port: args.string('port'),
        host: args.string('host'),
        data: ctx.dataFlag,
        database: ctx.databaseFlag,
        flagsFile: args.string('flags-file'),
        flagsProject: args.string('flags-project'),
      });
      await startServer(config, { demo: args.flag('demo'), handleSignals: true });
      return null;
    },
    human: () => '',
  }),

  // ---- organisations and users -----------------------------------------------------------------
  command({
    name: 'org create',
    usage: kOrgCreateUsage,
    summary: 'create an organisation (names are unique, ignoring case) -> {id, name, plan, trialEndsAt, standing}',
    positionals: [],
    options: {
      name: str('NAME', "the organisation's name", true),
      plan: str('P', kPlanHelp),
      'trial-ends': str('ISO-8601', kTrialEndsHelp),
    },
    // A first organisation is how a new installation starts without `serve`.
    createsDataDir: true,
    run: (args, ctx) =>
      ctx.write('orgCreate', {
        name: args.required('name'),
        plan: args.string('plan') as Plan | undefined,
        trialEndsAt: args.isoTime('trial-ends'),
      }),
    human: out.renderOrg,
  }),
  command({
    name: 'org update',
    usage: 'org update ORG_ID [--plan P] [--trial-ends ISO-8601] [--standing good|lapsed]',
    summary: "change an organisation's plan, trial end or standing -> org",
    positionals: ['ORG_ID'],
    options: {
      plan: str('P', kPlanHelp),
      'trial-ends': str('ISO-8601', kTrialEndsHelp),
      standing: str('good|lapsed', "the subscription's standing; a lapsed organisation loses the Management API"),
    },
    run: (args, ctx) =>
      ctx.write('orgUpdate', {
        orgId: args.positional('ORG_ID'),
        plan: args.string('plan') as Plan | undefined,
        trialEndsAt: args.isoTime('trial-ends'),
        standing: args.string('standing') as Standing | undefined,
      }),
    human: out.renderOrg,
  }),
  command({
    name: 'org add-member',
    usage: 'org add-member ORG_ID USER_ID --role owner|admin|editor|viewer',
    summary: 'add a user to an organisation, or change their role -> {orgId, userId, role}',
    positionals: ['ORG_ID', 'USER_ID'],
    options: {
      role: str(
        'owner|admin|editor|viewer',
        "the role: editors and up create tokens and change flags; admins and owners also revoke others' tokens",
        true,
      ),
    },
    run: (args, ctx) =>
      ctx.write('orgAddMember', {
        orgId: args.positional('ORG_ID'),
        userId: args.positional('USER_ID'),
        role: args.required('role') as Role,
      }),
    human: out.renderMembership,
  }),
  command({
    name: 'org list',
    usage: 'org list',
    summary: 'every organisation, oldest first -> {orgs}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r) => ({ orgs: r.listOrgs() })),
    human: (result: { orgs: Org[] }) => out.renderOrgs(result.orgs),
  }),
  command({
    name: 'user create',
    usage: 'user create --email EMAIL [--name NAME]',
    summary: 'create a user (e-mail addresses are unique) -> {id, email, name}',
    positionals: [],
    options: {
      email: str('EMAIL', "the user's e-mail address (denial notices go there)", true),
      name: str('NAME', 'display name (default: the part of the e-mail before @)'),
    },
    run: (args, ctx) => ctx.write('userCreate', { email: args.required('email'), name: args.string('name') }),
    human: out.renderUser,
  }),
  command({
    name: 'user password',
    usage: 'user password USER_ID',
    summary:
      "set the user's web console password, read from standard input (up to the first newline); ends their sessions -> {userId, updatedAt, sessionsEnded}",
    positionals: ['USER_ID'],
    options: {},
    notes:
      `The password is never taken from the command line. At least ${kMinPasswordLength} characters, no other rules; kept only as an scrypt hash. ` +
      'Example: printf \'%s\\n\' "$PASSWORD" | flagwire user password usr_...',
    async run(args, ctx) {
      const userId = args.positional('USER_ID');
      // Before reading standard input: a typo in the id fails at once instead of after the password.
      await ctx.read((r) => requireUser(r, userId));
      const password = await readSecretLine();
      const problem = passwordProblem(password);
      if (problem !== null) throw new FlagwireError('INVALID_REQUEST', problem);
      return ctx.write('userPassword', { userId, passwordHash: await hashPassword(password) });
    },
    human: out.renderPasswordSet,
  }),
  command({
    name: 'user list',
    usage: 'user list',
    summary: 'every user, oldest first -> {users}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r) => ({ users: r.listUsers() })),
    human: (result: { users: User[] }) => out.renderUsers(result.users),
  }),

  // ---- projects, environments, audiences -------------------------------------------------------
  command({
    name: 'project create',
    usage: kProjectCreateUsage,
    summary: 'create an organisation project (--org) or a personal one (--owner) -> {id, name, kind, environments}',
    positionals: [],
    options: {
      name: str('NAME', "the project's name: unique, ignoring case, in its organisation (or among the owner's personal projects)", true),
      org: str('ORG_ID', 'the organisation the project belongs to'),
      owner: str('USER_ID', 'the user whose personal project this is (personal projects have no tokens or audiences)'),
      kind: str('single|multi', 'single (default): one state per flag; multi: one state per environment'),
      env: many('NAME', 'an environment of a multi project (repeat, or a comma list: --env staging,production)'),
    },
    run(args, ctx) {
      const orgId = args.string('org');
      const ownerUserId = args.string('owner');
      if ((orgId === undefined) === (ownerUserId === undefined)) {
        throw new UsageError(
          'give exactly one of --org ORG_ID (organisation project) and --owner USER_ID (personal project)',
          `Usage: flagwire ${kProjectCreateUsage}`,
        );
      }
      return ctx.write('projectCreate', {
        name: args.required('name'),
        orgId,
        ownerUserId,
        kind: args.string('kind') as ProjectKind | undefined,
        environments: args.list('env'),
      });
    },
    human: out.renderProject,
  }),
  command({
    name: 'project list',
    usage: kProjectListUsage,
    summary: "projects, oldest first: all, one organisation's (--org) or one user's personal ones (--owner) -> {projects}",
    positionals: [],
    options: { org: str('ORG_ID', "only this organisation's projects"), owner: str('USER_ID', "only this user's personal projects") },
    run(args, ctx) {
      const orgId = args.string('org');
      const ownerUserId = args.string('owner');
      if (orgId !== undefined && ownerUserId !== undefined) {
        throw new UsageError('give at most one of --org and --owner', `Usage: flagwire ${kProjectListUsage}`);
      }
      return ctx.read((r): { projects: Project[] } => {
        if (orgId !== undefined) requireOrg(r, orgId);
        if (ownerUserId !== undefined) requireUser(r, ownerUserId);
        const projects = r
          .listProjects()
          .filter(
            (p) =>
              (orgId === undefined || p.orgId === orgId) &&
              (ownerUserId === undefined || (p.orgId === null && p.ownerUserId === ownerUserId)),
          );
        return { projects };
      });
    },
    human: (result: { projects: Project[] }) => out.renderProjects(result.projects),
  }),
  command({
    name: 'project show',
    usage: 'project show PROJECT_ID',
    summary: 'one project -> {id, name, kind, orgId, ownerUserId, environments, createdAt}',
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) => ctx.read((r) => requireProject(r, args.positional('PROJECT_ID'))),
    human: out.renderProject,
  }),
  command({
    name: 'env add',
    usage: 'env add PROJECT_ID NAME',
    summary: 'add an environment to a multi-environment project (audited) -> project',
    positionals: ['PROJECT_ID', 'NAME'],
    argumentHelp: { NAME: 'the new environment\'s name (letters, digits, "_", "." or "-")' },
    options: {},
    run: (args, ctx) => ctx.write('envAdd', { projectId: args.positional('PROJECT_ID'), name: args.positional('NAME') }),
    human: out.renderProject,
  }),
  command({
    name: 'env rename',
    usage: 'env rename PROJECT_ID OLD NEW',
    summary: 'rename an environment (audited; tokens limited to the old name are not updated) -> project',
    positionals: ['PROJECT_ID', 'OLD', 'NEW'],
    argumentHelp: { OLD: "the environment's current name", NEW: 'its new name (letters, digits, "_", "." or "-")' },
    options: {},
    run: (args, ctx) =>
      ctx.write('envRename', { projectId: args.positional('PROJECT_ID'), from: args.positional('OLD'), to: args.positional('NEW') }),
    human: out.renderProject,
  }),
  command({
    name: 'audience create',
    usage: kAudienceCreateUsage,
    summary: "define an audience (audited): every rule's attribute must equal one of its values -> {id, name, rules}",
    positionals: ['PROJECT_ID'],
    options: {
      name: str('NAME', "the audience's name, unique in the project ignoring case", true),
      rule: many('ATTR=V1[,V2...]', kRuleHelp, true),
    },
    run: (args, ctx) =>
      ctx.write('audienceCreate', {
        projectId: args.positional('PROJECT_ID'),
        name: args.required('name'),
        rules: rules(args, `Usage: flagwire ${kAudienceCreateUsage}`) ?? [],
      }),
    human: out.renderAudience,
  }),
  command({
    name: 'audience update',
    usage: kAudienceUpdateUsage,
    summary: 'rename an audience or replace its rules (audited; a change to nothing writes nothing) -> audience',
    positionals: ['AUDIENCE_ID'],
    options: {
      name: str('NAME', 'the new name, unique in the project ignoring case'),
      rule: many('ATTR=V1[,V2...]', `${kRuleHelp}; the rules given replace all current ones`),
    },
    run: (args, ctx) =>
      ctx.write('audienceUpdate', {
        audienceId: args.positional('AUDIENCE_ID'),
        name: args.string('name'),
        rules: rules(args, `Usage: flagwire ${kAudienceUpdateUsage}`),
      }),
    human: out.renderAudience,
  }),
  command({
    name: 'audience list',
    usage: 'audience list PROJECT_ID',
    summary: "a project's audiences -> {audiences}",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) => ctx.read((r) => ({ audiences: r.listAudiences(requireProject(r, args.positional('PROJECT_ID')).id) })),
    human: (result: { audiences: Audience[] }) => out.renderAudiences(result.audiences),
  }),

  // ---- flags -----------------------------------------------------------------------------------
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
      as: str('USER_ID', kAsFlagEditor),
    },
    notes: "Refusals are the Management API's 400 texts: on a multi-environment project --enabled/--percentage need --env.",
    async run(args, ctx) {
      const body = flagCreateBody(args, `Usage: flagwire ${kFlagCreateUsage}`);
      const flag = await ctx.write('consoleFlagCreate', { projectId: args.positional('PROJECT_ID'), body, asUserId: args.string('as') });
      return ctx.read((r) => flagView(r, flag));
    },
    human: out.renderFlagView,
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
        return { flags: r.listFlags(project.id).map((f) => representFlag(f, project, null, r.getUsage(f.id))) };
      }),
    human: (result: { flags: FlagView[] }) => out.renderFlagViews(result.flags),
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
    human: out.renderStaleFlags,
  }),
  command({
    name: 'flag show',
    usage: 'flag show FLAG_ID',
    summary: 'one flag as the Management API shows it (a group flag with every environment) -> flag',
    positionals: ['FLAG_ID'],
    options: {},
    run: (args, ctx) => ctx.read((r) => flagView(r, requireFlag(r, args.positional('FLAG_ID')))),
    human: out.renderFlagView,
  }),
  command({
    name: 'flag rename',
    usage: 'flag rename FLAG_ID NAME [--as USER_ID]',
    summary: 'rename a flag -> flag',
    positionals: ['FLAG_ID', 'NAME'],
    argumentHelp: { NAME: 'the new name, unique in the project (exact)' },
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write('flagRename', { flagId: args.positional('FLAG_ID'), name: args.positional('NAME'), asUserId: args.string('as') }),
    human: out.renderFlag,
  }),
  command({
    name: 'flag describe',
    usage: 'flag describe FLAG_ID TEXT [--as USER_ID]',
    summary: 'set a flag\'s description ("" clears it) -> flag',
    positionals: ['FLAG_ID', 'TEXT'],
    argumentHelp: { TEXT: 'the description ("" clears it)' },
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write('flagDescribe', { flagId: args.positional('FLAG_ID'), text: args.positional('TEXT'), asUserId: args.string('as') }),
    human: out.renderFlag,
  }),
  command({
    name: 'flag tags',
    usage: 'flag tags FLAG_ID T1,T2 [--as USER_ID]',
    summary: 'replace a flag\'s tags ("" clears them) -> flag',
    positionals: ['FLAG_ID', 'TAGS'],
    argumentHelp: { TAGS: 'the new tags as a comma list ("" clears them)' },
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write('flagTags', { flagId: args.positional('FLAG_ID'), tags: splitList(args.positional('TAGS')), asUserId: args.string('as') }),
    human: out.renderFlag,
  }),
  command({
    name: 'flag cohorts',
    usage: 'flag cohorts FLAG_ID C1,C2 [--as USER_ID]',
    summary: 'set the flag-wide cohort list of a group flag ("" clears it) -> flag',
    positionals: ['FLAG_ID', 'COHORTS'],
    argumentHelp: { COHORTS: 'the cohorts as a comma list ("" clears them)' },
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write('flagCohorts', {
        flagId: args.positional('FLAG_ID'),
        cohorts: splitList(args.positional('COHORTS')),
        asUserId: args.string('as'),
      }),
    human: out.renderFlag,
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
      const result = await ctx.write('consoleFlagPatch', {
        flagId: args.positional('FLAG_ID'),
        env: args.string('env') ?? null,
        patch,
        asUserId: args.string('as'),
      });
      return ctx.read((r) => ({ changed: result.changed, flag: flagView(r, result.flag) }));
    },
    human: (result: { changed: boolean; flag: FlagView }) =>
      `${result.changed ? 'Changed.' : 'No change.'}\n${out.renderFlagView(result.flag)}`,
  }),
  command({
    name: 'flag delete',
    usage: 'flag delete FLAG_ID [--as USER_ID]',
    summary: 'delete a flag -> {id, deleted}',
    positionals: ['FLAG_ID'],
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) => ctx.write('flagDelete', { flagId: args.positional('FLAG_ID'), asUserId: args.string('as') }),
    human: out.renderDeleted,
  }),
  command({
    name: 'flags import',
    usage: kFlagsImportUsage,
    summary: 'create or update flags by key from a flagd flag-definition file (JSON), all or nothing, audited -> {projectId, env, flags}',
    positionals: ['PROJECT_ID'],
    options: {
      file: str('FILE', 'the flagd flag-definition file (https://flagd.dev/reference/flag-definitions/), JSON', true),
      env: str('NAME', 'multi-environment project: the environment whose state the file sets (required there)'),
      as: str('USER_ID', kAsFlagEditor),
    },
    notes:
      "Each flag's key is its name: a new name creates the flag (on for everyone its rule reaches: 100%), an existing one is updated " +
      '(state, variants, default variant, rule, metadata; its percentage, cohorts and audience are kept). Flags the file does not name are left alone. ' +
      'A refused file names the flag and the place in it, and nothing is written.',
    run(args, ctx) {
      return ctx.write('flagsImport', {
        projectId: args.positional('PROJECT_ID'),
        document: readFileOption(args, kFlagsImportUsage),
        env: args.string('env') ?? null,
        asUserId: args.string('as'),
      });
    },
    human: out.renderImport,
  }),

  // ---- webhooks (src/webhooks) --------------------------------------------------------------------
  command({
    name: 'webhook create',
    usage: 'webhook create PROJECT_ID --url URL [--events flag,token,plan] [--format standard|slack] [--as USER_ID]',
    summary: 'POST every change of a project to a URL, signed as Standard Webhooks says -> the webhook, with its secret (shown only now)',
    positionals: ['PROJECT_ID'],
    options: {
      url: str(
        'URL',
        'where deliveries are POSTed (http:// or https://); a running server refuses to send to a private or loopback address unless FLAGWIRE_WEBHOOK_ALLOW names it',
        true,
      ),
      events: str('LIST', 'flag, token and/or plan, comma-separated (default: all)'),
      format: str('standard|slack', 'the change as JSON (default), or a Slack-compatible {text} message'),
      as: str('USER_ID', kAsFlagEditor),
    },
    run: (args, ctx) => {
      const events = args.string('events');
      const body: Record<string, unknown> = { url: args.required('url') };
      if (events !== undefined) body.events = splitList(events);
      const format = args.string('format');
      if (format !== undefined) body.format = format;
      return ctx.write('consoleWebhookCreate', { projectId: args.positional('PROJECT_ID'), body, asUserId: args.string('as') });
    },
    human: (hook: WebhookCreated) => renderCreatedWebhook(hook, out.renderTable),
  }),
  command({
    name: 'webhook list',
    usage: 'webhook list PROJECT_ID',
    summary: "a project's webhooks, without their secrets -> {webhooks: [...]}",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r) => ({ webhooks: r.listWebhooks(requireProject(r, args.positional('PROJECT_ID')).id).map(webhookView) })),
    human: (result: { webhooks: WebhookBody[] }) => renderWebhooks(result.webhooks, out.renderTable),
  }),
  command({
    name: 'webhook delete',
    usage: 'webhook delete WEBHOOK_ID [--as USER_ID]',
    summary: 'delete a webhook and its delivery log -> {id, deleted}',
    positionals: ['WEBHOOK_ID'],
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) => ctx.write('consoleWebhookDelete', { webhookId: args.positional('WEBHOOK_ID'), asUserId: args.string('as') }),
    human: (result: { id: string }) => `Deleted webhook ${result.id}.`,
  }),
  command({
    name: 'webhook deliveries',
    usage: 'webhook deliveries WEBHOOK_ID',
    summary: "a webhook's delivery log, newest first: status, attempts, the last answer, latency, the next try -> {deliveries: [...]}",
    positionals: ['WEBHOOK_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r) => {
        const hook = r.getWebhook(args.positional('WEBHOOK_ID'));
        if (hook === undefined) throw new FlagwireError('NOT_FOUND', `No webhook ${args.positional('WEBHOOK_ID')} exists.`);
        return { deliveries: r.listDeliveries(hook.id, kKeptDeliveries).map(deliveryView) };
      }),
    human: (result: { deliveries: DeliveryBody[] }) => renderDeliveries(result.deliveries, out.renderTable),
  }),
  command({
    name: 'webhook redeliver',
    usage: 'webhook redeliver DELIVERY_ID [--as USER_ID]',
    summary: 'send a delivery again now: the same message (webhook-id and body), newly signed -> the delivery',
    positionals: ['DELIVERY_ID'],
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: async (args, ctx) =>
      deliveryView(await ctx.write('consoleWebhookRedeliver', { deliveryId: args.positional('DELIVERY_ID'), asUserId: args.string('as') })),
    human: (delivery: DeliveryBody) => renderDeliveries([delivery], out.renderTable),
  }),

  // ---- flags as code (src/flags-as-code) ---------------------------------------------------------
  command({
    name: 'export',
    usage: kExportUsage,
    summary: "write a project's flags, audiences and environments as a file (Flagwire's format, or flagd's) -> the file",
    positionals: ['PROJECT_ID'],
    options: {
      format: str(
        'flagwire|flagd',
        'flagwire (default): everything, applies back with `flagwire apply`; flagd: what flagd can express, each flag naming in x-flagwire-omitted what it could not',
      ),
      env: str('NAME', "flagd's format of a multi-environment project: the environment to export (flagd has none)"),
    },
    notes: 'The same project state always gives the same bytes: commit the file, and `flagwire plan` shows what changed since.',
    run(args, ctx) {
      const format = args.string('format') ?? 'flagwire';
      if (!(kExportFormats as readonly string[]).includes(format))
        throw new UsageError(`--format must be flagwire or flagd, not "${format}"`, `Usage: flagwire ${kExportUsage}`);
      return ctx.read((r) =>
        exportProject(
          r,
          requireProject(r, args.positional('PROJECT_ID')),
          { format: format as ExportFormat, env: args.string('env') ?? null },
          'console',
        ),
      );
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
      return ctx.write('flagsApply', {
        projectId,
        document: readFileOption(args, kApplyUsage),
        prune: args.flag('prune'),
        ...applyConditions(args, projectId),
        asUserId: args.string('as'),
      });
    },
    human: renderApplied,
  }),

  // ---- tokens ----------------------------------------------------------------------------------
  command({
    name: 'token create',
    usage: 'token create PROJECT_ID --as USER_ID --name NAME --permission read|write [--env E1,E2] [--expires never|30d|90d|365d]',
    summary: 'create an API token; its secret is shown only this once -> {id, secret, name, permission, environments, expiresAt}',
    positionals: ['PROJECT_ID'],
    options: {
      as: str('USER_ID', `${kAsTokenUser}; creating needs the Editor, Admin or Owner role`, true),
      name: str('NAME', "the token's name (shown in the audit log next to its writes)", true),
      permission: str('read|write', 'read: GET routes only; write: also POST and PATCH (below Teams only read)', true),
      env: many('E1,E2', 'limit the token to these environments of a multi project (default: all, including future ones)'),
      expires: str('never|30d|90d|365d', 'lifetime from now (default never; at most 365 days)'),
    },
    run: (args, ctx) =>
      ctx.write('tokenCreate', {
        projectId: args.positional('PROJECT_ID'),
        asUserId: args.required('as'),
        name: args.required('name'),
        permission: args.required('permission'),
        environments: args.list('env'),
        expires: args.string('expires'),
      }),
    human: out.renderCreatedToken,
  }),
  command({
    name: 'token rotate',
    usage: 'token rotate TOKEN_ID --as USER_ID [--grace-seconds N]',
    summary:
      'revoke a token and create its replacement (same settings); the new secret is shown once, the old one works N seconds more (default 0) -> token, replaced',
    positionals: ['TOKEN_ID'],
    options: {
      as: str('USER_ID', `${kAsTokenUser}; rotating needs the token's creator, or an Admin or Owner`, true),
      'grace-seconds': str('N', `seconds the old secret keeps working, 0 (default) to ${kMaxGracePeriodSeconds} (7 days)`),
    },
    run: (args, ctx) =>
      ctx.write('tokenRotate', {
        tokenId: args.positional('TOKEN_ID'),
        asUserId: args.required('as'),
        gracePeriodSeconds: args.integer('grace-seconds', 0, kMaxGracePeriodSeconds),
      }),
    human: out.renderRotatedToken,
  }),
  command({
    name: 'token revoke',
    usage: 'token revoke TOKEN_ID --as USER_ID',
    summary: 'revoke a token (creator, Admin or Owner) -> {id, revokedAt}',
    positionals: ['TOKEN_ID'],
    options: { as: str('USER_ID', `${kAsTokenUser}; revoking needs the token's creator, or an Admin or Owner`, true) },
    run: (args, ctx) => ctx.write('tokenRevoke', { tokenId: args.positional('TOKEN_ID'), asUserId: args.required('as') }),
    human: out.renderRevoked,
  }),
  command({
    name: 'token list',
    usage: 'token list PROJECT_ID',
    summary: "a project's tokens, revoked and expired ones included (never secrets) -> {tokens}",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r): { tokens: TokenView[] } => {
        const project = requireProject(r, args.positional('PROJECT_ID'));
        return { tokens: r.listTokens(project.id).map(tokenView) };
      }),
    human: (result: { tokens: TokenView[] }, now) => out.renderTokens(result.tokens, now),
  }),
  command({
    name: 'token activity',
    usage: 'token activity TOKEN_ID',
    summary: "a token's last use, recent requests and recent denials -> {lastUsedAt, recent, denials}",
    positionals: ['TOKEN_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r): out.ActivityView => {
        const token = requireToken(r, args.positional('TOKEN_ID'));
        const activity = r.getActivity(token.id);
        return {
          tokenId: token.id,
          lastUsedAt: activity?.lastUsedAt ?? null,
          recent: activity?.recent ?? [],
          denials: activity?.denials ?? [],
        };
      }),
    human: out.renderActivity,
  }),

  // ---- audit and mail --------------------------------------------------------------------------
  command({
    name: 'audit',
    usage: `audit PROJECT_ID [--limit N] [--before SEQ]`,
    summary: `a project's audit log, newest first (default ${kDefaultAuditLimit}, at most ${kMaxAuditLimit}; --before pages back) -> {entries, nextBefore}`,
    positionals: ['PROJECT_ID'],
    options: {
      limit: str('N', `entries per page (default ${kDefaultAuditLimit}, at most ${kMaxAuditLimit})`),
      before: str('SEQ', 'only entries older than this sequence number: the nextBefore of the previous page'),
    },
    run(args, ctx) {
      const limit = args.integer('limit', 1, kMaxAuditLimit) ?? kDefaultAuditLimit;
      const before = args.integer('before', 1, Number.MAX_SAFE_INTEGER) ?? null;
      return ctx.read((r): out.AuditPageView => {
        const project = requireProject(r, args.positional('PROJECT_ID'));
        // One entry more than asked says whether an older page exists, so a full page is never taken
        // for the whole log.
        const found = r.listAudit(project.id, { limit: limit + 1, before });
        const entries = found.slice(0, limit);
        return { entries, nextBefore: found.length > limit ? entries[entries.length - 1]!.seq : null };
      });
    },
    human: out.renderAuditPage,
  }),
  command({
    name: 'mail list',
    usage: 'mail list',
    summary: 'the mail outbox (denial notices), oldest first -> {messages}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r) => ({ messages: r.listMail() })),
    human: (result: { messages: Parameters<typeof out.renderMail>[0] }) => out.renderMail(result.messages),
  }),

  // ---- PostgreSQL ------------------------------------------------------------------------------
  command({
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
      return migrateToPostgres(resolveDataDir(ctx.dataFlag, process.env, false), databaseUrl);
    },
    human: (result: { revision: number; records: number }) =>
      `Copied ${result.records} records into PostgreSQL (revision ${result.revision}); this data directory is now its copy: start nodes with --database.`,
  }),
];

/** Every command of the command line: these, then each capability's, in the order src/capabilities.ts lists them. */
export const kConsoleCommands: readonly ConsoleCommand[] = [...kOwnCommands, ...kCapabilityList.flatMap((c) => c.cli ?? [])];

// The console's command table: each entry is a command line shape (args.ts), what it runs (one
// writer command in one transaction, or a store read) and how it prints for people (output.ts).
// The --json output is the returned value itself.
import { requireProject, requireToken } from '../model/lookups.js';
import type { AudienceRule, Plan, ProjectKind, Role, Standing } from '../store/records.js';
import type { StoreReader } from '../store/store.js';
import type { CommandInput, CommandName, CommandOutput } from '../writer/commands.js';
import { tokenView, type TokenView } from '../writer/token-commands.js';
import { splitList, UsageError, type Args, type CommandSpec, type OptionSpec } from './args.js';
import * as out from './output.js';

/** What a command may do: run one writer command (its own transaction), or read the store. */
export interface ConsoleContext {
  write<N extends CommandName>(name: N, input: CommandInput<N>): CommandOutput<N>;
  read<T>(fn: (store: StoreReader) => T): T;
  /** Start time of this run, Unix ms (what the writer commands get as `now`). */
  readonly now: number;
  /** The --data flag as given (serve passes it to loadConfig). */
  readonly dataFlag: string | undefined;
}

export interface ConsoleCommand<R = unknown> extends CommandSpec {
  run(args: Args, ctx: ConsoleContext): R | Promise<R>;
  /** The text for people; the JSON output is the result itself. */
  human(result: R, now: number): string;
  /** Runs until stopped by a signal (serve): nothing is printed when `run` returns. */
  longRunning?: boolean;
}

const kDefaultAuditLimit = 50;
const kMaxAuditLimit = 1000;

const str = (required = false): OptionSpec => ({ type: 'string', required });
const many = (required = false): OptionSpec => ({ type: 'string', multiple: true, required });

function command<R>(spec: ConsoleCommand<R>): ConsoleCommand {
  return spec as unknown as ConsoleCommand;
}

/** `--rule plan=beta,pro` -> {attribute: 'plan', values: ['beta', 'pro']}. */
function parseRule(text: string, help: string): AudienceRule {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--rule must look like ATTR=V1[,V2...], not "${text}"`, help);
  return { attribute: text.slice(0, eq).trim(), values: splitList(text.slice(eq + 1)) };
}

function rules(args: Args, help: string): AudienceRule[] | undefined {
  return args.all('rule')?.map((r) => parseRule(r, help));
}

const kOrgCreateUsage = 'org create --name NAME [--plan free|pro|teams|enterprise|teams-trial] [--trial-ends ISO-8601]';
const kProjectCreateUsage = 'project create --name NAME (--org ORG_ID | --owner USER_ID) [--kind single|multi] [--env NAME]...';
const kAudienceCreateUsage = 'audience create PROJECT_ID --name NAME --rule ATTR=V1[,V2...] [--rule ...]';
const kAudienceUpdateUsage = 'audience update AUDIENCE_ID [--name NAME] [--rule ATTR=V1[,V2...]]...';

export const kConsoleCommands: readonly ConsoleCommand[] = [
  command({
    name: 'serve',
    usage: 'serve [--port N] [--host H] [--demo]',
    summary: 'run the service (FLAGWIRE_PORT, default 8080; FLAGWIRE_HOST, default 127.0.0.1); --demo seeds an empty data dir',
    positionals: [],
    options: { port: str(), host: str(), demo: { type: 'boolean' } },
    longRunning: true,
    async run(args, ctx) {
      // Loaded only here: the other commands never pay for uWebSockets.js and the worker pool.
      const [{ loadConfig }, { startServer }] = await Promise.all([import('../config.js'), import('../server/start.js')]);
      const config = loadConfig({ port: args.string('port'), host: args.string('host'), data: ctx.dataFlag });
      await startServer(config, { demo: args.flag('demo'), handleSignals: true });
      return null;
    },
    human: () => '',
  }),

  // ---- organisations and users -----------------------------------------------------------------
  command({
    name: 'org create',
    usage: kOrgCreateUsage,
    summary: 'create an organisation -> {id, name, plan, trialEndsAt, standing}',
    positionals: [],
    options: { name: str(true), plan: str(), 'trial-ends': str() },
    run: (args, ctx) =>
      ctx.write('orgCreate', { name: args.required('name'), plan: args.string('plan') as Plan | undefined, trialEndsAt: args.isoTime('trial-ends') }),
    human: out.renderOrg,
  }),
  command({
    name: 'org update',
    usage: 'org update ORG_ID [--plan P] [--trial-ends ISO-8601] [--standing good|lapsed]',
    summary: 'change an organisation\'s plan, trial end or standing -> org',
    positionals: ['ORG_ID'],
    options: { plan: str(), 'trial-ends': str(), standing: str() },
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
    options: { role: str(true) },
    run: (args, ctx) =>
      ctx.write('orgAddMember', { orgId: args.positional('ORG_ID'), userId: args.positional('USER_ID'), role: args.required('role') as Role }),
    human: out.renderMembership,
  }),
  command({
    name: 'user create',
    usage: 'user create --email EMAIL [--name NAME]',
    summary: 'create a user -> {id, email, name}',
    positionals: [],
    options: { email: str(true), name: str() },
    run: (args, ctx) => ctx.write('userCreate', { email: args.required('email'), name: args.string('name') }),
    human: out.renderUser,
  }),

  // ---- projects, environments, audiences -------------------------------------------------------
  command({
    name: 'project create',
    usage: kProjectCreateUsage,
    summary: 'create an organisation project (--org) or a personal one (--owner) -> {id, name, kind, environments}',
    positionals: [],
    options: { name: str(true), org: str(), owner: str(), kind: str(), env: many() },
    run(args, ctx) {
      const orgId = args.string('org');
      const ownerUserId = args.string('owner');
      if ((orgId === undefined) === (ownerUserId === undefined)) {
        throw new UsageError('give exactly one of --org ORG_ID (organisation project) and --owner USER_ID (personal project)', `Usage: flagwire ${kProjectCreateUsage}`);
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
    name: 'env add',
    usage: 'env add PROJECT_ID NAME',
    summary: 'add an environment to a multi-environment project -> project',
    positionals: ['PROJECT_ID', 'NAME'],
    options: {},
    run: (args, ctx) => ctx.write('envAdd', { projectId: args.positional('PROJECT_ID'), name: args.positional('NAME') }),
    human: out.renderProject,
  }),
  command({
    name: 'env rename',
    usage: 'env rename PROJECT_ID OLD NEW',
    summary: 'rename an environment (tokens limited to the old name are not updated) -> project',
    positionals: ['PROJECT_ID', 'OLD', 'NEW'],
    options: {},
    run: (args, ctx) =>
      ctx.write('envRename', { projectId: args.positional('PROJECT_ID'), from: args.positional('OLD'), to: args.positional('NEW') }),
    human: out.renderProject,
  }),
  command({
    name: 'audience create',
    usage: kAudienceCreateUsage,
    summary: 'define an audience: every rule\'s attribute must equal one of its values -> {id, name, rules}',
    positionals: ['PROJECT_ID'],
    options: { name: str(true), rule: many(true) },
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
    summary: 'rename an audience or replace its rules -> audience',
    positionals: ['AUDIENCE_ID'],
    options: { name: str(), rule: many() },
    run: (args, ctx) =>
      ctx.write('audienceUpdate', {
        audienceId: args.positional('AUDIENCE_ID'),
        name: args.string('name'),
        rules: rules(args, `Usage: flagwire ${kAudienceUpdateUsage}`),
      }),
    human: out.renderAudience,
  }),

  // ---- flags (console-only edits) --------------------------------------------------------------
  command({
    name: 'flag rename',
    usage: 'flag rename FLAG_ID NAME',
    summary: 'rename a flag -> flag',
    positionals: ['FLAG_ID', 'NAME'],
    options: {},
    run: (args, ctx) => ctx.write('flagRename', { flagId: args.positional('FLAG_ID'), name: args.positional('NAME') }),
    human: out.renderFlag,
  }),
  command({
    name: 'flag describe',
    usage: 'flag describe FLAG_ID TEXT',
    summary: 'set a flag\'s description ("" clears it) -> flag',
    positionals: ['FLAG_ID', 'TEXT'],
    options: {},
    run: (args, ctx) => ctx.write('flagDescribe', { flagId: args.positional('FLAG_ID'), text: args.positional('TEXT') }),
    human: out.renderFlag,
  }),
  command({
    name: 'flag tags',
    usage: 'flag tags FLAG_ID T1,T2',
    summary: 'replace a flag\'s tags ("" clears them) -> flag',
    positionals: ['FLAG_ID', 'TAGS'],
    options: {},
    run: (args, ctx) => ctx.write('flagTags', { flagId: args.positional('FLAG_ID'), tags: splitList(args.positional('TAGS')) }),
    human: out.renderFlag,
  }),
  command({
    name: 'flag cohorts',
    usage: 'flag cohorts FLAG_ID C1,C2',
    summary: 'set the flag-wide cohort list of a group flag ("" clears it) -> flag',
    positionals: ['FLAG_ID', 'COHORTS'],
    options: {},
    run: (args, ctx) => ctx.write('flagCohorts', { flagId: args.positional('FLAG_ID'), cohorts: splitList(args.positional('COHORTS')) }),
    human: out.renderFlag,
  }),
  command({
    name: 'flag delete',
    usage: 'flag delete FLAG_ID',
    summary: 'delete a flag -> {id, deleted}',
    positionals: ['FLAG_ID'],
    options: {},
    run: (args, ctx) => ctx.write('flagDelete', { flagId: args.positional('FLAG_ID') }),
    human: out.renderDeleted,
  }),

  // ---- tokens ----------------------------------------------------------------------------------
  command({
    name: 'token create',
    usage: 'token create PROJECT_ID --as USER_ID --name NAME --permission read|write [--env E1,E2] [--expires never|30d|90d|365d]',
    summary: 'create an API token; its secret is shown only this once -> {id, secret, name, permission, environments, expiresAt}',
    positionals: ['PROJECT_ID'],
    options: { as: str(true), name: str(true), permission: str(true), env: many(), expires: str() },
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
    usage: 'token rotate TOKEN_ID --as USER_ID',
    summary: 'revoke a token and create its replacement (same settings); the new secret is shown once -> token',
    positionals: ['TOKEN_ID'],
    options: { as: str(true) },
    run: (args, ctx) => ctx.write('tokenRotate', { tokenId: args.positional('TOKEN_ID'), asUserId: args.required('as') }),
    human: out.renderCreatedToken,
  }),
  command({
    name: 'token revoke',
    usage: 'token revoke TOKEN_ID --as USER_ID',
    summary: 'revoke a token (creator, Admin or Owner) -> {id, revokedAt}',
    positionals: ['TOKEN_ID'],
    options: { as: str(true) },
    run: (args, ctx) => ctx.write('tokenRevoke', { tokenId: args.positional('TOKEN_ID'), asUserId: args.required('as') }),
    human: out.renderRevoked,
  }),
  command({
    name: 'token list',
    usage: 'token list PROJECT_ID',
    summary: 'a project\'s tokens, revoked and expired ones included (never secrets) -> {tokens}',
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
    summary: 'a token\'s last use, recent requests and recent denials -> {lastUsedAt, recent, denials}',
    positionals: ['TOKEN_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r): out.ActivityView => {
        const token = requireToken(r, args.positional('TOKEN_ID'));
        const activity = r.getActivity(token.id);
        return { tokenId: token.id, lastUsedAt: activity?.lastUsedAt ?? null, recent: activity?.recent ?? [], denials: activity?.denials ?? [] };
      }),
    human: out.renderActivity,
  }),

  // ---- audit and mail --------------------------------------------------------------------------
  command({
    name: 'audit',
    usage: `audit PROJECT_ID [--limit N] [--before SEQ]`,
    summary: `a project's audit log, newest first (default ${kDefaultAuditLimit}, at most ${kMaxAuditLimit}; --before pages back) -> {entries, nextBefore}`,
    positionals: ['PROJECT_ID'],
    options: { limit: str(), before: str() },
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
];

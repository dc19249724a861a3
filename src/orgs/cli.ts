// The command line's organisation and user commands (src/cli/command/cli-command.ts says what a command is).
import type { Org, Plan, Role, Standing, User } from '../model/accounts.js';
import { kOperator } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import { requireUser } from '../model/records/lookups.js';
import { hashPassword, kMinPasswordLength, passwordProblem } from '../model/passwords.js';
import { kSessionCommands } from '../sessions/command-table.js';
import { command, type CliCommand, str } from '../cli/command/cli-command.js';
import * as out from '../cli/command/output.js';
import { readSecretLine } from '../cli/command/read-secret.js';
import { kOrgCommands } from './command-table.js';
import { listOrgs, listUsers } from '../model/records/org-records.js';

export const kPlanHelp =
  'free (default), pro, teams, enterprise or teams-trial; the Management API and audiences need teams, enterprise or an active teams-trial';
const kTrialEndsHelp = 'when a teams-trial ends: a date (2031-06-30, UTC midnight) or a date-time with a zone; default 14 days from now';
const kOrgCreateUsage = 'org create --name NAME [--plan free|pro|teams|enterprise|teams-trial] [--trial-ends ISO-8601]';

export const kOrgCli: readonly CliCommand[] = [
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
      ctx.write(kOrgCommands.orgCreate, {
        name: args.required('name'),
        plan: args.string('plan') as Plan | undefined,
        trialEndsAt: args.isoTime('trial-ends'),
        principal: kOperator,
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
      ctx.write(kOrgCommands.orgUpdate, {
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
      ctx.write(kOrgCommands.orgAddMember, {
        orgId: args.positional('ORG_ID'),
        userId: args.positional('USER_ID'),
        role: args.required('role') as Role,
        principal: kOperator,
      }),
    human: out.renderMembership,
  }),
  command({
    name: 'org list',
    usage: 'org list',
    summary: 'every organisation, oldest first -> {orgs}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r) => ({ orgs: listOrgs(r) })),
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
    run: (args, ctx) => ctx.write(kOrgCommands.userCreate, { email: args.required('email'), name: args.string('name') }),
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
      const password = await readSecretLine(ctx.stdin);
      const problem = passwordProblem(password);
      if (problem !== null) throw new FlagwireError('INVALID_REQUEST', problem);
      return ctx.write(kSessionCommands.userPassword, { userId, passwordHash: await hashPassword(password) });
    },
    human: out.renderPasswordSet,
  }),
  command({
    name: 'user list',
    usage: 'user list',
    summary: 'every user, oldest first -> {users}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r) => ({ users: listUsers(r) })),
    human: (result: { users: User[] }) => out.renderUsers(result.users),
  }),
];

// The command line's project, environment and audience commands (src/cli/command/cli-command.ts says what a command is).
import { kOperator } from '../actor/audit-actor.js';
import type { Audience, AudienceRule, Project, ProjectKind } from '../model/projects.js';
import { requireOrg, requireProject, requireUser } from '../model/records/lookups.js';
import { type Args, splitList, UsageError } from '../cli/command/args.js';
import { command, type CliCommand, many, str } from '../cli/command/cli-command.js';
import * as out from '../cli/command/output.js';
import { kProjectCommands } from './command-table.js';
import { listProjects, listPersonalProjects, listOrgProjects, listAudiences } from '../model/records/project-records.js';

const kRuleHelp = 'ATTR=V1[,V2...]: the request attribute ATTR must equal one of the values; repeat for more rules (all must match)';
const kProjectCreateUsage = 'project create --name NAME (--org ORG_ID | --owner USER_ID) [--kind single|multi] [--env NAME]...';
const kProjectListUsage = 'project list [--org ORG_ID | --owner USER_ID]';
const kAudienceCreateUsage = 'audience create PROJECT_ID --name NAME --rule ATTR=V1[,V2...] [--rule ...]';
const kAudienceUpdateUsage = 'audience update AUDIENCE_ID [--name NAME] [--rule ATTR=V1[,V2...]]...';

/** `--rule plan=beta,pro` -> {attribute: 'plan', values: ['beta', 'pro']}. */
function parseRule(text: string, help: string): AudienceRule {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--rule must look like ATTR=V1[,V2...], not "${text}"`, help);
  return { attribute: text.slice(0, eq).trim(), values: splitList(text.slice(eq + 1)) };
}

function rules(args: Args, help: string): AudienceRule[] | undefined {
  return args.all('rule')?.map((r) => parseRule(r, help));
}

export const kProjectCli: readonly CliCommand[] = [
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
      return ctx.write(kProjectCommands.projectCreate, {
        name: args.required('name'),
        orgId,
        ownerUserId,
        kind: args.string('kind') as ProjectKind | undefined,
        environments: args.list('env'),
        principal: kOperator,
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
        const projects =
          orgId !== undefined
            ? listOrgProjects(r, orgId)
            : ownerUserId !== undefined
              ? listPersonalProjects(r, ownerUserId)
              : listProjects(r);
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
    run: (args, ctx) =>
      ctx.write(kProjectCommands.envAdd, { principal: kOperator, projectId: args.positional('PROJECT_ID'), name: args.positional('NAME') }),
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
      ctx.write(kProjectCommands.envRename, {
        principal: kOperator,
        projectId: args.positional('PROJECT_ID'),
        from: args.positional('OLD'),
        to: args.positional('NEW'),
      }),
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
      ctx.write(kProjectCommands.audienceCreate, {
        principal: kOperator,
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
      ctx.write(kProjectCommands.audienceUpdate, {
        principal: kOperator,
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
    run: (args, ctx) => ctx.read((r) => ({ audiences: listAudiences(r, requireProject(r, args.positional('PROJECT_ID')).id) })),
    human: (result: { audiences: Audience[] }) => out.renderAudiences(result.audiences),
  }),
];

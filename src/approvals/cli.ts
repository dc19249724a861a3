// Approvals on the command line (docs/approvals.md): the policy set, cleared and shown per environment,
// and change requests listed, shown and decided. Approving and rejecting name the person (--as USER_ID):
// the operator is nobody's second pair of eyes.
import { bool, command, type CliCommand, many, str } from '../cli/command/cli-command.js';
import { formatTime, renderFields, renderTable } from '../cli/command/output.js';
import { UsageError } from '../cli/command/args.js';
import { principalOf } from '../actor/audit-actor.js';
import { kRoles, type Role } from '../model/accounts.js';
import { requireProject } from '../model/records/lookups.js';
import type { ApprovalRule, Project } from '../model/projects.js';
import { kApprovalCommands } from './command-table.js';
import { envName, kMaxRequiredApprovals, rulesOf } from './policy.js';
import { requestView, type ChangeRequestView } from './request-view.js';
import { kRequestStatuses, type RequestStatus } from './records.js';
import { listRequests, requireRequest } from './requests.js';

const kAsPerson = 'the person acting (a user id): the audit log names them';
const kAsDecider = 'the person deciding (a user id), of a role the policy allows; required: only a person approves or rejects';
const kAsAdmin = 'the person setting it (a user id), an Admin or Owner of the organisation; left out, the operator';
const REQUEST_ID = 'a change request id (chr_...; `flagwire request list PROJECT_ID` shows them)';

function renderPolicy(project: Project): string {
  const rules = rulesOf(project);
  if (rules.length === 0) return `Project ${project.id} has no approval policy: every change applies at once.`;
  return renderTable(
    ['ENVIRONMENT', 'REQUIRED', 'ROLES', 'SELF', 'BYPASS TOKENS'],
    rules.map((rule: ApprovalRule) => [
      envName(rule.env),
      String(rule.required),
      rule.roles.join(','),
      rule.allowSelf ? 'yes' : 'no',
      rule.bypassTokens.join(',') || '-',
    ]),
  );
}

function renderRequests(result: { changeRequests: ChangeRequestView[] }): string {
  if (result.changeRequests.length === 0) return 'No change requests.';
  return renderTable(
    ['ID', 'STATUS', 'APPROVALS', 'AUTHOR', 'CREATED', 'TITLE'],
    result.changeRequests.map((q) => [
      q.id,
      q.stale ? `${q.status} (stale)` : q.status,
      `${q.approvals.length}/${q.required}`,
      q.authoredBy,
      formatTime(q.createdAt),
      q.title,
    ]),
  );
}

function renderRequest(q: ChangeRequestView): string {
  const lines = [
    renderFields([
      ['id', q.id],
      ['status', q.status],
      ['title', q.title],
      ['summary', q.summary],
      ['environments', q.environments.map(envName).join(', ')],
      ['version', String(q.version)],
      ['author', `${q.authoredBy} (${[q.author, ...q.coAuthors].map((a) => a.id).join(', ')})`],
      ['created', formatTime(q.createdAt)],
      [
        'approvals',
        `${q.approvals.length} of ${q.required}${q.approvals.length > 0 ? `: ${q.approvals.map((a) => a.name).join(', ')}` : ''}`,
      ],
      ...q.lapsed.map((a) => ['lapsed', `${a.name}'s approval of ${formatTime(a.at)} does not count: ${a.why}`] as const),
      ...(q.decided === null
        ? []
        : ([['decided', `${q.decided.name} at ${formatTime(q.decided.at)}${q.decided.text ? `: ${q.decided.text}` : ''}`]] as const)),
      ...(q.problem === null ? [] : ([['cannot apply', q.problem]] as const)),
    ]),
    '',
    renderTable(
      ['RECORD', 'NAME', 'FIELD', q.status === 'pending' ? 'NOW' : 'BEFORE', 'PROPOSED'],
      q.diff.map((d) => [d.record, d.name, d.field || '(whole record)', JSON.stringify(d.current), JSON.stringify(d.proposed)]),
    ),
  ];
  for (const c of q.comments) lines.push('', `${c.name} at ${formatTime(c.at)}: ${c.text}`);
  return lines.join('\n');
}

function statusOption(raw: string | undefined): RequestStatus | undefined {
  if (raw === undefined) return undefined;
  if (!(kRequestStatuses as readonly string[]).includes(raw))
    throw new UsageError(`--status must be one of ${kRequestStatuses.join(', ')}`, '');
  return raw as RequestStatus;
}

function rolesOption(raw: string[] | undefined): Role[] | undefined {
  if (raw === undefined) return undefined;
  const unknown = raw.filter((role) => !(kRoles as readonly string[]).includes(role));
  if (unknown.length > 0) throw new UsageError(`--roles takes ${kRoles.join(', ')}; not ${unknown.join(', ')}`, '');
  return raw as Role[];
}

export const kApprovalCli: readonly CliCommand[] = [
  command({
    name: 'approvals set',
    usage:
      'approvals set PROJECT_ID [--env NAME] --required N [--roles ROLE,...] [--allow-self] [--bypass-token TOKEN_ID]... [--as USER_ID]',
    summary:
      'guard an environment: a change to it becomes a change request until N people approve it (every surface: API, console, command line, flags as code, release plans) -> the project',
    positionals: ['PROJECT_ID'],
    options: {
      env: str('NAME', 'the environment (a multi-environment project; left out on a single-environment one)'),
      required: str('N', `approvals a change needs, 1 to ${kMaxRequiredApprovals}`, true),
      roles: many('ROLE,...', `who may approve: of ${kRoles.join(', ')} (default owner,admin,editor)`),
      'allow-self': bool("the change's author may approve it too (counting as one)"),
      'bypass-token': many('TOKEN_ID', "a token whose changes apply without approval (a pipeline's deliberate choice); repeat for more"),
      as: str('USER_ID', kAsAdmin),
    },
    run: (args, ctx) =>
      ctx.write(kApprovalCommands.approvalsSet, {
        projectId: args.positional('PROJECT_ID'),
        env: args.string('env') ?? null,
        required: args.integer('required', 1, kMaxRequiredApprovals)!,
        roles: rolesOption(args.list('roles')),
        allowSelf: args.flag('allow-self'),
        bypassTokens: args.list('bypass-token') ?? [],
        principal: principalOf(args.string('as')),
      }),
    human: renderPolicy,
  }),
  command({
    name: 'approvals clear',
    usage: 'approvals clear PROJECT_ID [--env NAME] [--as USER_ID]',
    summary: 'stop guarding an environment: changes to it apply at once again (pending requests stay, to be decided) -> the project',
    positionals: ['PROJECT_ID'],
    options: { env: str('NAME', 'the environment (left out on a single-environment project)'), as: str('USER_ID', kAsAdmin) },
    run: (args, ctx) =>
      ctx.write(kApprovalCommands.approvalsClear, {
        projectId: args.positional('PROJECT_ID'),
        env: args.string('env') ?? null,
        principal: principalOf(args.string('as')),
      }),
    human: renderPolicy,
  }),
  command({
    name: 'approvals show',
    usage: 'approvals show PROJECT_ID',
    summary: "a project's approval policy, per guarded environment -> the project (its approvals: a rule per guarded environment)",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) => ctx.read((r) => requireProject(r, args.positional('PROJECT_ID'))),
    human: renderPolicy,
  }),
  command({
    name: 'request list',
    usage: 'request list PROJECT_ID [--status STATUS]',
    summary: "a project's change requests, newest first -> {changeRequests}",
    positionals: ['PROJECT_ID'],
    options: { status: str('STATUS', `only ${kRequestStatuses.join(', ')} ones`) },
    run: (args, ctx) =>
      ctx.read((r) => {
        const project = requireProject(r, args.positional('PROJECT_ID'));
        return { changeRequests: listRequests(r, project.id, statusOption(args.string('status'))).map((q) => requestView(r, q)) };
      }),
    human: renderRequests,
  }),
  command({
    name: 'request show',
    usage: 'request show REQUEST_ID',
    summary: 'a change request: what it changes against the flags now, its approvals and comments -> the request',
    positionals: ['REQUEST_ID'],
    argumentHelp: { REQUEST_ID },
    options: {},
    run: (args, ctx) => ctx.read((r) => requestView(r, requireRequest(r, args.positional('REQUEST_ID'), null))),
    human: renderRequest,
  }),
  command({
    name: 'request approve',
    usage: 'request approve REQUEST_ID --version N --as USER_ID [--text TEXT]',
    summary:
      'approve the version of a change request you read (`request show`); the approval that completes it applies it, as one revision -> the request',
    positionals: ['REQUEST_ID'],
    argumentHelp: { REQUEST_ID },
    options: {
      version: str(
        'N',
        'the version you approve, as `request show` printed it: refused (Change request changed) if it was edited since',
        true,
      ),
      as: str('USER_ID', kAsDecider, true),
      text: str('TEXT', 'a note kept with the approval'),
    },
    run: (args, ctx) =>
      ctx.write(kApprovalCommands.requestApprove, {
        requestId: args.positional('REQUEST_ID'),
        principal: principalOf(args.required('as')),
        text: args.string('text'),
        ifVersion: args.integer('version', 1, Number.MAX_SAFE_INTEGER)!,
      }),
    human: renderRequest,
  }),
  command({
    name: 'request reject',
    usage: 'request reject REQUEST_ID --as USER_ID [--text TEXT]',
    summary: 'reject a change request: it is never applied -> the request',
    positionals: ['REQUEST_ID'],
    argumentHelp: { REQUEST_ID },
    options: { as: str('USER_ID', kAsDecider, true), text: str('TEXT', 'why') },
    run: (args, ctx) =>
      ctx.write(kApprovalCommands.requestReject, {
        requestId: args.positional('REQUEST_ID'),
        principal: principalOf(args.required('as')),
        text: args.string('text'),
      }),
    human: renderRequest,
  }),
  command({
    name: 'request withdraw',
    usage: 'request withdraw REQUEST_ID [--as USER_ID]',
    summary: 'withdraw a change request you made (left out --as: one the operator made) -> the request',
    positionals: ['REQUEST_ID'],
    argumentHelp: { REQUEST_ID },
    options: { as: str('USER_ID', kAsPerson) },
    run: (args, ctx) =>
      ctx.write(kApprovalCommands.requestWithdraw, { requestId: args.positional('REQUEST_ID'), principal: principalOf(args.string('as')) }),
    human: renderRequest,
  }),
  command({
    name: 'request comment',
    usage: 'request comment REQUEST_ID --text TEXT [--as USER_ID]',
    summary: 'comment on a change request -> the request',
    positionals: ['REQUEST_ID'],
    argumentHelp: { REQUEST_ID },
    options: { text: str('TEXT', 'the comment', true), as: str('USER_ID', kAsPerson) },
    run: (args, ctx) =>
      ctx.write(kApprovalCommands.requestComment, {
        requestId: args.positional('REQUEST_ID'),
        principal: principalOf(args.string('as')),
        text: args.required('text'),
      }),
    human: renderRequest,
  }),
];

// Tokens on the command line: create, rotate, revoke, list, and a token's recorded activity.
import { command, type CliCommand, many, str } from '../cli/command/cli-command.js';
import * as tokenOut from './cli-output.js';
import { principalOf } from '../actor/audit-actor.js';
import { requireProject, requireToken } from '../model/records/lookups.js';
import { kMaxGracePeriodSeconds, tokenView, type TokenView } from './token-commands.js';
import { kTokenCommands } from './command-table.js';
import { getActivity, listTokens } from '../model/records/token-records.js';

const kAsTokenUser = 'the person acting (a user id); the audit log names them (actor user:<id>)';

export const kTokenCli: readonly CliCommand[] = [
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
      ctx.write(kTokenCommands.tokenCreate, {
        projectId: args.positional('PROJECT_ID'),
        principal: principalOf(args.required('as')),
        name: args.required('name'),
        permission: args.required('permission'),
        environments: args.list('env'),
        expires: args.string('expires'),
      }),
    human: tokenOut.renderCreatedToken,
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
      ctx.write(kTokenCommands.tokenRotate, {
        tokenId: args.positional('TOKEN_ID'),
        principal: principalOf(args.required('as')),
        gracePeriodSeconds: args.integer('grace-seconds', 0, kMaxGracePeriodSeconds),
      }),
    human: tokenOut.renderRotatedToken,
  }),
  command({
    name: 'token revoke',
    usage: 'token revoke TOKEN_ID --as USER_ID',
    summary: 'revoke a token (creator, Admin or Owner) -> {id, revokedAt}',
    positionals: ['TOKEN_ID'],
    options: { as: str('USER_ID', `${kAsTokenUser}; revoking needs the token's creator, or an Admin or Owner`, true) },
    run: (args, ctx) =>
      ctx.write(kTokenCommands.tokenRevoke, { tokenId: args.positional('TOKEN_ID'), principal: principalOf(args.required('as')) }),
    human: tokenOut.renderRevoked,
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
        return { tokens: listTokens(r, project.id).map(tokenView) };
      }),
    human: (result: { tokens: TokenView[] }, now) => tokenOut.renderTokens(result.tokens, now),
  }),
  command({
    name: 'token activity',
    usage: 'token activity TOKEN_ID',
    summary: "a token's last use, recent requests and recent denials -> {lastUsedAt, recent, denials}",
    positionals: ['TOKEN_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r): tokenOut.ActivityView => {
        const token = requireToken(r, args.positional('TOKEN_ID'));
        const activity = getActivity(r, token.id);
        return {
          tokenId: token.id,
          lastUsedAt: activity?.lastUsedAt ?? null,
          recent: activity?.recent ?? [],
          denials: activity?.denials ?? [],
        };
      }),
    human: tokenOut.renderActivity,
  }),
];

// The command line's client key commands (docs/cli.md): make, list, revoke.
import { principalOf } from '../actor/audit-actor.js';
import { splitList } from '../cli/command/args.js';
import { type CliCommand, command, kAsFlagEditor, str } from '../cli/command/cli-command.js';
import { formatTime, renderNewSecret, renderTable } from '../cli/command/output.js';
import { requireProject } from '../model/records/lookups.js';
import { jsonBody } from '../model/request-body.js';
import { kClientKeyCommands } from './command-table.js';
import { kClientKeyUses } from './client-key.js';
import { listClientKeys } from './records.js';
import { type ClientKeyBody, type ClientKeyCreated, type ClientKeyList, type ClientKeyRevoked, clientKeyView } from './schemas.js';

export const kClientKeyCli: readonly CliCommand[] = [
  command({
    name: 'client-key create',
    usage: `client-key create PROJECT_ID --name NAME --uses ${kClientKeyUses.join(',')} [--env NAME] [--as USER_ID]`,
    summary: 'make a public key for browsers and apps, which may only do what its uses name -> the key, with its secret (shown only now)',
    positionals: ['PROJECT_ID'],
    options: {
      name: str('NAME', "the key's name (lists and the audit log show it)", true),
      uses: str('LIST', `what it may be used for, comma-separated: ${kClientKeyUses.join(', ')}`, true),
      env: str('NAME', 'its environment: required on a multi-environment project'),
      as: str('USER_ID', kAsFlagEditor),
    },
    run: (args, ctx) => {
      const body: Record<string, unknown> = { name: args.required('name'), uses: splitList(args.required('uses')) };
      const env = args.string('env');
      if (env !== undefined) body.environment = env;
      const input = {
        principal: principalOf(args.string('as')),
        projectId: args.positional('PROJECT_ID'),
        received: jsonBody(JSON.stringify(body)),
      };
      return ctx.write(kClientKeyCommands.clientKeyCreate, input);
    },
    human: (key: ClientKeyCreated) =>
      renderNewSecret('Client key (shown only now; it is public: a browser or app sends it as its bearer):', key.secret, [
        ['id', key.id],
        ['name', key.name],
        ['environment', key.environment ?? '-'],
        ['uses', key.uses.join(',')],
        ['created by', key.createdBy],
      ]),
  }),
  command({
    name: 'client-key list',
    usage: 'client-key list PROJECT_ID',
    summary: "a project's client keys, revoked ones too, never their secrets -> {clientKeys: [...]}",
    positionals: ['PROJECT_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read(
        (r): ClientKeyList => ({ clientKeys: listClientKeys(r, requireProject(r, args.positional('PROJECT_ID')).id).map(clientKeyView) }),
      ),
    human: (result: ClientKeyList) => renderClientKeys(result.clientKeys),
  }),
  command({
    name: 'client-key revoke',
    usage: 'client-key revoke KEY_ID [--as USER_ID]',
    summary: 'revoke a client key: refused from then on -> {id, revokedAt}',
    positionals: ['KEY_ID'],
    argumentHelp: { KEY_ID: 'a client key id (ck_...; `flagwire client-key list PROJECT_ID` shows them)' },
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kClientKeyCommands.clientKeyRevoke, { principal: principalOf(args.string('as')), keyId: args.positional('KEY_ID') }),
    human: (result: ClientKeyRevoked) => `Revoked client key ${result.id} at ${formatTime(result.revokedAt)}.`,
  }),
];

function renderClientKeys(keys: readonly ClientKeyBody[]): string {
  if (keys.length === 0) return 'No client keys.';
  return renderTable(
    ['ID', 'NAME', 'ENVIRONMENT', 'USES', 'STATUS', 'CREATED BY', 'CREATED'],
    keys.map((k) => [
      k.id,
      k.name,
      k.environment ?? '-',
      k.uses.join(','),
      k.revokedAt === null ? 'active' : `revoked ${formatTime(k.revokedAt)}`,
      k.createdBy,
      formatTime(k.createdAt),
    ]),
  );
}

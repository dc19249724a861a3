// Relay keys on the command line: create (the secret shown once), list, revoke. Only here: a relay key
// is the operator's, as the data dir and the node's settings are (docs/decisions.md: The relay's upstream).
import { command, type CliCommand, str } from '../cli/command/cli-command.js';
import { formatTime, renderNewSecret, renderTable } from '../cli/command/output.js';
import type { RelayKeyView } from './records.js';
import { listRelayKeys, relayKeyView } from './relay-key-commands.js';
import { kRelayKeyCommands } from './command-table.js';

function renderCreatedKey(key: RelayKeyView & { secret: string }): string {
  return renderNewSecret(
    'Relay key secret (shown only now; give it to the relay as --upstream-token, it cannot be shown again):',
    key.secret,
    [
      ['id', key.id],
      ['name', key.name],
      ['created', formatTime(key.createdAt)],
    ],
  );
}

function renderKeys(result: { keys: RelayKeyView[] }): string {
  if (result.keys.length === 0) return 'No relay keys.';
  return renderTable(
    ['ID', 'NAME', 'CREATED', 'REVOKED'],
    result.keys.map((k) => [k.id, k.name, formatTime(k.createdAt), formatTime(k.revokedAt)]),
  );
}

export const kRelayCli: readonly CliCommand[] = [
  command({
    name: 'relay key create',
    usage: 'relay key create --name NAME',
    summary:
      'a key a relay follows this node with (flagwire serve --upstream URL --upstream-token SECRET); its secret is shown only this once -> {id, name, createdAt, revokedAt, secret}',
    positionals: [],
    options: { name: str('NAME', 'what the key is for (the relay or region it is given to)', true) },
    run: (args, ctx) => ctx.write(kRelayKeyCommands.relayKeyCreate, { name: args.required('name') }),
    human: renderCreatedKey,
  }),
  command({
    name: 'relay key list',
    usage: 'relay key list',
    summary: 'every relay key, revoked ones included (never secrets) -> {keys}',
    positionals: [],
    options: {},
    run: (_args, ctx) => ctx.read((r): { keys: RelayKeyView[] } => ({ keys: listRelayKeys(r).map(relayKeyView) })),
    human: renderKeys,
  }),
  command({
    name: 'relay key revoke',
    usage: 'relay key revoke KEY_ID',
    summary: "revoke a relay key: its relays' streams end within 10 seconds, and it opens none again -> {id, revokedAt}",
    positionals: ['KEY_ID'],
    argumentHelp: { KEY_ID: 'a relay key id (rk_...; `flagwire relay key list` shows them)' },
    options: {},
    run: (args, ctx) => ctx.write(kRelayKeyCommands.relayKeyRevoke, { keyId: args.positional('KEY_ID') }),
    human: (result: { id: string; revokedAt: number }) => `Revoked relay key ${result.id} at ${formatTime(result.revokedAt)}.`,
  }),
];

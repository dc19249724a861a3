// SCIM provisioning's settings on the command line (docs/cli.md): enable (or rotate) an organisation's
// secret, shown once; disable; map a group's displayName to a role; show the settings.
import { principalOf } from '../actor/audit-actor.js';
import { command, type CliCommand, str } from '../cli/command/cli-command.js';
import { formatTime, renderNewSecret, renderTable } from '../cli/command/output.js';
import { requireOrg } from '../model/records/lookups.js';
import { kScimSettingsRecords } from './records.js';
import { kScimBasePath } from './resources.js';
import { type ScimSettingsView, settingsView } from './scim-commands.js';
import { kScimCommands } from './command-table.js';

const kAsOwner = 'the Owner acting (a user id; the audit log names them); without it, the operator';

/** What `scim show` answers: the settings, or only that it is off. */
type ScimShown = (ScimSettingsView & { enabled: true }) | { orgId: string; enabled: false };

function renderSettings(settings: ScimShown | ScimSettingsView): string {
  if ('enabled' in settings && !settings.enabled) return 'SCIM is not enabled.';
  const mappings = Object.entries(settings.groupRoles);
  return [
    `SCIM is enabled at ${kScimBasePath} (secret made ${formatTime(settings.secretAt)}).`,
    mappings.length === 0 ? 'No group maps to a role: provisioned people are Viewers.' : renderTable(['GROUP', 'ROLE'], mappings),
  ].join('\n');
}

export const kScimCli: readonly CliCommand[] = [
  command({
    name: 'scim enable',
    usage: 'scim enable ORG_ID [--as USER_ID]',
    summary:
      'enable SCIM provisioning for an organisation, or rotate its secret (the old one stops at once); the secret is shown only this once -> {orgId, secret, rotated, secretAt, groupRoles}',
    positionals: ['ORG_ID'],
    options: { as: str('USER_ID', kAsOwner) },
    run: (args, ctx) =>
      ctx.write(kScimCommands.scimEnable, { orgId: args.positional('ORG_ID'), principal: principalOf(args.string('as')) }),
    human: (result: ScimSettingsView & { secret: string; rotated: boolean }) =>
      renderNewSecret(
        `SCIM secret (shown only now; give it to the identity provider as its bearer token for ${kScimBasePath}):`,
        result.secret,
        [
          ['organisation', result.orgId],
          ['made', formatTime(result.secretAt)],
          ['rotated', result.rotated ? 'yes: the old secret no longer works' : 'no: SCIM is enabled'],
        ],
      ),
  }),
  command({
    name: 'scim disable',
    usage: 'scim disable ORG_ID [--as USER_ID]',
    summary: 'disable SCIM: its secret stops working; what it provisioned stays -> {orgId, disabled}',
    positionals: ['ORG_ID'],
    options: { as: str('USER_ID', kAsOwner) },
    run: (args, ctx) =>
      ctx.write(kScimCommands.scimDisable, { orgId: args.positional('ORG_ID'), principal: principalOf(args.string('as')) }),
    human: (result: { orgId: string; disabled: boolean }) =>
      result.disabled ? `SCIM disabled for ${result.orgId}.` : `SCIM was not enabled for ${result.orgId}.`,
  }),
  command({
    name: 'scim group-role',
    usage: 'scim group-role ORG_ID --group DISPLAY_NAME --role owner|admin|editor|viewer|none [--as USER_ID]',
    summary:
      "map a SCIM group's displayName to an organisation role (none: unmap); its provisioned members' roles follow at once -> {orgId, groupRoles, ...}",
    positionals: ['ORG_ID'],
    options: {
      group: str('DISPLAY_NAME', "the group's displayName as the identity provider sends it (matched without case)", true),
      role: str('ROLE', 'owner, admin, editor or viewer; none removes the mapping', true),
      as: str('USER_ID', kAsOwner),
    },
    run: (args, ctx) => {
      const role = args.required('role');
      return ctx.write(kScimCommands.scimGroupRole, {
        orgId: args.positional('ORG_ID'),
        principal: principalOf(args.string('as')),
        group: args.required('group'),
        role: role === 'none' ? null : role,
      });
    },
    human: renderSettings,
  }),
  command({
    name: 'scim show',
    usage: 'scim show ORG_ID',
    summary: "an organisation's SCIM settings (never the secret) -> {orgId, enabled, createdAt, secretAt, groupRoles}",
    positionals: ['ORG_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r): ScimShown => {
        const org = requireOrg(r, args.positional('ORG_ID'));
        const settings = r.getKeyed(kScimSettingsRecords, org.id);
        return settings === undefined ? { orgId: org.id, enabled: false } : { ...settingsView(settings), enabled: true };
      }),
    human: renderSettings,
  }),
];

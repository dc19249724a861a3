// Single sign-on's settings on the command line (docs/cli.md: Single sign-on): show them, change them
// (the options given; the client secret read from a file, never from the command line, which other users
// of the machine see in the process list), and remove them.
import { principalOf } from '../actor/audit-actor.js';
import { type CliCommand, command, many, readFileOption, str } from '../cli/command/cli-command.js';
import { formatTime, renderTable } from '../cli/command/output.js';
import { FlagwireError } from '../errors.js';
import { requireOrg } from '../model/records/lookups.js';
import { jsonBody } from '../model/request-body.js';
import { kSsoSettingsRecords } from './records.js';
import type { SsoSettingsPatch, SsoSettingsView } from './schemas.js';
import { ssoView } from './sso-commands.js';
import { kSsoCommands } from './command-table.js';

const kAsOwner = 'the Owner acting (a user id; the audit log names them); without it, the operator';
const kSetUsage =
  'sso set ORG_ID [--issuer URL] [--client-id ID] [--client-secret-file FILE] [--scope SCOPE ...] [--groups-claim CLAIM] [--group-role GROUP=ROLE ...] [--create-members on|off] [--sso-only on|off] [--break-glass USER_ID|none] [--as USER_ID]';

function renderSettings(view: SsoSettingsView): string {
  if (!view.enabled) return `Single sign-on is not configured for ${view.orgId}: people sign in with passwords.`;
  const mappings = Object.entries(view.groupRoles);
  return [
    renderTable(
      ['SETTING', 'VALUE'],
      [
        ['issuer', view.issuer ?? ''],
        ['client id', view.clientId ?? ''],
        ['scopes', ['openid', ...view.scopes].join(' ')],
        ['groups claim', view.groupsClaim],
        ['create members', view.createMembers ? 'on' : 'off'],
        ['SSO only', view.ssoOnly ? `on (break-glass Owner ${view.breakGlassUserId})` : 'off'],
        ['sign-in', view.signInPath],
        ['redirect URI', `<base URL>${view.redirectPath}`],
        ['changed', view.updatedAt === null ? '' : formatTime(view.updatedAt)],
      ],
    ),
    mappings.length === 0 ? 'No group maps to a role: roles are given in Flagwire.' : renderTable(['GROUP', 'ROLE'], mappings),
  ].join('\n');
}

function onOff(option: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new FlagwireError('INVALID_REQUEST', `--${option} must be on or off, not "${value}"`);
  return value === 'on';
}

function groupRoles(pairs: readonly string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  return Object.fromEntries(
    pairs.map((pair) => {
      const eq = pair.lastIndexOf('=');
      if (eq <= 0) throw new FlagwireError('INVALID_REQUEST', `--group-role must be GROUP=ROLE, not "${pair}"`);
      return [pair.slice(0, eq), pair.slice(eq + 1)];
    }),
  );
}

export const kSsoCli: readonly CliCommand[] = [
  command({
    name: 'sso show',
    usage: 'sso show ORG_ID',
    summary: "an organisation's single sign-on settings (never the client secret) -> {orgId, enabled, issuer, clientId, ...}",
    positionals: ['ORG_ID'],
    options: {},
    run: (args, ctx) =>
      ctx.read((r) => {
        const org = requireOrg(r, args.positional('ORG_ID'));
        return ssoView(org.id, r.getKeyed(kSsoSettingsRecords, org.id));
      }),
    human: renderSettings,
  }),
  command({
    name: 'sso set',
    usage: kSetUsage,
    summary:
      "configure an organisation's OpenID Connect sign-in: the options given change, the others stay; the first needs --issuer, --client-id and --client-secret-file -> the settings",
    positionals: ['ORG_ID'],
    options: {
      issuer: str('URL', "the identity provider's issuer (discovery at URL/.well-known/openid-configuration)"),
      'client-id': str('ID', "Flagwire's client id at the identity provider"),
      'client-secret-file': str('FILE', 'a file holding the client secret (kept, never shown again)'),
      scope: many('SCOPE', 'a scope to ask for besides openid (repeat; given, it replaces the list)'),
      'groups-claim': str('CLAIM', 'the ID token claim listing the groups (groups by default)'),
      'group-role': many('GROUP=ROLE', 'a group and the organisation role its members hold (repeat; given, it replaces the mappings)'),
      'create-members': str('on|off', 'make a person unknown here a member at their first sign-in (never while SCIM is on)'),
      'sso-only': str('on|off', 'refuse password sign-in to the members, except the break-glass Owner'),
      'break-glass': str('USER_ID|none', 'the Owner who keeps signing in with a password while SSO only is on'),
      as: str('USER_ID', kAsOwner),
    },
    run: (args, ctx) => {
      const breakGlass = args.string('break-glass');
      const secretFile = args.string('client-secret-file');
      const scopes = args.all('scope');
      const body: Record<keyof SsoSettingsPatch, unknown> = {
        issuer: args.string('issuer'),
        clientId: args.string('client-id'),
        clientSecret: secretFile === undefined ? undefined : readFileOption(args, kSetUsage, 'client-secret-file').trim(),
        scopes,
        groupsClaim: args.string('groups-claim'),
        groupRoles: groupRoles(args.all('group-role') ?? []),
        createMembers: onOff('create-members', args.string('create-members')),
        ssoOnly: onOff('sso-only', args.string('sso-only')),
        breakGlassUserId: breakGlass === 'none' ? null : breakGlass,
      };
      return ctx.write(kSsoCommands.ssoSet, {
        orgId: args.positional('ORG_ID'),
        principal: principalOf(args.string('as')),
        received: jsonBody(JSON.stringify(body)),
      });
    },
    human: renderSettings,
  }),
  command({
    name: 'sso remove',
    usage: 'sso remove ORG_ID [--as USER_ID]',
    summary: 'turn single sign-on off: its members sign in with passwords again -> {orgId, removed}',
    positionals: ['ORG_ID'],
    options: { as: str('USER_ID', kAsOwner) },
    run: (args, ctx) => ctx.write(kSsoCommands.ssoRemove, { orgId: args.positional('ORG_ID'), principal: principalOf(args.string('as')) }),
    human: (result: { orgId: string; removed: boolean }) =>
      result.removed ? `Single sign-on removed for ${result.orgId}.` : `Single sign-on was not configured for ${result.orgId}.`,
  }),
];

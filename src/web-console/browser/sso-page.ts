// An organisation's single sign-on settings (docs/sso.md), for its Owners: the identity provider, the
// client (its secret write-only), scopes, the groups claim and group roles, whether a first sign-in
// makes a member, SSO only with its break-glass Owner; and removing it. One form sends only what
// changed (PATCH); a refusal (the lock-out rule's among them) is said in the server's own words.
import { askToConfirm } from './confirm-dialog.js';
import { api, field, h, onSubmit, onThisPage, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, show } from './shell.js';
import type { MembersView, SsoSettingsView } from './views.js';

export async function ssoPage(orgId: string): Promise<void> {
  const path = `orgs/${encodeURIComponent(orgId)}/sso`;
  const [data, members] = await Promise.all([
    api<SsoSettingsView>('GET', path),
    api<MembersView>('GET', `orgs/${encodeURIComponent(orgId)}/members`),
  ]);
  const reload = onThisPage(() => ssoPage(orgId).catch(sayError));
  const title = `Single sign-on of ${members.org.name}`;
  show(
    title,
    crumbs([`#/orgs/${data.orgId}/members`, `Members of ${members.org.name}`]),
    h('h1', {}, title),
    h(
      'p',
      {},
      data.enabled
        ? `On since its last change, ${formatTime(data.updatedAt)}. Its people sign in at `
        : 'Off. Register Flagwire at your identity provider as a web application; its people will sign in at ',
      h('code', {}, new URL(data.signInPath, location.origin).href),
      ', and the redirect URI to register is ',
      h('code', {}, new URL(data.redirectPath, location.origin).href),
      '.',
    ),
    settingsForm(path, data, members, reload),
    data.enabled ? removeButton(path, reload) : null,
  );
}

/** `group=role` per line, as the textarea shows the mappings. */
const mappingLines = (roles: Record<string, string>) =>
  Object.entries(roles)
    .map(([group, role]) => `${group}=${role}`)
    .join('\n');

function parseMappings(text: string): Record<string, string> {
  const roles: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.lastIndexOf('=');
    // A line without '=' is sent as it is, so that the server's rule names what is wrong with it.
    if (line.trim() !== '') roles[(at < 0 ? line : line.slice(0, at)).trim()] = at < 0 ? '' : line.slice(at + 1).trim();
  }
  return roles;
}

function settingsForm(path: string, data: SsoSettingsView, members: MembersView, reload: () => Promise<void>): HTMLFormElement {
  const text = (name: string, value: string | null, extra: Record<string, string | boolean> = {}) =>
    h('input', { type: 'text', name, value: value ?? '', spellcheck: 'false', autocomplete: 'off', ...extra });
  const issuer = text('issuer', data.issuer, { required: true });
  const clientId = text('clientId', data.clientId, { required: true });
  // Write-only: never shown; left empty, the one kept is unchanged.
  const secret = h('input', { type: 'password', name: 'clientSecret', autocomplete: 'new-password', required: !data.clientSecretSet });
  const scopes = text('scopes', data.scopes.join(' '));
  const groupsClaim = text('groupsClaim', data.groupsClaim);
  const groupRoles = h('textarea', { name: 'groupRoles', rows: 4 }, mappingLines(data.groupRoles));
  const createMembers = h('input', { type: 'checkbox', name: 'createMembers', checked: data.createMembers });
  const ssoOnly = h('input', { type: 'checkbox', name: 'ssoOnly', checked: data.ssoOnly });
  const owners = members.members.filter((m) => m.role === 'owner' && m.user !== null);
  const breakGlass = h(
    'select',
    { name: 'breakGlassUserId' },
    h('option', { value: '' }, 'None'),
    owners.map((m) => h('option', { value: m.userId, selected: m.userId === data.breakGlassUserId }, `${m.user!.name} (${m.user!.email})`)),
  );
  const submit = async () => {
    const wanted = {
      issuer: issuer.value.trim(),
      clientId: clientId.value.trim(),
      scopes: scopes.value.split(/\s+/).filter((s) => s !== ''),
      groupsClaim: groupsClaim.value.trim(),
      groupRoles: parseMappings(groupRoles.value),
      createMembers: createMembers.checked,
      ssoOnly: ssoOnly.checked,
      breakGlassUserId: breakGlass.value === '' ? null : breakGlass.value,
    };
    // Only what changed: a PATCH that names an unchanged key would audit it as changed.
    const change: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(wanted))
      if (JSON.stringify(value) !== JSON.stringify(data[key as keyof typeof wanted])) change[key] = value;
    if (secret.value !== '') change.clientSecret = secret.value;
    if (Object.keys(change).length === 0) {
      say('Nothing changed.');
      return;
    }
    await api('PATCH', path, change);
    await reload();
    say(`Single sign-on saved: ${Object.keys(change).join(', ')}.`);
  };
  return h(
    'form',
    { onsubmit: onSubmit(submit) },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Identity provider'),
      field('Issuer URL', issuer),
      field('Client ID', clientId),
      field(data.clientSecretSet ? 'Client secret (set; leave empty to keep it)' : 'Client secret', secret),
      field('Scopes besides openid (space-separated)', scopes),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Members and roles'),
      field('Groups claim', groupsClaim),
      field('Group roles (one group=role per line: owner, admin, editor or viewer)', groupRoles),
      field('Make a member at their first sign-in', createMembers),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'SSO only'),
      field('Password sign-in refused to members, but the break-glass Owner', ssoOnly),
      field('Break-glass Owner (keeps a password)', breakGlass),
    ),
    h('p', {}, h('button', { type: 'submit' }, data.enabled ? 'Save single sign-on' : 'Turn on single sign-on')),
  );
}

function removeButton(path: string, reload: () => Promise<void>): HTMLElement {
  const remove = async () => {
    const go = await askToConfirm({
      title: 'Remove single sign-on?',
      text: 'Its people can no longer sign in through the identity provider; password sign-in applies to them again (a person made by single sign-on needs a password set first). The settings and the client secret are forgotten.',
      confirm: 'Remove',
      danger: true,
    });
    if (!go) return;
    await api('DELETE', path);
    await reload();
    say('Single sign-on removed.');
  };
  return h('p', {}, h('button', { type: 'button', class: 'danger', onclick: () => remove().catch(sayError) }, 'Remove single sign-on'));
}

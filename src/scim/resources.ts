// SCIM Users and Groups as the API shows them (RFC 7643 §4), and what a client sends read into their
// state: attribute names without case (RFC 7643 §2.1), readOnly attributes (id, meta, groups) ignored on
// input, booleans also as the strings "True" and "False" (as Microsoft Entra ID sends `active`), and
// the extensions' attributes (`urn:ietf:params:scim:schemas:extension:…`) ignored: nothing reads them.
import { kMaxEmailLength } from '../model/accounts.js';
import { scimRefusal } from './errors.js';
import type { ScimEmail, ScimGroup, ScimName, ScimUser } from './records.js';

/** Where the SCIM API is served (docs/decisions.md: SCIM's base path). */
export const kScimBasePath = '/scim/v2';

export const kUserSchema = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const kGroupSchema = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const kListSchema = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const kPatchSchema = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** The longest string attribute kept; an e-mail's is kMaxEmailLength. */
export const kMaxText = 256;
export const kMaxEmails = 10;

/** A User's attributes a client sets. */
export type UserState = Pick<ScimUser, 'userName' | 'externalId' | 'name' | 'displayName' | 'emails' | 'active'>;
/** A Group's attributes a client sets; `members` are user ids. */
export type GroupState = Pick<ScimGroup, 'displayName' | 'externalId' | 'members'>;

/** Top-level attributes a filter may name (lower case). */
export const kUserAttributes: ReadonlySet<string> = new Set([
  'id',
  'externalid',
  'username',
  'name',
  'displayname',
  'active',
  'emails',
  'groups',
  'meta',
  'schemas',
]);
export const kGroupAttributes: ReadonlySet<string> = new Set(['id', 'externalid', 'displayname', 'members', 'meta', 'schemas']);

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value of attribute `name` (lower case) of `object`, its name matched without case. */
export function attribute(object: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(object).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : object[key];
}

export function text(what: string, value: unknown, max = kMaxText): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    throw scimRefusal('invalidValue', `${what} must be a non-empty string of at most ${max} characters.`);
  return value.trim();
}

export function optionalText(what: string, value: unknown): string | null {
  return value === undefined || value === null || value === '' ? null : text(what, value);
}

export function bool(what: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw scimRefusal('invalidValue', `${what} must be true or false.`);
}

export function nameOf(value: unknown): ScimName | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw scimRefusal('invalidValue', 'name must be an object (givenName, familyName, formatted).');
  const name: ScimName = {};
  for (const part of ['formatted', 'givenName', 'familyName'] as const) {
    const v = optionalText(`name.${part}`, attribute(value, part.toLowerCase()));
    if (v !== null) name[part] = v;
  }
  return Object.keys(name).length === 0 ? null : name;
}

export function emailOf(value: unknown): ScimEmail {
  if (!isObject(value)) throw scimRefusal('invalidValue', 'each of emails must be an object with a value.');
  const address = text('emails.value', attribute(value, 'value'), kMaxEmailLength);
  if (!/^[^\s@]+@[^\s@]+$/.test(address)) throw scimRefusal('invalidValue', `"${address}" is not an e-mail address.`);
  const type = optionalText('emails.type', attribute(value, 'type'));
  const primary = attribute(value, 'primary');
  return {
    value: address,
    ...(type === null ? {} : { type }),
    ...(primary === undefined ? {} : { primary: bool('emails.primary', primary) }),
  };
}

export function emailsOf(value: unknown): ScimEmail[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  if (list.length > kMaxEmails) throw scimRefusal('invalidValue', `A user has at most ${kMaxEmails} e-mail addresses.`);
  return list.map(emailOf);
}

function requireObject(body: unknown, what: string): Record<string, unknown> {
  if (!isObject(body)) throw scimRefusal('invalidSyntax', `The body must be a JSON object: a SCIM ${what}.`);
  return body;
}

/** A User as POST and PUT send it (RFC 7644 §3.3, §3.5.1): userName required, active true unless said. */
export function userStateOf(body: unknown): UserState {
  const user = requireObject(body, 'User');
  const active = attribute(user, 'active');
  return {
    userName: text('userName', attribute(user, 'username')),
    externalId: optionalText('externalId', attribute(user, 'externalid')),
    name: nameOf(attribute(user, 'name')),
    displayName: optionalText('displayName', attribute(user, 'displayname')),
    emails: emailsOf(attribute(user, 'emails')),
    active: active === undefined ? true : bool('active', active),
  };
}

/** A Group as POST and PUT send it; `members` are the ids of the organisation's SCIM Users (checked by the writer). */
export function groupStateOf(body: unknown): GroupState {
  const group = requireObject(body, 'Group');
  return {
    displayName: text('displayName', attribute(group, 'displayname')),
    externalId: optionalText('externalId', attribute(group, 'externalid')),
    members: memberIdsOf(attribute(group, 'members')),
  };
}

/** `[{value: id}, …]` (one object alone too) as user ids, repeats dropped. */
export function memberIdsOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return [...new Set(list.map((m) => text('members.value', isObject(m) ? attribute(m, 'value') : undefined)))];
}

/** The address a new person is made with: the primary e-mail, else the first, else a userName that is one. */
export function personEmail(state: UserState): string {
  const email = state.emails.find((e) => e.primary === true) ?? state.emails[0];
  if (email !== undefined) return email.value;
  if (/^[^\s@]+@[^\s@]+$/.test(state.userName) && state.userName.length <= kMaxEmailLength) return state.userName;
  throw scimRefusal('invalidValue', 'A user needs an e-mail address: in emails, or as a userName that is one.');
}

/** A person's display name from what the identity provider sent. */
export function personName(state: UserState): string | undefined {
  const given = [state.name?.givenName, state.name?.familyName].filter((p) => p !== undefined).join(' ');
  return state.displayName ?? state.name?.formatted ?? (given === '' ? undefined : given);
}

export function etagOf(version: number): string {
  return `W/"${version}"`;
}

function metaOf(r: ScimUser | ScimGroup, resourceType: 'User' | 'Group', base: string) {
  return {
    resourceType,
    created: new Date(r.created).toISOString(),
    lastModified: new Date(r.lastModified).toISOString(),
    version: etagOf(r.version),
    location: `${base}/${resourceType}s/${r.id}`,
  };
}

/** A User as the API shows it; `groups` are its organisation's groups that name it, as {id, displayName}. */
export function userResource(user: ScimUser, groups: readonly Pick<ScimGroup, 'id' | 'displayName'>[], base: string) {
  return {
    schemas: [kUserSchema],
    id: user.id,
    ...(user.externalId === null ? {} : { externalId: user.externalId }),
    userName: user.userName,
    ...(user.name === null ? {} : { name: user.name }),
    ...(user.displayName === null ? {} : { displayName: user.displayName }),
    active: user.active,
    emails: user.emails,
    groups: groups.map((g) => ({ value: g.id, display: g.displayName, $ref: `${base}/Groups/${g.id}` })),
    meta: metaOf(user, 'User', base),
  };
}
export type UserResource = ReturnType<typeof userResource>;

/** A Group as the API shows it; `names` gives each member's userName. */
export function groupResource(group: ScimGroup, names: (userId: string) => string, base: string) {
  return {
    schemas: [kGroupSchema],
    id: group.id,
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
    members: group.members.map((id) => ({ value: id, display: names(id), $ref: `${base}/Users/${id}` })),
    meta: metaOf(group, 'Group', base),
  };
}
export type GroupResource = ReturnType<typeof groupResource>;

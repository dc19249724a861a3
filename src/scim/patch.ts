// SCIM PATCH (RFC 7644 §3.5.2) on a User's or a Group's state, in the shapes Okta and Microsoft Entra ID
// send: `replace` with a path and without one (a value object whose keys are paths), `add` and
// `remove` of group members (by value list, or `members[value eq "…"]`), `emails[type eq "work"].value`,
// operation names in any case. Pure: the writer applies the result, so a refused operation changes nothing.
import { type ScimErrorKey, scimRefusal } from './errors.js';
import { type Filter, matches, parseFilter } from './filter.js';
import {
  attribute,
  bool,
  emailOf,
  emailsOf,
  type GroupState,
  isObject,
  kPatchSchema,
  memberIdsOf,
  nameOf,
  optionalText,
  text,
  type UserState,
} from './resources.js';
import type { ScimEmail, ScimName } from './records.js';

export type PatchVerb = 'add' | 'replace' | 'remove';
export interface PatchOperation {
  op: PatchVerb;
  path: string | null;
  value: unknown;
}

export const kMaxOperations = 1000;
const kCorePrefix = /^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i;
const kExtension = /^urn:ietf:params:scim:schemas:extension:/i;
/** Attributes a client never sets: ignored in a value object (Okta sends a group's id there), refused as a path. */
const kReadOnly = new Set(['id', 'meta', 'schemas', 'groups']);
const kEmailSubs: ReadonlySet<string> = new Set(['value', 'type', 'primary', 'display']);
const kMemberSubs: ReadonlySet<string> = new Set(['value', 'display', 'type', '$ref']);

function refuse(key: ScimErrorKey, detail: string): Error {
  return scimRefusal(key, detail);
}

/** A PatchOp body's operations (RFC 7644 §3.5.2), checked for shape. */
export function patchOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw refuse('invalidSyntax', `The body must be a JSON object: a ${kPatchSchema}.`);
  const operations = attribute(body, 'operations');
  if (!Array.isArray(operations) || operations.length === 0)
    throw refuse('invalidSyntax', 'Operations must be a non-empty array of {op, path, value}.');
  if (operations.length > kMaxOperations) throw refuse('tooMany', `A PATCH has at most ${kMaxOperations} operations.`);
  return operations.map((o) => {
    if (!isObject(o)) throw refuse('invalidSyntax', 'Each operation must be an object {op, path, value}.');
    const op = String(attribute(o, 'op') ?? '').toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw refuse('invalidSyntax', `op must be add, replace or remove, not "${String(attribute(o, 'op'))}".`);
    const path = attribute(o, 'path');
    if (path !== undefined && path !== null && typeof path !== 'string') throw refuse('invalidPath', 'path must be a string.');
    const value = attribute(o, 'value');
    if ((path === undefined || path === null || path === '') && op === 'remove')
      throw refuse('noTarget', 'A remove operation needs a path.');
    if (op !== 'remove' && value === undefined) throw refuse('invalidValue', `An ${op} operation needs a value.`);
    return { op, path: typeof path === 'string' && path !== '' ? path : null, value };
  });
}

interface Path {
  /** The attribute, lower case, without a core schema's prefix. */
  attr: string;
  filter: Filter | null;
  /** The sub-attribute after the attribute or its filter, lower case. */
  sub: string | null;
}

/** A path (RFC 7644 §3.5.2's attrPath or valuePath); null: an extension's attribute, which nothing reads. */
function parsePath(raw: string, subs: ReadonlySet<string>): Path | null {
  if (kExtension.test(raw)) return null;
  const match = /^([^[\].]+)(?:\[(.*)\])?(?:\.([^[\].]+))?$/s.exec(raw.replace(kCorePrefix, ''));
  if (match === null) throw refuse('invalidPath', `"${raw}" is not a path this service reads.`);
  const attr = match[1]!.toLowerCase();
  return { attr, filter: match[2] === undefined ? null : parseFilter(match[2], subs), sub: match[3]?.toLowerCase() ?? null };
}

/** The operations applied in order to a User's state. */
export function patchUser(state: UserState, operations: readonly PatchOperation[]): UserState {
  return applyOperations(state, operations, kEmailSubs, patchUserAttribute);
}

/** The operations applied in order to a Group's state. */
export function patchGroup(state: GroupState, operations: readonly PatchOperation[]): GroupState {
  return applyOperations(state, operations, kMemberSubs, patchGroupAttribute);
}

/** Each operation's targets applied in turn by `apply` (each gives a new state: `state` is never changed). */
function applyOperations<S>(
  state: S,
  operations: readonly PatchOperation[],
  subs: ReadonlySet<string>,
  apply: (state: S, op: PatchVerb, path: Path, value: unknown, raw: string) => S,
): S {
  let next = state;
  for (const operation of operations) {
    for (const [path, value] of targets(operation)) {
      const parsed = parsePath(path, subs);
      if (parsed === null) continue;
      if (operation.path === null && kReadOnly.has(parsed.attr)) continue;
      next = apply(next, operation.op, parsed, value, path);
    }
  }
  return next;
}

/** An operation's (path, value) pairs: its own, or each key of its value object when it names no path. */
function targets(operation: PatchOperation): [string, unknown][] {
  if (operation.path !== null) return [[operation.path, operation.value]];
  if (!isObject(operation.value)) throw refuse('invalidValue', `An ${operation.op} without a path needs an object value.`);
  return Object.entries(operation.value);
}

function single(path: Path, raw: string): void {
  if (path.filter !== null || path.sub !== null) throw refuse('invalidPath', `"${raw}" has no sub-attributes or values to filter.`);
}

function patchUserAttribute(state: UserState, op: PatchVerb, path: Path, value: unknown, raw: string): UserState {
  switch (path.attr) {
    case 'username':
      single(path, raw);
      if (op === 'remove') throw refuse('mutability', 'userName is required; it cannot be removed.');
      return { ...state, userName: text('userName', value) };
    case 'active':
      single(path, raw);
      if (op === 'remove') throw refuse('mutability', 'active cannot be removed; set it to false to deprovision.');
      return { ...state, active: bool('active', value) };
    case 'externalid':
    case 'displayname': {
      single(path, raw);
      const key = path.attr === 'externalid' ? 'externalId' : 'displayName';
      return { ...state, [key]: op === 'remove' ? null : optionalText(key, value) };
    }
    case 'name':
      if (path.filter !== null) throw refuse('invalidPath', `"${raw}": name is not multi-valued.`);
      return { ...state, name: patchName(state.name, op, path.sub, value) };
    case 'emails':
      return { ...state, emails: patchEmails(state.emails, op, path, value, raw) };
    default:
      if (kReadOnly.has(path.attr)) throw refuse('mutability', `${raw} is read-only.`);
      throw refuse('invalidPath', `"${raw}" is not an attribute of a User here.`);
  }
}

function patchName(name: ScimName | null, op: PatchVerb, sub: string | null, value: unknown): ScimName | null {
  if (sub === null) {
    if (op === 'remove') return null;
    const given = nameOf(value);
    return op === 'add' ? { ...name, ...given } : given;
  }
  const part = (['formatted', 'givenName', 'familyName'] as const).find((p) => p.toLowerCase() === sub);
  if (part === undefined) throw refuse('invalidPath', `name.${sub} is not a sub-attribute of name.`);
  const next: ScimName = { ...name };
  if (op === 'remove') delete next[part];
  else next[part] = text(`name.${part}`, value);
  return Object.keys(next).length === 0 ? null : next;
}

function patchEmails(emails: ScimEmail[], op: PatchVerb, path: Path, value: unknown, raw: string): ScimEmail[] {
  if (path.filter === null) {
    if (path.sub !== null) throw refuse('invalidPath', `"${raw}": name which of emails with a filter, as emails[type eq "work"].value.`);
    if (op === 'remove') return [];
    const given = emailsOf(value);
    if (op === 'replace') return given;
    return emailsOf([...emails.filter((e) => !given.some((g) => g.value === e.value)), ...given]);
  }
  const filter = path.filter;
  const hit = (e: ScimEmail) => matches(filter, e);
  if (op === 'remove') {
    // An address without its value is no address: removing the value removes it.
    if (path.sub === null || path.sub === 'value') return emails.filter((e) => !hit(e));
    const sub = path.sub;
    return emails.map((e) => (hit(e) ? withoutSub(e, sub) : e));
  }
  const setOn = (e: ScimEmail): ScimEmail =>
    path.sub === null ? { ...e, ...emailOf({ ...e, ...(isObject(value) ? value : {}) }) } : emailOf({ ...e, [path.sub]: value });
  if (emails.some(hit)) return emails.map((e) => (hit(e) ? setOn(e) : e));
  // Entra ID replaces `emails[type eq "work"].value` on a user with no work address yet: it is added.
  const type = filter.op === 'eq' && filter.path.join('.') === 'type' && typeof filter.value === 'string' ? filter.value : null;
  if (type === null) throw refuse('noTarget', `"${raw}" matches none of the user's emails.`);
  return emailsOf([...emails, setOn({ value: '', type })].filter((e) => e.value !== ''));
}

function withoutSub(email: ScimEmail, sub: string): ScimEmail {
  const next: ScimEmail = { ...email };
  if (sub === 'type') delete next.type;
  else if (sub === 'primary') delete next.primary;
  else throw refuse('invalidPath', `emails.${sub} is not a sub-attribute that can be removed.`);
  return next;
}

function patchGroupAttribute(state: GroupState, op: PatchVerb, path: Path, value: unknown, raw: string): GroupState {
  switch (path.attr) {
    case 'displayname':
      single(path, raw);
      if (op === 'remove') throw refuse('mutability', 'displayName is required; it cannot be removed.');
      return { ...state, displayName: text('displayName', value) };
    case 'externalid':
      single(path, raw);
      return { ...state, externalId: op === 'remove' ? null : optionalText('externalId', value) };
    case 'members': {
      if (path.sub !== null && path.sub !== 'value') throw refuse('invalidPath', `"${raw}": members are named by value.`);
      if (path.filter !== null) {
        const filter = path.filter;
        if (op !== 'remove') throw refuse('invalidPath', `"${raw}": add or replace members without a filter.`);
        return { ...state, members: state.members.filter((id) => !matches(filter, { value: id })) };
      }
      if (op === 'remove') {
        // Entra ID removes members by listing them as the value; no value: every member.
        if (value === undefined || value === null) return { ...state, members: [] };
        const gone = new Set(memberIdsOf(value));
        return { ...state, members: state.members.filter((id) => !gone.has(id)) };
      }
      const given = memberIdsOf(value);
      return { ...state, members: op === 'replace' ? given : [...new Set([...state.members, ...given])] };
    }
    default:
      if (kReadOnly.has(path.attr)) throw refuse('mutability', `${raw} is read-only.`);
      throw refuse('invalidPath', `"${raw}" is not an attribute of a Group here.`);
  }
}

// An audit entry as sentences, one per changed field ("Changed the traffic percentage of Checkout in
// production from 10% to 50%."): the field by its name in words, flags, audiences and people by their
// names (the ids kept beside them), times as times, lists and records field by field. Pure, below both
// of its readers: the console's audit page (web-console/browser/audit-page.ts) draws the parts in the
// browser, folding a long value, and approvals title a change request with them on the server.
import type { AuditEntry } from '../model/audit.js';
import { formatTime } from './time.js';

/**
 * A part of a sentence: text, something named (its id kept), a time (Unix ms), or a list or record read
 * field by field (`value`, its parts) with its `text` (what the page shows of it folded, when long).
 */
export type Part = string | { name: string; id: string } | { at: number } | { value: Part[]; text: string };

/** What the page can name: flags and audiences by id, people by their `user:<id>` reference. */
export interface Names {
  flags: ReadonlyMap<string, string>;
  audiences: ReadonlyMap<string, string>;
  people: ReadonlyMap<string, string>;
}

/** The names the audit page's answer holds. */
export function namesOf(data: {
  flags: readonly { id: string; name: string }[];
  audiences: readonly { id: string; name: string }[];
  people: readonly { ref: string; name: string }[];
}): Names {
  return {
    flags: new Map(data.flags.map((f) => [f.id, f.name])),
    audiences: new Map(data.audiences.map((a) => [a.id, a.name])),
    people: new Map(data.people.map((p) => [p.ref, p.name])),
  };
}

/** A field's name in words; a key not listed reads as itself. */
const kFieldNames: Readonly<Record<string, string>> = {
  enabled: 'state',
  trafficPercentage: 'traffic percentage',
  audienceId: 'audience',
  cohorts: 'cohorts',
  variants: 'variants',
  defaultVariant: 'default variant',
  targeting: 'rule',
  metadata: 'metadata',
  name: 'name',
  description: 'description',
  tags: 'tags',
  bucketing: 'bucketing',
  protected: 'protection',
  graceEndsAt: "old secret's end",
  gracePeriodSeconds: "old secret's grace period (seconds)",
  expiresAt: 'expiry',
  clientKey: 'client key',
  owner: 'owner',
  lifetimeDays: 'expected lifetime (days)',
  archivedAt: 'archive time',
};

/** Keys whose value is the thing itself (a flag, a token, ...): made or removed rather than set or cleared. */
const kThings = new Set([
  'flag',
  'token',
  'clientKey',
  'audience',
  'environment',
  'webhook',
  'rollout',
  'schedule',
  'invitation',
  'member',
]);

/** A field that holds a time (`at`, `expiresAt`, `graceEndsAt`, ...): Unix ms in the log. */
const isTimeKey = (key: string) => key === 'at' || /[a-z]At$/.test(key);

/** Every sentence of `entry`: one per changed field, or, when it lists none, its action. */
export function auditSentences(entry: AuditEntry, names: Names): Part[][] {
  const where = whereParts(entry, names);
  const changes = Object.entries(entry.changes);
  if (changes.length === 0) return [[entry.action, ...where, '.']];
  return changes.map(([key, { before, after }]) => {
    // The flag made, renamed or deleted is the entry's flag: named once, by its id.
    if (key === 'flag' && entry.flagId !== null) return flagSentence(entry, before, after);
    const field = fieldParts(key, names);
    const was = valueParts(before, key, names);
    const now = valueParts(after, key, names);
    const thing = kThings.has(key) || key.startsWith(kFragmentKey);
    // No audience is an audience choice (everyone), not a field left empty.
    const absent = (v: unknown) => (v === null || v === undefined) && key !== 'audienceId';
    if (absent(before))
      return thing ? ['Made ', ...field, ' ', ...now, ...where, '.'] : ['Set the ', ...field, ...where, ' to ', ...now, '.'];
    if (absent(after))
      return thing ? ['Removed ', ...field, ' ', ...was, ...where, '.'] : ['Cleared the ', ...field, ...where, ' (was ', ...was, ').'];
    return [`Changed ${thing ? '' : 'the '}`, ...field, ...where, ' from ', ...was, ' to ', ...now, '.'];
  });
}

/**
 * A change to come (a scheduled change's patch: the flag's own fields) as sentences, one per field, in
 * the audit log's words: "Set the traffic percentage to 50%."
 */
export function patchSentences(patch: Readonly<Record<string, unknown>>, names: Names): Part[][] {
  return Object.entries(patch).map(([key, value]) => [
    'Set the ',
    ...fieldParts(key, names),
    ' to ',
    ...valueParts(value, key, names),
    '.',
  ]);
}

/** What a change asked for is read from: an audit entry's action, flag, environment and changes. */
export type AskedEntry = Pick<AuditEntry, 'action' | 'flagId' | 'env' | 'changes'>;

/** A rollout's act by hand (`rollout.resume`, ...) as an order. */
const kRolloutOrders: Readonly<Record<string, string>> = {
  resume: 'Resume',
  rollback: 'Roll back',
  skip: 'Skip a step of',
  pause: 'Pause',
};

/**
 * A change asked for (a change request's title: requestTitle) as sentences in the audit log's words,
 * one per changed field, as orders, and short: "Turn on checkout in production.", "Set the traffic
 * percentage of flag checkout in production to 50%.", a value too long for a line named and not spelled
 * out ("Change the rule of flag checkout in production.").
 */
export function askedSentences(entry: AskedEntry, names: Names): Part[][] {
  const where = whereParts(entry, names);
  const changes = Object.entries(entry.changes);
  if (changes.length === 0) return [[entry.action, ...where, '.']];
  const flag = entry.flagId === null ? null : named(names.flags, entry.flagId);
  const env = entry.env === null ? [] : [` in ${entry.env}`];
  return changes.map(([key, { before, after }]) => {
    const absent = (v: unknown) => (v === null || v === undefined) && key !== 'audienceId';
    if (flag !== null) {
      if (key === 'flag') return [`${absent(before) ? 'Make' : absent(after) ? 'Remove' : 'Change'} flag `, flag, ...env, '.'];
      if (key === 'enabled' && typeof after === 'boolean') return [after ? 'Turn on ' : 'Turn off ', flag, ...env, '.'];
      if (key === 'schedule' && absent(before)) {
        const at = (after as { at?: unknown } | null)?.at;
        return ['Schedule a change of flag ', flag, ...env, ...(typeof at === 'number' ? [' for ', { at }] : []), '.'];
      }
      if (key === 'rollout') {
        if (absent(before)) return ['Start a rollout of flag ', flag, ...env, '.'];
        if (typeof after === 'string') return [`${kRolloutOrders[after] ?? 'Change'} the rollout of flag `, flag, ...env, '.'];
      }
    }
    const field = fieldParts(key, names);
    const thing = kThings.has(key) || key.startsWith(kFragmentKey);
    // A value that reads as a line (on, 50%, an audience's name); a list or record is too long for a title.
    const short = (v: unknown) => {
      const parts = valueParts(v, key, names);
      return parts.some((p) => typeof p === 'object' && 'value' in p) ? null : parts;
    };
    if (absent(after)) return thing ? ['Remove ', ...field, ...where, '.'] : ['Clear the ', ...field, ...where, '.'];
    const now = short(after);
    if (absent(before)) {
      if (thing) return ['Make ', ...field, ...(now === null || typeof after === 'object' ? [] : [' ', ...now]), ...where, '.'];
      return now === null ? ['Set the ', ...field, ...where, '.'] : ['Set the ', ...field, ...where, ' to ', ...now, '.'];
    }
    const the = thing ? '' : 'the ';
    return now === null ? [`Change ${the}`, ...field, ...where, '.'] : [`Set ${the}`, ...field, ...where, ' to ', ...now, '.'];
  });
}

/**
 * A change request's title: what it asks, in the audit log's words (askedSentences), its first sentences
 * and how many more there are ("Turn on checkout in production; and 3 more changes").
 */
export function requestTitle(entries: readonly AskedEntry[], names: Names): string {
  const lines = [...new Set(entries.flatMap((entry) => askedSentences(entry, names)).map((parts) => partsText(parts).replace(/\.$/, '')))];
  if (lines.length === 0) return 'A change';
  const shown = lines.length > kTitleSentences ? lines.slice(0, kTitleSentences - 1) : lines;
  const more = lines.length - shown.length;
  return [...shown, ...(more > 0 ? [`and ${more} more changes`] : [])].join('; ');
}

/** Sentences a title shows at most (the last of them saying how many more there are). */
const kTitleSentences = 3;

/** The entry's flag made or removed, by the name it had. */
function flagSentence(entry: AuditEntry, before: unknown, after: unknown): Part[] {
  const nameOf = (v: unknown) => (v as { name?: unknown } | null)?.name;
  const name = nameOf(after) ?? nameOf(before);
  const flag: Part = typeof name === 'string' ? { name, id: entry.flagId! } : entry.flagId!;
  const env = entry.env === null ? [] : [` in ${entry.env}`];
  const verb = before === null || before === undefined ? 'Made' : after === null || after === undefined ? 'Removed' : 'Changed';
  return [`${verb} flag `, flag, ...env, '.'];
}

/** " of FLAG in ENV", as the entry has them. */
function whereParts(entry: Pick<AuditEntry, 'flagId' | 'env'>, names: Names): Part[] {
  const parts: Part[] = [];
  if (entry.flagId !== null) parts.push(' of flag ', named(names.flags, entry.flagId));
  if (entry.env !== null) parts.push(` in ${entry.env}`);
  return parts;
}

/** A shared fragment's change is logged under `fragments.NAME` (src/fragments/fragment-commands.ts). */
const kFragmentKey = 'fragments.';

/**
 * A field by its name in words; a person a key names by id (`role of user:usr_…`) by their name. The
 * change request page names a diff's fields with it too (requests-page.ts).
 */
export function fieldParts(key: string, names: Names): Part[] {
  if (key.startsWith(kFragmentKey)) return [`shared fragment ${key.slice(kFragmentKey.length)}`];
  for (const [ref, name] of names.people) {
    const at = key.indexOf(ref);
    if (at !== -1) return [key.slice(0, at), { name, id: ref }, key.slice(at + ref.length)].filter((p) => p !== '');
  }
  return [kFieldNames[key] ?? key];
}

function named(map: ReadonlyMap<string, string>, id: string): Part {
  const name = map.get(id);
  return name === undefined ? id : { name, id };
}

/**
 * A value as a reader reads it: on/off for the state, N% for a percentage, an audience by its name (none:
 * everyone), a time as a time, text and numbers as they are, a list of text joined, a record with a name
 * (a token's) by that name, nothing as "none"; any other list or record field by field (`{key: value, ...}`,
 * each value read the same way), as one part the page may fold. The change request page reads a diff's
 * values with it too (requests-page.ts).
 */
export function valueParts(value: unknown, key: string, names: Names, nested = false): Part[] {
  if (key === 'audienceId') return typeof value === 'string' ? [named(names.audiences, value)] : ['everyone (no audience)'];
  if (value === null || value === undefined) return ['none'];
  if (key === 'enabled' && typeof value === 'boolean') return [value ? 'on' : 'off'];
  if (key === 'trafficPercentage' && typeof value === 'number') return [`${value}%`];
  if (typeof value === 'number' && isTimeKey(key)) return [{ at: value }];
  // A field's own yes or no (protected); inside a list or record (a rule's result) true or false as written.
  if (typeof value === 'boolean') return [nested ? String(value) : value ? 'yes' : 'no'];
  if (typeof value === 'string' || typeof value === 'number') return [String(value)];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return [value.length === 0 ? 'none' : value.join(', ')];
  if (Array.isArray(value)) return [composite(['[', ...joined(value.map((v) => inner(v, key, names))), ']'])];
  // A thing by its name (a token, an audience), then what else it holds.
  const { id, name, ...rest } = value as Record<string, unknown>;
  const fields = (record: Record<string, unknown>) =>
    composite(['{', ...joined(Object.entries(record).map(([k, v]) => [`${k}: `, ...inner(v, k, names)])), '}']);
  if (typeof name !== 'string') return [fields(value as Record<string, unknown>)];
  const parts: Part[] = [typeof id === 'string' ? { name, id } : name];
  if (Object.keys(rest).length > 0) parts.push(' ', fields(rest));
  return parts;
}

/** A value inside a list or record: read as any value, a list or record in it spelled out in place. */
function inner(value: unknown, key: string, names: Names): Part[] {
  return valueParts(value, key, names, true).flatMap((p) => (typeof p === 'object' && 'value' in p ? p.value : [p]));
}

function joined(items: Part[][]): Part[] {
  return items.flatMap((item, i) => (i === 0 ? item : [', ', ...item]));
}

function composite(parts: Part[]): Part {
  return { value: parts, text: partsText(parts) };
}

/** Parts as plain text: a thing by its name, a time in UTC. */
export function partsText(parts: readonly Part[]): string {
  return parts.map((p) => (typeof p === 'string' ? p : 'name' in p ? p.name : 'at' in p ? formatTime(p.at) : p.text)).join('');
}

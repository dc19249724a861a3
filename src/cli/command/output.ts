// What the console prints. With --json: one JSON object per run, on one line, values as stored
// (times are Unix milliseconds, as in the API). Without: text for people, times as ISO-8601 (UTC),
// lists as aligned tables.
import type { Membership, Org, User } from '../../model/accounts.js';
import type { AuditEntry } from '../../model/audit.js';
import type { Audience, Project } from '../../model/projects.js';

export function renderJson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

// ---- building blocks ---------------------------------------------------------------------------

/**
 * Columns padded to their widest cell, two spaces apart; the last column is not padded, so lines
 * carry no trailing blanks.
 *
 *   ID    NAME     PERMISSION
 *   t1    deploy   write
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, col) => Math.max(h.length, ...rows.map((row) => (row[col] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, col) => (col === cells.length - 1 ? cell : cell.padEnd(widths[col]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `label  value` lines with the values aligned. */
export function renderFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `${label.padEnd(width)}  ${value}`.trimEnd()).join('\n');
}

/**
 * A secret made now (a token's, a relay key's, a client key's): the line that says what to do with it,
 * the secret alone on its line to copy, then the record's fields. It is printed this once.
 */
export function renderNewSecret(heading: string, secret: string, fields: readonly (readonly [string, string])[]): string {
  return [heading, '', `  ${secret}`, '', renderFields(fields)].join('\n');
}

/** Unix ms as ISO-8601 UTC; `empty` for null (and for 0 where 0 means "never"). */
export function formatTime(ms: number | null, empty = '-'): string {
  return ms === null || ms === 0 ? empty : new Date(ms).toISOString();
}

export function formatList(values: readonly string[], empty = '-'): string {
  return values.length === 0 ? empty : values.join(', ');
}

function formatValue(value: unknown): string {
  return value === undefined ? '-' : JSON.stringify(value);
}

/** Audit changes as `field: before -> after`, several joined with `; `. */
export function formatChanges(changes: AuditEntry['changes']): string {
  return Object.entries(changes)
    .map(([field, { before, after }]) => `${field}: ${formatValue(before)} -> ${formatValue(after)}`)
    .join('; ');
}

// ---- records -----------------------------------------------------------------------------------

export function renderOrg(org: Org): string {
  return renderFields([
    ['id', org.id],
    ['name', org.name],
    ['plan', org.plan],
    ['trial ends', formatTime(org.trialEndsAt)],
    ['standing', org.standing],
    ['created', formatTime(org.createdAt)],
  ]);
}

export function renderOrgs(orgs: readonly Org[]): string {
  if (orgs.length === 0) return 'No organisations.';
  return renderTable(
    ['ID', 'NAME', 'PLAN', 'TRIAL ENDS', 'STANDING', 'CREATED'],
    orgs.map((o) => [o.id, o.name, o.plan, formatTime(o.trialEndsAt), o.standing, formatTime(o.createdAt)]),
  );
}

export function renderUsers(users: readonly User[]): string {
  if (users.length === 0) return 'No users.';
  return renderTable(
    ['ID', 'EMAIL', 'NAME', 'CREATED'],
    users.map((u) => [u.id, u.email, u.name, formatTime(u.createdAt)]),
  );
}

export function renderUser(user: User): string {
  return renderFields([
    ['id', user.id],
    ['email', user.email],
    ['name', user.name],
    ['created', formatTime(user.createdAt)],
  ]);
}

export function renderPasswordSet(result: { userId: string; updatedAt: number; sessionsEnded: number }): string {
  return `Password set for ${result.userId}; ${result.sessionsEnded} web console session${result.sessionsEnded === 1 ? '' : 's'} ended.`;
}

export function renderMembership(member: Membership): string {
  return renderFields([
    ['organisation', member.orgId],
    ['user', member.userId],
    ['role', member.role],
  ]);
}

export function renderProject(project: Project): string {
  return renderFields([
    ['id', project.id],
    ['name', project.name],
    ['kind', project.kind === 'multi' ? 'multi (environments)' : 'single'],
    project.orgId === null ? ['owner', `${project.ownerUserId ?? '-'} (personal project)`] : ['organisation', project.orgId],
    ['environments', project.kind === 'multi' ? formatList(project.environments, '(none yet)') : '-'],
    ['created', formatTime(project.createdAt)],
  ]);
}

export function renderProjects(projects: readonly Project[]): string {
  if (projects.length === 0) return 'No projects.';
  return renderTable(
    ['ID', 'NAME', 'KIND', 'ORGANISATION', 'OWNER', 'ENVIRONMENTS', 'CREATED'],
    projects.map((p) => [
      p.id,
      p.name,
      p.kind,
      p.orgId ?? '-',
      p.ownerUserId ?? '-',
      p.kind === 'multi' ? formatList(p.environments) : '-',
      formatTime(p.createdAt),
    ]),
  );
}

export function formatRules(rules: Audience['rules']): string {
  return rules.map((r) => `${r.attribute}=${r.values.join(',')}`).join('; ');
}

export function renderAudience(audience: Audience): string {
  return renderFields([
    ['id', audience.id],
    ['project', audience.projectId],
    ['name', audience.name],
    ['rules', formatRules(audience.rules)],
    ['updated', formatTime(audience.updatedAt)],
  ]);
}

export function renderAudiences(audiences: readonly Audience[]): string {
  if (audiences.length === 0) return 'No audiences.';
  return renderTable(
    ['ID', 'NAME', 'RULES', 'UPDATED'],
    audiences.map((a) => [a.id, a.name, formatRules(a.rules), formatTime(a.updatedAt)]),
  );
}

// ---- mail ----------------------------------------------------------------------------

export function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

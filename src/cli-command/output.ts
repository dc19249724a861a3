// What the console prints. With --json: one JSON object per run, on one line, values as stored
// (times are Unix milliseconds, as in the API). Without: text for people, times as ISO-8601 (UTC),
// lists as aligned tables.
import type { Membership, Org, User } from '../model/accounts.js';
import type { AuditEntry } from '../model/audit.js';
import type { Flag } from '../flags/records.js';
import { inRotationGrace, tokenStatus } from '../model/permissions.js';
import type { Audience, Project } from '../model/projects.js';
import type { TokenActivity } from '../model/tokens.js';
import type { EnvironmentEntry, EnvironmentsFlag, FlatFlag } from '../model/representation.js';
import type { CreatedToken, RotatedToken, TokenView } from '../tokens/token-commands.js';
import type { FlagsImportResult } from '../flags/import-commands.js';

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

/** Unix ms as ISO-8601 UTC; `empty` for null (and for 0 where 0 means "never"). */
export function formatTime(ms: number | null, empty = '-'): string {
  return ms === null || ms === 0 ? empty : new Date(ms).toISOString();
}

function formatList(values: readonly string[], empty = '-'): string {
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

function formatState(s: { enabled: boolean; trafficPercentage: number; audienceId: string | null }): string {
  return `${s.enabled ? 'on' : 'off'}, ${s.trafficPercentage}%${s.audienceId === null ? '' : `, audience ${s.audienceId}`}`;
}

export function renderFlag(flag: Flag): string {
  const fields: [string, string][] = [
    ['id', flag.id],
    ['project', flag.projectId],
    ['name', flag.name],
    ['kind', flag.kind],
    ...bucketingLine(flag),
    ['description', flag.description === '' ? '-' : flag.description],
    ['tags', formatList(flag.tags)],
  ];
  if (flag.kind === 'flag') {
    fields.push(['state', formatState(flag.state)], ['cohorts', formatList(flag.cohorts)]);
  } else {
    fields.push(['cohorts', `${formatList(flag.cohorts)} (flag-wide)`]);
    for (const [env, state] of Object.entries(flag.environments)) {
      const cohorts = state.cohorts === null ? 'inherited' : formatList(state.cohorts);
      fields.push([`env ${env}`, `${formatState(state)}, cohorts: ${cohorts}`]);
    }
  }
  fields.push(['updated', formatTime(flag.updatedAt)]);
  return renderFields(fields);
}

// ---- flags as the Management API shows them ----------------------------------------------------

type FlagView = FlatFlag | EnvironmentsFlag;

/** One state: `on, 50%[, audience A][, cohorts: a, b]`. */
function formatViewState(s: Omit<EnvironmentEntry, 'updatedAt'>): string {
  const cohorts = s.cohorts.length === 0 ? '' : `, cohorts: ${s.cohorts.join(', ')}`;
  if (s.variants === undefined) return `${formatState(s)}${cohorts}`;
  const rule = s.targeting === undefined || Object.keys(s.targeting).length === 0 ? 'none' : JSON.stringify(s.targeting);
  return `${formatState(s)}${cohorts}, variants: ${JSON.stringify(s.variants)}, default: ${s.defaultVariant ?? "(the caller's)"}, rule: ${rule}`;
}

function viewStates(flag: FlagView): [string, string][] {
  if ('environments' in flag) {
    const envs = Object.entries(flag.environments);
    return envs.length === 0 ? [['state', '(no environments yet)']] : envs.map(([env, state]) => [`env ${env}`, formatViewState(state)]);
  }
  return [['state', formatViewState(flag)]];
}

/** A fractional flag's bucketing line; none for a modulo flag, whose output is as it was before the choice existed. */
function bucketingLine(flag: { bucketing?: 'fractional' }): [string, string][] {
  return flag.bucketing === undefined ? [] : [['bucketing', `${flag.bucketing} (flagd's fractional point; fixed when the flag was made)`]];
}

export function renderFlagView(flag: FlagView): string {
  return renderFields([
    ['id', flag.id],
    ['name', flag.name],
    ['kind', flag.kind],
    ...bucketingLine(flag),
    ['description', flag.description === '' ? '-' : flag.description],
    ['tags', formatList(flag.tags)],
    ...viewStates(flag),
    ['updated', formatTime(flag.updatedAt)],
    ['last evaluated', formatTime(flag.lastEvaluatedAt, 'never')],
    ['evaluations', String(flag.evaluations)],
  ]);
}

export function renderFlagViews(flags: readonly FlagView[]): string {
  if (flags.length === 0) return 'No flags.';
  return renderTable(
    ['ID', 'NAME', 'KIND', 'STATE', 'UPDATED', 'LAST EVALUATED'],
    flags.map((f) => [
      f.id,
      f.name,
      f.bucketing === undefined ? f.kind : `${f.kind} (${f.bucketing})`,
      viewStates(f)
        .map(([label, state]) => (label === 'state' ? state : `${label.slice(4)}: ${state}`))
        .join('; '),
      formatTime(f.updatedAt),
      formatTime(f.lastEvaluatedAt, 'never'),
    ]),
  );
}

export function renderStaleFlags(result: { days: number; flags: readonly FlagView[] }): string {
  const span = `${result.days} day${result.days === 1 ? '' : 's'}`;
  if (result.flags.length === 0) return `No flag has gone ${span} without an evaluation.`;
  return `Not evaluated for ${span}:\n${renderTable(
    ['ID', 'NAME', 'LAST EVALUATED', 'EVALUATIONS', 'UPDATED'],
    result.flags.map((f) => [f.id, f.name, formatTime(f.lastEvaluatedAt, 'never'), String(f.evaluations), formatTime(f.updatedAt)]),
  )}`;
}

export function renderImport(result: FlagsImportResult): string {
  if (result.flags.length === 0 && result.fragments.length === 0) return 'The file defines no flags; nothing changed.';
  const count = (list: readonly { outcome: string }[], outcome: string) => list.filter((f) => f.outcome === outcome).length;
  const counts = (list: readonly { outcome: string }[]) =>
    `${count(list, 'created')} created, ${count(list, 'updated')} updated, ${count(list, 'unchanged')} unchanged`;
  const where = result.env === null ? result.projectId : `${result.projectId}, environment ${result.env}`;
  const fragments =
    result.fragments.length === 0
      ? ''
      : `${renderTable(
          ['SHARED FRAGMENT', 'OUTCOME'],
          result.fragments.map((f) => [f.name, f.outcome]),
        )}\nShared fragments: ${counts(result.fragments)}.\n`;
  return `${fragments}${renderTable(
    ['KEY', 'ID', 'OUTCOME'],
    result.flags.map((f) => [f.key, f.id, f.outcome]),
  )}
Imported into ${where}: ${counts(result.flags)}.`;
}

export function renderDeleted(result: { id: string }): string {
  return `Deleted flag ${result.id}.`;
}

// ---- tokens ------------------------------------------------------------------------------------

function tokenFields(token: TokenView): [string, string][] {
  return [
    ['id', token.id],
    ['project', token.projectId],
    ['name', token.name],
    ['permission', token.permission],
    ['environments', formatList(token.environments, 'all')],
    ['expires', formatTime(token.expiresAt, 'never')],
    ['created by', token.createdBy],
  ];
}

export function renderCreatedToken(token: CreatedToken): string {
  return [
    'Token secret (shown only now; store it in a secret store, it cannot be shown again):',
    '',
    `  ${token.secret}`,
    '',
    renderFields(tokenFields(token)),
  ].join('\n');
}

export function renderRotatedToken(token: RotatedToken): string {
  const old = token.replaced.graceEndsAt === null ? 'no longer works' : `works until ${formatTime(token.replaced.graceEndsAt)}`;
  return `${renderCreatedToken(token)}\n\nThe old secret (token ${token.replaced.id}) ${old}.`;
}

export function renderRevoked(result: { id: string; revokedAt: number }): string {
  return `Revoked token ${result.id} at ${formatTime(result.revokedAt)}.`;
}

export function renderTokens(tokens: readonly TokenView[], now: number): string {
  if (tokens.length === 0) return 'No tokens.';
  return renderTable(
    ['ID', 'NAME', 'PERMISSION', 'ENVIRONMENTS', 'EXPIRES', 'STATUS', 'CREATED BY', 'CREATED'],
    tokens.map((t) => [
      t.id,
      t.name,
      t.permission,
      formatList(t.environments, 'all'),
      formatTime(t.expiresAt, 'never'),
      inRotationGrace(t, now) ? `revoked, old secret works until ${formatTime(t.graceEndsAt!)}` : tokenStatus(t, now),
      t.createdBy,
      formatTime(t.createdAt),
    ]),
  );
}

export type ActivityView = Pick<TokenActivity, 'tokenId' | 'lastUsedAt' | 'recent' | 'denials'>;

export function renderActivity(activity: ActivityView): string {
  const parts = [
    renderFields([
      ['token', activity.tokenId],
      ['last used', formatTime(activity.lastUsedAt, 'never')],
    ]),
  ];
  parts.push('', `Recent activity (${activity.recent.length}):`);
  if (activity.recent.length > 0) {
    parts.push(
      indent(
        renderTable(
          ['AT', 'METHOD', 'PATH', 'STATUS'],
          activity.recent.map((r) => [formatTime(r.at), r.method, r.path, String(r.status)]),
        ),
      ),
    );
  }
  parts.push('', `Recent denials (${activity.denials.length}):`);
  if (activity.denials.length > 0) {
    parts.push(
      indent(
        renderTable(
          ['AT', 'REASON', 'METHOD', 'PATH'],
          activity.denials.map((d) => [formatTime(d.at), d.reason, d.method, d.path]),
        ),
      ),
    );
  }
  return parts.join('\n');
}

// ---- mail ----------------------------------------------------------------------------

export function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

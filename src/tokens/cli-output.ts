// How the command line prints tokens and their activity, without --json (src/cli/command/output.ts
// says how it prints everything: tables, fields, times).
import { formatList, formatTime, indent, renderFields, renderNewSecret, renderTable } from '../cli/command/output.js';
import { inRotationGrace, tokenStatus } from '../model/permissions.js';
import type { TokenActivity } from '../model/tokens.js';
import type { CreatedToken, RotatedToken, TokenView } from './token-commands.js';

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
  return renderNewSecret(
    'Token secret (shown only now; store it in a secret store, it cannot be shown again):',
    token.secret,
    tokenFields(token),
  );
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

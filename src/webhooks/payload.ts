// What a delivery says: the audit entry of the change and, for a flag, the flag as the API represents it
// now (GET /api/v1/flags/{id}: its usage included), in Standard Webhooks' envelope `{type, timestamp,
// data}`; or, for a Slack-compatible webhook, one line of text. Built in the transaction of the change,
// so the body is the change as it was committed.
import { type AuditEntry, auditJson, auditValueJson } from '../model/audit.js';
import type { Flag, FlagUsage } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import { representFlag } from '../flags/representation.js';
import type { Webhook } from './webhook.js';

export function deliveryBody(
  hook: Webhook,
  entry: AuditEntry,
  flag: Flag | undefined,
  usage: FlagUsage | undefined,
  project: Project,
): string {
  if (hook.format === 'slack') return JSON.stringify({ text: escapeSlack(slackText(entry, flag)) });
  // The flag after the change (a group flag with every environment); null when it was deleted or the change is not a flag's.
  const represented = flag === undefined ? null : representFlag(flag, project, null, usage);
  // As JSON.stringify({type, timestamp, data: {projectId, audit, flag}}) writes it, the entry as auditJson writes it.
  const head = JSON.stringify({ type: entry.action, timestamp: new Date(entry.at).toISOString() });
  return `${head.slice(0, -1)},"data":{"projectId":${JSON.stringify(entry.projectId)},"audit":${auditJson(entry)},"flag":${JSON.stringify(represented)}}}`;
}

/** `ci-write (token:…) flag.patch checkout [production]: trafficPercentage 10 → 50; enabled false → true` */
function slackText(entry: AuditEntry, flag: Flag | undefined): string {
  const what = flag === undefined ? (entry.flagId ?? '') : `${flag.name} (${flag.id})`;
  const where = entry.env === null ? '' : ` [${entry.env}]`;
  const fields = Object.entries(entry.changes)
    .map(([field, { before, after }]) => `${field} ${short(auditValueJson(field, before))} → ${short(auditValueJson(field, after))}`)
    .join('; ');
  return `Flagwire: ${entry.actorName} (${entry.actor}) ${entry.action} ${what}${where}${fields === '' ? '' : `: ${fields}`}`;
}

/**
 * Slack reads `<...>` in a message as a mention or link (`<!channel>` notifies everyone in the channel)
 * and `&` as the start of an escape, so its formatting guide says to send exactly these three as
 * `&amp;`, `&lt;` and `&gt;`. Nothing in our text is markup (its fixed words hold none of the three; the
 * rest are names and values someone chose: a flag's, a token's, a cohort), so the whole text is escaped.
 */
function escapeSlack(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** A value's JSON (auditValueJson), cut to a line's share. */
function short(json: string | undefined): string {
  const text = json ?? 'null';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

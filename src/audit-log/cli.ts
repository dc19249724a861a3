// The audit log on the command line: `audit PROJECT_ID`, a page at a time, newest first.
import { command, type CliCommand, str } from '../cli/command/cli-command.js';
import { formatChanges, formatTime, renderTable } from '../cli/command/output.js';
import { type AuditEntry, auditView } from '../model/audit.js';
import { requireProject } from '../model/records/lookups.js';

const kDefaultAuditLimit = 50;
const kMaxAuditLimit = 1000;

/** The `audit` result: a page of entries, newest first, and the --before value of the next (older) page, null at the end. */
export interface AuditPageView {
  entries: AuditEntry[];
  nextBefore: number | null;
}

export function renderAuditPage(page: AuditPageView): string {
  const table = renderAudit(page.entries);
  return page.nextBefore === null ? table : `${table}\nOlder entries: add --before ${page.nextBefore}`;
}

function renderAudit(entries: readonly AuditEntry[]): string {
  if (entries.length === 0) return 'No audit entries.';
  return renderTable(
    ['SEQ', 'AT', 'ACTOR', 'ACTION', 'FLAG', 'ENV', 'CHANGES'],
    entries.map((e) => [
      String(e.seq),
      formatTime(e.at),
      e.actorName === e.actor ? e.actor : `${e.actor} (${e.actorName})`,
      e.action,
      e.flagId ?? '-',
      e.env ?? '-',
      formatChanges(e.changes),
    ]),
  );
}

export const kAuditCli: readonly CliCommand[] = [
  command({
    name: 'audit',
    usage: `audit PROJECT_ID [--limit N] [--before SEQ]`,
    summary: `a project's audit log, newest first (default ${kDefaultAuditLimit}, at most ${kMaxAuditLimit}; --before pages back) -> {entries, nextBefore}`,
    positionals: ['PROJECT_ID'],
    options: {
      limit: str('N', `entries per page (default ${kDefaultAuditLimit}, at most ${kMaxAuditLimit})`),
      before: str('SEQ', 'only entries older than this sequence number: the nextBefore of the previous page'),
    },
    run(args, ctx) {
      const limit = args.integer('limit', 1, kMaxAuditLimit) ?? kDefaultAuditLimit;
      const before = args.integer('before', 1, Number.MAX_SAFE_INTEGER) ?? null;
      return ctx.read((r): AuditPageView => {
        const project = requireProject(r, args.positional('PROJECT_ID'));
        // One entry more than asked says whether an older page exists, so a full page is never taken
        // for the whole log.
        const found = r.listAudit(project.id, { limit: limit + 1, before });
        const entries = found.slice(0, limit).map(auditView);
        return { entries, nextBefore: found.length > limit ? entries[entries.length - 1]!.seq : null };
      });
    },
    human: renderAuditPage,
  }),
];

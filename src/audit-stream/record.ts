// What the audit stream sends of an entry, to a file and to syslog alike: the entry as the audit log
// shows it, with the store's revision, the organisation and an id a receiver drops duplicates by; and
// that record as a syslog message (RFC 5424) in a frame that counts its octets (RFC 6587 3.4.1).
import { type AuditEntry, auditJson } from '../model/audit.js';

export interface StreamRecord extends AuditEntry {
  /**
   * `SOURCE:SEQ`: the store's source (StoreReader.source: the database of a PostgreSQL cluster, shared by
   * its nodes) and the entry's sequence number. The same entry has the same id at every send and on every node.
   */
  id: string;
  /** The store's revision when the stream read the entry: the entry was committed at it or before. */
  revision: number;
  /** The project's organisation; null for a personal project (or one deleted since). */
  orgId: string | null;
}

export function streamRecord(entry: AuditEntry, source: string, revision: number, orgId: string | null): StreamRecord {
  return { id: `${source}:${entry.seq}`, revision, orgId, ...entry };
}

/** The record as JSON, its entry as the audit log shows it (auditJson). */
export function recordJson(record: StreamRecord): string {
  return auditJson(record);
}

/**
 * Facility 13 (log audit) and severity 5 (notice), as PRI = facility * 8 + severity. 32473 is the private
 * enterprise number RFC 5612 sets aside for examples, so the structured data's id names no real company.
 */
const kPri = 13 * 8 + 5;
const kSdId = 'flagwire@32473';

/** The RFC 5424 message: the header, the record's ids as structured data, and the record as JSON for MSG. */
export function syslogMessage(record: StreamRecord, hostname: string, procId: number): string {
  const params = [
    ['id', record.id],
    ['seq', String(record.seq)],
    ['revision', String(record.revision)],
    ['project', record.projectId],
    ['actor', record.actor],
  ];
  const sd = `[${kSdId}${params.map(([k, v]) => ` ${k}="${sdEscape(v!)}"`).join('')}]`;
  const header = `<${kPri}>1 ${new Date(record.at).toISOString()} ${headerField(hostname, 255)} flagwire ${procId} ${headerField(record.action, 32)}`;
  return `${header} ${sd} ${recordJson(record)}`;
}

/** One frame of octet-counting framing: the message's length in bytes, a space, the message. */
export function octetCounted(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `, 'ascii'), body]);
}

/** A header field: printable US-ASCII only (RFC 5424 PRINTUSASCII), at most `max` of them, `-` when empty. */
function headerField(value: string, max: number): string {
  const printable = value.replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return printable === '' ? '-' : printable;
}

/** A PARAM-VALUE: `"`, `\` and `]` escaped with a backslash (RFC 5424 6.3.3). */
function sdEscape(value: string): string {
  return value.replace(/["\\\]]/g, (c) => `\\${c}`);
}

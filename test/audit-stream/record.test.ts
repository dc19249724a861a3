// The audit stream's record and its syslog form in-process: the record carries the entry with its id,
// revision and organisation; the message is RFC 5424 (PRI, version, header fields, structured data
// escaped, the record as JSON in MSG); the frame counts the message's octets, not its characters.
import t from 'tap';
import type { AuditEntry } from '../../src/model/audit.js';
import { octetCounted, streamRecord, syslogMessage } from '../../src/audit-stream/record.js';

const entry: AuditEntry = {
  seq: 7,
  at: Date.UTC(2030, 0, 2, 3, 4, 5, 6),
  projectId: 'prj_1',
  actor: 'usr_"odd]\\',
  actorName: 'Zoë',
  action: 'flag.patch',
  flagId: 'flg_1',
  env: 'production',
  changes: { enabled: { before: false, after: true } },
};

/** Splits octet-counted frames as a receiver does: the count, a space, that many bytes. */
function frames(bytes: Buffer): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    const length = Number(bytes.subarray(at, space).toString('ascii'));
    out.push(bytes.subarray(space + 1, space + 1 + length).toString('utf8'));
    at = space + 1 + length;
  }
  return out;
}

t.test('a record is the entry with its stable id, the revision and the organisation', async (t) => {
  const record = streamRecord(entry, 'db_1', 42, 'org_1');
  t.strictSame(record, { id: 'db_1:7', revision: 42, orgId: 'org_1', ...entry });
  t.equal(streamRecord(entry, 'db_1', 99, null).id, record.id, 'the same entry read at another revision keeps its id');
});

t.test('the syslog message is RFC 5424 with structured data and the record as JSON', async (t) => {
  const record = streamRecord(entry, 'db_1', 42, 'org_1');
  const message = syslogMessage(record, 'node one', 1234);
  const m = /^<(\d+)>1 (\S+) (\S+) (\S+) (\S+) (\S+) (\[.*?[^\\]\]) (\{.*\})$/.exec(message);
  t.ok(m, message);
  const [, pri, timestamp, host, app, procId, msgId, sd, msg] = m!;
  t.equal(Number(pri), 13 * 8 + 5, 'facility log audit, severity notice');
  t.equal(timestamp, '2030-01-02T03:04:05.006Z');
  t.equal(host, 'node_one', 'a header field holds printable characters only');
  t.equal(app, 'flagwire');
  t.equal(procId, '1234');
  t.equal(msgId, 'flag.patch');
  t.equal(sd, '[flagwire@32473 id="db_1:7" seq="7" revision="42" project="prj_1" actor="usr_\\"odd\\]\\\\"]', '", ] and \\ escaped');
  t.strictSame(JSON.parse(msg!), record);
  t.match(
    syslogMessage({ ...record, action: 'x'.repeat(40) }, '', 1),
    /^<109>1 \S+ - flagwire 1 x{32} \[/,
    'MSGID at most 32; an empty field is -',
  );
});

t.test('octet counting counts bytes, so frames split back exactly', async (t) => {
  const a = syslogMessage(streamRecord(entry, 's', 1, null), 'h', 1);
  const b = syslogMessage(streamRecord({ ...entry, seq: 8, actorName: '名前' }, 's', 1, null), 'h', 1);
  const bytes = Buffer.concat([octetCounted(a), octetCounted(b)]);
  t.equal(octetCounted(b).toString('utf8').split(' ')[0], String(Buffer.byteLength(b)));
  t.not(Buffer.byteLength(b), b.length, 'the message holds characters of more than one byte');
  t.strictSame(frames(bytes), [a, b]);
});

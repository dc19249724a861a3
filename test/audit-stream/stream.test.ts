// The audit stream in-process, on a real store: the store lists every project's entries after a
// sequence number in order; the file sink writes each entry exactly once across restarts, a crash
// between its flush and its cursor, and a torn last line; the syslog sink confirms what it sent only by
// a clean close, so a receiver that drops the connection is sent again what it may not have read; the
// RELP sink confirms what the receiver answered, and sends again only what it did not take.
import { appendFileSync, existsSync, readFileSync, renameSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { Cursor } from '../../src/audit-stream/cursor.js';
import { FileSink } from '../../src/audit-stream/file-sink.js';
import { kMaxAnswerData, RelpSink } from '../../src/audit-stream/relp-sink.js';
import type { StreamRecord } from '../../src/audit-stream/record.js';
import { AuditStream } from '../../src/audit-stream/stream.js';
import { SyslogSink } from '../../src/audit-stream/syslog-sink.js';
import type { AuditSink } from '../../src/audit-stream/sink.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const dir = tempDataDir();
const world = buildWorld(dir);
const { store, ids } = world;
t.teardown(() => store.close());
const log = pino({ level: 'silent' });
/** No writer here: the stream reads again at each short wait. */
const commits = {
  commitCount: () => 0,
  commitAfter: (_seen: number, ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 20))),
};

/** Appends `count` entries, alternating between two projects; their sequence numbers. */
function append(count: number): number[] {
  return store.transact((w) =>
    Array.from(
      { length: count },
      (_, i) =>
        w.appendAudit({
          at: Date.now(),
          projectId: i % 2 === 0 ? ids.single : ids.multi,
          actor: 'operator',
          actorName: 'operator',
          action: 'flag.patch',
          flagId: null,
          env: null,
          changes: { n: { before: i, after: i + 1 } },
        }).seq,
    ),
  );
}

function lastSeq(): number {
  store.resetReadTxn();
  return Math.max(
    ...[ids.single, ids.multi, ids.singleB, ids.free].map((p) => store.listAudit(p, { limit: 1, before: null })[0]?.seq ?? 0),
  );
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in 60 s: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const seqsOf = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as StreamRecord).seq);

const run = (sink: AuditSink, cursor: Cursor) => {
  const stream = new AuditStream(store, commits, sink, cursor, log, { idleMs: 20, settleMs: 20 });
  return stream.start().then(() => stream);
};

t.test('the store lists every project entry after a sequence number, lowest first, up to a limit', async (t) => {
  const made = append(7);
  const from = made[0]! - 1;
  store.resetReadTxn();
  t.strictSame(
    store.listAuditAfter(from, 100).map((e) => e.seq),
    made,
    'both projects, in sequence order',
  );
  t.strictSame(
    store.listAuditAfter(from, 3).map((e) => e.seq),
    made.slice(0, 3),
  );
  t.strictSame(
    store.listAuditAfter(made[4]!, 100).map((e) => e.seq),
    made.slice(5),
  );
  t.strictSame(store.listAuditAfter(made.at(-1)!, 100), []);
});

t.test('the file sink writes each entry once, across restarts, a lagging cursor and a torn line', async (t) => {
  const path = join(dir, 'audit.jsonl');
  const cursor = new Cursor(dir, 'file-test');
  append(1200);
  let stream = await run(new FileSink(path), cursor);
  await until('every entry in the file', () => seqsOf(path).at(-1) === lastSeq());
  await stream.stop(1000);
  const all = seqsOf(path);
  t.strictSame(
    all,
    Array.from({ length: all.length }, (_, i) => i + 1),
    'every entry from the first, once, in order',
  );
  t.equal(await cursor.read(), lastSeq());
  const first = JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!) as StreamRecord;
  t.match(first, { id: `${store.source()}:1`, seq: 1, orgId: /./, revision: Number });

  // A crash after the file was flushed but before the cursor was written: the file's last line rules.
  await cursor.write(lastSeq() - 300);
  // And a crash in the middle of a line.
  appendFileSync(path, '{"id":"torn');
  append(5);
  stream = await run(new FileSink(path), cursor);
  await until('the new entries in the file', () => seqsOf(path).at(-1) === lastSeq());
  await stream.stop(1000);
  const after = seqsOf(path);
  t.strictSame(
    after,
    Array.from({ length: lastSeq() }, (_, i) => i + 1),
    'none twice, none lost, the torn line gone',
  );
});

t.test('a file moved away (rotation) is followed by a new one holding what came after', async (t) => {
  const path = join(dir, 'rotated.jsonl');
  const cursor = new Cursor(dir, 'rotate-test');
  await cursor.write(lastSeq());
  const stream = await run(new FileSink(path), cursor);
  const [a] = append(1);
  await until('the first entry', () => readFileSync(path, 'utf8') !== '');
  renameSync(path, `${path}.1`);
  const [b] = append(1);
  await until('the second entry', () => existsSync(path) && seqsOf(path).includes(b!));
  await stream.stop(1000);
  t.strictSame(seqsOf(`${path}.1`), [a], 'the moved file keeps what it had');
  t.strictSame(seqsOf(path), [b], 'the new one starts where it ended');
});

/** A syslog receiver in process: the messages it read, from octet-counted frames; `dropAfter` resets its next connection after that many bytes. */
class Receiver {
  readonly received: string[] = [];
  dropAfter: number | null = null;
  readonly server = createServer((socket) => this.serve(socket));

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private serve(socket: Socket): void {
    const dropAfter = this.dropAfter;
    this.dropAfter = null;
    let buffered = Buffer.alloc(0);
    let read = 0;
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (dropAfter !== null && read > dropAfter) return void socket.resetAndDestroy();
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const space = buffered.indexOf(0x20);
        const length = Number(buffered.subarray(0, space).toString('ascii'));
        if (space < 0 || buffered.length < space + 1 + length) break;
        this.received.push(buffered.subarray(space + 1, space + 1 + length).toString('utf8'));
        buffered = buffered.subarray(space + 1 + length);
      }
    });
  }
}

t.test('the syslog sink confirms only by a clean close, and sends again what a dropped connection held', async (t) => {
  const r = new Receiver();
  await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => r.server.close(() => resolve())));
  const cursor = new Cursor(dir, 'syslog-test');
  const from = lastSeq();
  await cursor.write(from);
  // The first connection is reset by the receiver partway: what it held past the reset is lost there.
  r.dropAfter = 200_000;
  const made = append(3000);
  const stream = await run(new SyslogSink({ host: '127.0.0.1', port: r.port }), cursor);
  const seqs = () => r.received.map((m) => Number(/ seq="(\d+)"/.exec(m)![1]));
  await until('every entry received', () => new Set(seqs()).size === made.length && seqs().every((s) => s > from));
  await until(
    'the cursor at the last entry',
    () => readFileSync(join(dir, '.audit-stream-syslog-test.cursor'), 'utf8').trim() === String(made.at(-1)),
  );
  t.strictSame(
    [...new Set(seqs())].sort((a, b) => a - b),
    made,
    'none lost',
  );
  const twice = seqs().length - made.length;
  t.ok(twice >= 0, `${twice} received twice, each dropped by its id`);
  // Nothing more is sent while nothing is written: a restart sends only what comes after.
  await stream.stop(1000);
  const before = r.received.length;
  const again = await run(new SyslogSink({ host: '127.0.0.1', port: r.port }), cursor);
  const [next] = append(1);
  await until('the next entry', () => seqs().includes(next!));
  await again.stop(1000);
  t.equal(r.received.length, before + 1, 'after a clean stop, nothing is sent twice');
});

/**
 * A RELP receiver in process that takes each message it answers 200: it refuses the `refuseAt`th syslog
 * command it reads (500), and at the `closeAt`th it takes and answers nothing more on that connection:
 * it says serverclose and closes, as a stopping rsyslog does. At the `oversizeAt`th it takes nothing more
 * either, and answers with a frame declaring 999,999,999 bytes, then sends bytes of it until the sink
 * closes the connection or `kJunk` were sent.
 */
class RelpReceiver {
  readonly taken: string[] = [];
  read = 0;
  refuseAt: number | null = null;
  closeAt: number | null = null;
  oversizeAt: number | null = null;
  /** Bytes of the oversized frame handed to the system, and when its connection ended. */
  junkSent = 0;
  junkEndedAt = 0;
  /** When each connection came. */
  readonly connectedAt: number[] = [];
  readonly server = createServer((socket) => this.serve(socket));

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private serve(socket: Socket): void {
    this.connectedAt.push(Date.now());
    socket.on('error', () => {});
    // Latin-1 keeps a character per byte, as DATALEN counts.
    let buffered = '';
    let closed = false;
    const answer = (txnr: string, data: string) => socket.write(data === '' ? `${txnr} rsp 0\n` : `${txnr} rsp ${data.length} ${data}\n`);
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (;;) {
        const head = /^(\d+) ([a-z]+) (\d+)[ \n]/.exec(buffered);
        if (closed || head === null) return;
        const [whole, txnr, command, length] = head as unknown as [string, string, string, string];
        const size = length === '0' ? whole.length : whole.length + Number(length) + 1;
        if (buffered.length < size) return;
        const data = Buffer.from(buffered.slice(whole.length, whole.length + Number(length)), 'latin1').toString('utf8');
        buffered = buffered.slice(size);
        if (command === 'open') answer(txnr, '200 OK\nrelp_version=0\ncommands=syslog');
        if (command === 'close') answer(txnr, '');
        if (command !== 'syslog') continue;
        this.read += 1;
        if (this.read === this.closeAt) {
          closed = true;
          return void socket.end('0 serverclose 0\n');
        }
        if (this.read === this.oversizeAt) {
          closed = true;
          return void this.sendJunk(socket, txnr);
        }
        if (this.read === this.refuseAt) {
          answer(txnr, '500 not now');
          continue;
        }
        this.taken.push(data);
        answer(txnr, '200 OK');
      }
    });
  }

  private async sendJunk(socket: Socket, txnr: string): Promise<void> {
    const piece = Buffer.alloc(kMiB, 'x');
    socket.write(`${txnr} rsp 999999999 `);
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    while (this.junkSent < kJunk && !socket.destroyed) {
      const sent = new Promise<boolean>((resolve) => socket.write(piece, (err) => resolve(err == null)));
      if (!(await Promise.race([sent, ended.then(() => false)]))) break;
      this.junkSent += piece.length;
    }
    socket.end();
    await ended;
    this.junkEndedAt = Date.now();
  }
}

const kMiB = 1024 * 1024;
const kJunk = 256 * kMiB;

t.test('the RELP sink confirms what was answered 200, and sends again only what was not', async (t) => {
  const r = new RelpReceiver();
  await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => r.server.close(() => resolve())));
  const cursor = new Cursor(dir, 'relp-test');
  const from = lastSeq();
  await cursor.write(from);
  // One entry refused, and later the connection closed with a window's worth read and not answered.
  r.refuseAt = 700;
  r.closeAt = 1700;
  const made = append(3000);
  const stream = await run(new RelpSink({ host: '127.0.0.1', port: r.port }), cursor);
  const seqs = () => r.taken.map((m) => Number(/ seq="(\d+)"/.exec(m)![1]));
  await until(
    'the cursor at the last entry',
    () => readFileSync(join(dir, '.audit-stream-relp-test.cursor'), 'utf8').trim() === String(made.at(-1)),
  );
  t.ok(r.read > made.length + 1, `${r.read - made.length} of ${r.read} commands read were sent again, not taken the first time`);
  t.strictSame(
    [...seqs()].sort((a, b) => a - b),
    made,
    'every entry taken exactly once',
  );
  // Nothing more is sent while nothing is written: a restart sends only what comes after.
  await stream.stop(1000);
  const before = r.taken.length;
  const again = await run(new RelpSink({ host: '127.0.0.1', port: r.port }), cursor);
  const [next] = append(1);
  await until('the next entry', () => seqs().includes(next!));
  await again.stop(1000);
  t.equal(r.taken.length, before + 1, 'after a clean stop, nothing is sent twice');
});

t.test('the RELP sink refuses an answer longer than an answer can be, backs off, and loses nothing', async (t) => {
  const r = new RelpReceiver();
  await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => r.server.close(() => resolve())));
  const warnings: string[] = [];
  const warnLog = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
  const cursor = new Cursor(dir, 'relp-oversize-test');
  await cursor.write(lastSeq());
  r.oversizeAt = 300;
  const made = append(1000);
  const stream = new AuditStream(store, commits, new RelpSink({ host: '127.0.0.1', port: r.port }), cursor, warnLog, {
    idleMs: 20,
    settleMs: 20,
  });
  await stream.start();
  await until(
    'the cursor at the last entry',
    () => readFileSync(join(dir, '.audit-stream-relp-oversize-test.cursor'), 'utf8').trim() === String(made.at(-1)),
  );
  await stream.stop(1000);
  // What the system's socket buffers hold, at most, beside the sink's bound: the sink read no more.
  t.ok(r.junkSent < kJunk / 8, `the sink closed the connection after ${r.junkSent / kMiB} MiB of the frame, not ${kJunk / kMiB}`);
  t.match(warnings.join('\n'), `not speaking RELP: a frame of 999999999 bytes of data, above the ${kMaxAnswerData} an answer may have`);
  const after = r.connectedAt.find((at) => at >= r.junkEndedAt);
  t.ok(after !== undefined && after - r.junkEndedAt >= 400, `connected again after a pause (${after! - r.junkEndedAt} ms)`);
  t.strictSame(
    r.taken.map((m) => Number(/ seq="(\d+)"/.exec(m)![1])).sort((a, b) => a - b),
    made,
    'every entry taken exactly once',
  );
});

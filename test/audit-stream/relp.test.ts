// Black-box: a Flagwire server streams 100,000 audit entries to Debian's rsyslog over RELP (imrelp, with
// the direct main queue docs/audit-stream.md recommends), across a graceful restart of rsyslog (SIGTERM)
// and one of Flagwire mid-stream, and 20 more by PATCHes: rsyslog's file ends with every entry, none
// lost and none twice (with FLAGWIRE_AUDIT_SYSLOG=tcp:// the same run gets thousands twice).
// And a RELP receiver that hangs, one that answers nothing and one that answers only open: every PATCH
// is answered meanwhile, no more than the window is sent unanswered, and the node still stops.
import { createServer, type Socket } from 'node:net';
import t from 'tap';
import { kWindow } from '../../src/audit-stream/relp-sink.js';
import { auditBacklog } from '../helpers/audit-backlog.js';
import { freePort } from '../helpers/free-port.js';
import { call } from '../helpers/http.js';
import { TestRsyslog } from '../helpers/rsyslog.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const kCount = 100_000;
const kPatches = 20;

let server: TestServer | null = null;
t.teardown(async () => {
  await server?.stop();
});

// The bounds only catch a hang: the whole backlog on a loaded 2-core machine takes minutes.
async function until(what: string, check: () => boolean, counts: () => string, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in ${ms / 1000} s: ${what} (${counts()})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The runs of sequence numbers written twice, and where in the file each run was written first and again. */
function twice(all: readonly number[]): string {
  const first = new Map<number, number>();
  const runs: { from: number; to: number; line: number; again: number }[] = [];
  for (const [line, seq] of all.entries()) {
    const at = first.get(seq);
    if (at === undefined) {
      first.set(seq, line);
      continue;
    }
    const run = runs.at(-1);
    if (run !== undefined && run.to === seq - 1) run.to = seq;
    else runs.push({ from: seq, to: seq, line: at, again: line });
  }
  return runs.map((r) => `${r.from}-${r.to} (lines ${r.line} and ${r.again})`).join(', ');
}

t.test('over RELP, rsyslog gets every entry exactly once across graceful restarts of both ends', async (t) => {
  const { dir, ids, secrets, entries } = await auditBacklog(kCount);
  const total = entries + kPatches;
  const rsyslog = TestRsyslog.create(await freePort(), 'relp');
  t.teardown(() => rsyslog.stop());
  const env = { FLAGWIRE_AUDIT_SYSLOG: `relp://127.0.0.1:${rsyslog.port}` };
  /** The sequence numbers rsyslog wrote, one per message it took (one taken twice appears twice). */
  const received = () => rsyslog.lines().map((l) => Number(/ seq="(\d+)"/.exec(l)?.[1] ?? Number.NaN));
  const counts = () => {
    const all = received();
    return `${all.length} received, ${new Set(all).size} distinct, of ${total}`;
  };

  await rsyslog.start();
  server = await startTestServer({ dataDir: dir, env });
  await until('a fifth received', () => received().length >= kCount / 5, counts);
  await rsyslog.stop();
  t.ok(received().length < kCount, `rsyslog stopped mid-stream, at ${counts()}`);
  await rsyslog.start();

  await until('half received', () => received().length >= kCount / 2, counts);
  t.equal(await server.stop(), 0, 'Flagwire stops gracefully mid-stream');
  server = null;
  t.ok(received().length < entries, `Flagwire stopped mid-stream, at ${counts()}`);
  server = await startTestServer({ dataDir: dir, env });
  for (let i = 0; i < kPatches; i++) {
    const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { trafficPercentage: i } });
    t.equal(r.status, 200);
  }

  await until('every entry received', () => new Set(received()).size >= total, counts);
  // Time for anything the stream might still send twice to arrive.
  await new Promise((r) => setTimeout(r, 3000));
  const all = received();
  const doubled = all.length - new Set(all).size;
  const lost = total - new Set(all.filter((s) => s >= 1 && s <= total)).size;
  t.comment(`${counts()}: ${lost} lost, ${doubled} doubled${doubled > 0 ? `: ${twice(all)}` : ''}`);
  t.equal(lost, 0, 'none lost');
  // A stopping rsyslog answers what it wrote when only one command is unanswered (relp-sink.ts, kWindow);
  // plain TCP sends again all since its last confirming close, up to a MiB of entries a restart.
  t.equal(doubled, 0, 'none twice');
  t.strictSame(
    [...new Set(all)].sort((a, b) => a - b),
    oneToN(total),
    'every entry, and nothing else',
  );
  t.equal(await server.stop(), 0);
  server = null;
});

/** A RELP receiver that hangs: it reads, answers open only if told to, and answers nothing else. */
class HungReceiver {
  readonly server = createServer((socket) => this.accept(socket));
  connections = 0;
  /** The syslog commands it read, none answered. */
  syslogCommands = 0;
  private readonly sockets: Socket[] = [];

  constructor(private readonly answersOpen: boolean) {}

  private accept(socket: Socket): void {
    this.connections += 1;
    this.sockets.push(socket);
    socket.on('error', () => {});
    // Latin-1 keeps a character per byte, as DATALEN counts.
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (;;) {
        const head = /^(\d+) ([a-z]+) (\d+)[ \n]/.exec(buffered);
        if (head === null) return;
        const length = Number(head[3]);
        const size = length === 0 ? head[0].length : head[0].length + length + 1;
        if (buffered.length < size) return;
        buffered = buffered.slice(size);
        if (head[2] === 'syslog') this.syslogCommands += 1;
        const offers = '200 OK\nrelp_version=0\ncommands=syslog';
        if (head[2] === 'open' && this.answersOpen) socket.write(`${head[1]} rsp ${offers.length} ${offers}\n`);
      }
    });
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

t.test('a RELP receiver that hangs slows no write, holds at most the window, and lets the node stop', async (t) => {
  for (const answersOpen of [false, true]) {
    const { dir, ids, secrets } = await auditBacklog(kWindow * 3);
    const hung = new HungReceiver(answersOpen);
    const port = await freePort();
    await new Promise<void>((resolve) => hung.server.listen(port, '127.0.0.1', resolve));
    t.teardown(() => hung.close());
    const counts = () => `${hung.connections} connections, ${hung.syslogCommands} syslog commands read`;
    server = await startTestServer({ dataDir: dir, env: { FLAGWIRE_AUDIT_SYSLOG: `relp://127.0.0.1:${port}` } });
    if (answersOpen) await until('the window sent', () => hung.syslogCommands >= kWindow, counts);
    else await until('a connection', () => hung.connections >= 1, counts);

    let slowest = 0;
    for (let i = 0; i < kPatches; i++) {
      const began = performance.now();
      const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { trafficPercentage: i } });
      slowest = Math.max(slowest, performance.now() - began);
      t.equal(r.status, 200, 'answered while the receiver hangs');
    }
    t.comment(`${answersOpen ? 'answers open only' : 'answers nothing'}: slowest PATCH ${slowest.toFixed(0)} ms`);
    // Past the stream's settle and idle waits: what it sent by now is all it sends into the hung receiver.
    await new Promise((r) => setTimeout(r, 3000));
    t.equal(hung.syslogCommands, answersOpen ? kWindow : 0, `no more than the window sent unanswered (${counts()})`);
    t.equal(hung.connections, 1, 'nothing sent again on another connection');
    const began = Date.now();
    t.equal(await server.stop(), 0, 'the node stops');
    server = null;
    t.comment(`stopped in ${Date.now() - began} ms`);
  }
});

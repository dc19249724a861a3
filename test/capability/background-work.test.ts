// The node's background work in its phases (src/capability/background-work.ts), with works that record
// what is asked of them: the outbox's senders start first whatever the list's order, the rest one at a
// time in the list's order; a failed start stops what started, the last first; at shutdown every stop
// begins at once and the phases settle apart. And the capabilities' declarations, in the order start.ts
// starts them.
import t from 'tap';
import { type BackgroundPhase, type BackgroundWork, NodeBackground, type NodeServices } from '../../src/capability/background-work.js';
import { kCapabilityList } from '../../src/capabilities.js';

// The works below never read the node's services; the node reads its settings (a relay or not).
const kNode = { config: { upstream: null } } as unknown as NodeServices;
const kRelay = { config: { upstream: { url: 'http://upstream.test', token: 'fwr_x' } } } as unknown as NodeServices;

interface Recorded {
  events: string[];
  /** Ends the named work's stop, which otherwise waits. */
  finishStop(name: string): void;
}

function recorder(): Recorded & {
  work(name: string, phase: BackgroundPhase, opts?: { off?: boolean; fails?: boolean; runsOnRelay?: boolean }): BackgroundWork;
} {
  const events: string[] = [];
  const stops = new Map<string, () => void>();
  return {
    events,
    finishStop: (name) => stops.get(name)?.(),
    work: (name, phase, opts = {}) => ({
      name,
      phase,
      runsOnRelay: opts.runsOnRelay ?? false,
      async start() {
        events.push(`start ${name}`);
        // A start that awaits: the next one must not begin before it ends.
        await new Promise((resolve) => setImmediate(resolve));
        if (opts.fails) throw new Error(`${name} failed`);
        events.push(`started ${name}`);
        if (opts.off) return null;
        return {
          stop: (reason) => {
            events.push(`stop ${name} (${reason})`);
            return reason === 'shutdown' ? new Promise<void>((resolve) => stops.set(name, resolve)) : Promise.resolve();
          },
        };
      },
    }),
  };
}

t.test('the outbox starts first; the rest one at a time, each awaited, in the list order', async (t) => {
  const r = recorder();
  const background = new NodeBackground(kNode);
  await background.start([
    r.work('a', 'before listening'),
    r.work('mail', 'outbox'),
    r.work('b', 'before listening'),
    r.work('off', 'outbox', { off: true }),
  ]);
  t.same(r.events, ['start mail', 'started mail', 'start off', 'started off', 'start a', 'started a', 'start b', 'started b']);
  await background.abandon();
  t.same(
    r.events.slice(8),
    ['stop b (failed start)', 'stop a (failed start)', 'stop mail (failed start)'],
    'a work left off is not stopped',
  );
});

t.test('a failed start rejects; abandon stops what started, the last first', async (t) => {
  const r = recorder();
  const background = new NodeBackground(kNode);
  await t.rejects(
    background.start([r.work('a', 'before listening'), r.work('b', 'before listening', { fails: true }), r.work('c', 'before listening')]),
    { message: 'b failed' },
  );
  t.notOk(r.events.includes('start c'), 'nothing starts after the failure');
  await background.abandon();
  t.same(
    r.events.filter((e) => e.startsWith('stop')),
    ['stop a (failed start)'],
    'the failed work is its own to clean up',
  );
});

t.test('at shutdown every stop begins at once; the phases settle apart', async (t) => {
  const r = recorder();
  const background = new NodeBackground(kNode);
  await background.start([r.work('follow', 'before listening'), r.work('mail', 'outbox')]);
  r.events.length = 0;
  const { beforeDrain, afterDrain } = background.stopForShutdown();
  t.same(r.events, ['stop mail (shutdown)', 'stop follow (shutdown)'], 'both stops begun, before anything is awaited');
  const settled: string[] = [];
  void beforeDrain.then(() => settled.push('before drain'));
  void afterDrain.then(() => settled.push('after drain'));
  r.finishStop('follow');
  await beforeDrain;
  t.same(settled, ['before drain'], "the outbox's stop is still under way: it overlaps the drain");
  r.finishStop('mail');
  await afterDrain;
  t.same(settled, ['before drain', 'after drain']);
});

t.test('a relay starts only the work declared to run on one', async (t) => {
  const r = recorder();
  const background = new NodeBackground(kRelay);
  await background.start([
    r.work('mail', 'outbox'),
    r.work('serve', 'before listening', { runsOnRelay: true }),
    r.work('plans', 'before listening'),
  ]);
  t.same(r.events, ['start serve', 'started serve']);
  await background.abandon();
});

t.test("on a relay, of the capabilities' background work only the sync service runs: the rest writes", async (t) => {
  const works = kCapabilityList.flatMap((c) => c.background ?? []);
  t.same(
    works.filter((w) => w.runsOnRelay).map((w) => w.name),
    ['sync service'],
  );
});

t.test("the capabilities' background work, as start.ts starts it: the scheduler before the flag file, the senders first", async (t) => {
  const declared = kCapabilityList.flatMap((c) => (c.background ?? []).map((work) => ({ capability: c.name, work })));
  const names = declared.map(({ work }) => work.name);
  t.ok(names.length > 0);
  t.strictSame(
    names.filter((name, i) => names.indexOf(name) !== i),
    [],
    'each work named once',
  );
  // The declared works, each recorded under its own name and phase, started as the node starts them.
  const r = recorder();
  const background = new NodeBackground(kNode);
  await background.start(declared.map(({ work }) => r.work(work.name, work.phase, { runsOnRelay: work.runsOnRelay })));
  const started = r.events.filter((e) => e.startsWith('start ')).map((e) => e.slice('start '.length));
  const inPhase = (phase: BackgroundPhase) => declared.filter(({ work }) => work.phase === phase).map(({ work }) => work.name);
  t.strictSame(started, [...inPhase('outbox'), ...inPhase('before listening')], "by phase, each in the capabilities' order");
  await background.abandon();
  const phaseOf = (capability: string) => declared.filter((d) => d.capability === capability).map(({ work }) => work.phase);
  // What leaves the node (mail, webhook deliveries, the audit stream's records) is sent from the outbox phase.
  const senders = ['webhooks', 'audit-stream', 'mail'];
  for (const sender of senders) t.strictSame(phaseOf(sender), ['outbox'], `${sender} sends from the outbox phase`);
  t.strictSame(
    declared.filter(({ work }) => work.phase === 'outbox').map((d) => d.capability),
    senders,
    'and nothing else does: the rest starts one at a time before the node listens',
  );
  // The changes that fell due while the node was down run before a followed file is applied.
  t.strictSame(phaseOf('release-plans'), ['before listening']);
  t.strictSame(phaseOf('flags-as-code'), ['before listening']);
  t.ok(
    started.indexOf(declared.find((d) => d.capability === 'release-plans')!.work.name) <
      started.indexOf(declared.find((d) => d.capability === 'flags-as-code')!.work.name),
    "release plans' scheduler starts before flags as code's follower",
  );
});

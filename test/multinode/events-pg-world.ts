// What the tests of events counted on two nodes sharing PostgreSQL (events-pg.test.ts) share: the
// nodes (a pair per test that needs its own, or a pair the file's tests share, in a project each), the two
// flags running their experiments, the events sent in phases (see that file's head), what raw events keep
// and export, and the statistics compared with a recomputation from the events.
import t from 'tap';
import { type CountedEvent, millionths } from '../../src/events/tally.js';
import type { TestContext } from '../helpers/cli.js';
import { recomputedStatistics } from '../helpers/event-tally.js';
import { call, type Reply } from '../helpers/http.js';
import type { TestDatabases } from '../helpers/postgres.js';
import { random } from '../helpers/seeded-random.js';
import type { TestServer } from '../helpers/server.js';
import { projectInTransaction, type Seeded, seededDatabase, startReadyNodes, until, waitReady, writeInProcess } from './support.js';

/** The file's own test, where what outlives one test is torn down. */
const root = t;

/** An event as a client sends it, and as it counts. */
export interface Sent {
  wire: Record<string, unknown>;
  counted: CountedEvent;
}

/** Each flag the world declares: its name, the experiment it runs and its variants. */
export const kFlags = [
  { name: 'checkout', experiment: 'checkout-2026', variants: ['on', 'off'] },
  { name: 'colour', experiment: 'colour-test', variants: ['red', 'green', 'blue'] },
] as const;
const kMetrics = ['purchase', 'revenue', 'clicks'];
/** Whole, fractional, negative and large values: none of them rounds in the sums. */
const kValues = [1, 2.5, -0.75, 123456.789, 999_999_999, 0.000001];

export interface World {
  url: string;
  nodes: TestServer[];
  /** The client key's secret (events use). */
  key: string;
  /** The write token's secret (the seeded owner's). */
  token: string;
  projectId: string;
}

/**
 * The worlds of the tests on `pg` (the shared cluster), each a function of the test that asks for it:
 * `world` of its own, `projectWorld` on the nodes the file's tests share, `clockWorld` on those the
 * tests that move the clocks share; and `usage`, the database's counts.
 */
export function eventNodes(pg: TestDatabases) {
  /**
   * Two nodes (or `count`) on a new database (of the shared cluster, unless given another); the two flags
   * running their experiments; a client key every node accepts for them.
   */
  async function world(t: TestContext, env: Record<string, string> = {}, databases: TestDatabases = pg, count = 2): Promise<World> {
    const { url, seeded } = await seededDatabase(t, databases);
    return experiments(url, await startReadyNodes(t, url, count, env), seeded);
  }

  /**
   * The two nodes of the tests that need nothing of their own (no setting but two front-end threads, no
   * node stopped, no clock moved), started once for all of them and stopped at the file's end: a pair of
   * nodes is most of a world's CPU. Two front-end threads a node, each counting on a pool of its own, are
   * what the first test sends to; a thread more costs a node's start a fraction of a second, a pair of
   * its own about 2.5 CPU s. Of the database-wide counts (usage()), only the raw events' must be one
   * test's: the raw events test is the only one of them whose project keeps raw events.
   */
  const kDefaultNodesEnv = { FLAGWIRE_HTTP_THREADS: '2' };
  let defaultNodes: Promise<{ url: string; nodes: TestServer[]; seeded: Seeded }> | null = null;
  let projects = 0;

  /**
   * A world on the default nodes, in a project of its own (made by the console), so that no test sees
   * another's events or statistics: those are the project's.
   */
  async function projectWorld(t: TestContext): Promise<World> {
    defaultNodes ??= seededDatabase(t, pg).then(async ({ url, seeded }) => ({
      url,
      seeded,
      nodes: await startReadyNodes(root, url, 2, kDefaultNodesEnv),
    }));
    const { url, nodes, seeded } = await defaultNodes;
    // Three console processes cost about what the shared nodes save: the project is made in this process.
    const project = await writeInProcess(t, url, (w) => projectInTransaction(w, seeded, `Shop ${++projects}`));
    // Written beside the nodes, not through them: each node's copy is brought up to PostgreSQL's revision.
    const revision = Number(
      (await pg.admin<{ revision: string }>(new URL(url).pathname.slice(1), 'SELECT revision FROM flagwire_meta')).rows[0]!.revision,
    );
    for (const node of nodes)
      await until(async () => (await waitReady(node)).replica.revision >= revision, 60_000, `the project on ${node.baseUrl}`);
    return experiments(url, nodes, project);
  }

  /**
   * The world of the two tests that move the nodes' clocks (FLAGWIRE_TEST_HOOKS): made by the first of
   * them, stopped at the file's end; a pair of its own, its counts being the database's, not a project's.
   * Neither test's counts see the other's: the raw events test keeps raw events and sends no batch ids,
   * the batch id test sends batch ids and keeps no raw events (its project keeps none once the first
   * has run). A pair of nodes is most of a world's CPU (2.5 CPU s).
   */
  let clockNodes: Promise<World> | null = null;
  function clockWorld(t: TestContext): Promise<World> {
    clockNodes ??= seededDatabase(t, pg).then(async ({ url, seeded }) =>
      experiments(url, await startReadyNodes(root, url, 2, { FLAGWIRE_TEST_HOOKS: '1' }), seeded),
    );
    return clockNodes;
  }

  /** The counts PostgreSQL keeps for the limits, beside what they count: the raw bytes per project and the subjects. */
  async function usage(url: string): Promise<{ bytes: string; rawSum: string; rows: number; subjects: string; subjectRows: number }> {
    const database = new URL(url).pathname.slice(1);
    const { rows } = await pg.admin<{ bytes: string; rawSum: string; rows: number; subjects: string; subjectRows: number }>(
      database,
      `SELECT (SELECT coalesce(sum(bytes), 0)::text FROM flagwire_tally_raw_bytes) AS bytes,
              (SELECT coalesce(sum(bytes), 0)::text FROM flagwire_tally_raw) AS "rawSum",
              (SELECT count(*)::int FROM flagwire_tally_raw) AS rows,
              (SELECT coalesce(sum(subjects), 0)::text FROM flagwire_tally_subject_counts) AS subjects,
              (SELECT count(*)::int FROM flagwire_tally_subjects) AS "subjectRows"`,
    );
    return rows[0]!;
  }

  return { world, projectWorld, clockWorld, usage };
}

/** The two flags of `seeded`'s project running their experiments on `nodes`; a client key both nodes accept for them. */
async function experiments(url: string, nodes: TestServer[], seeded: Seeded): Promise<World> {
  const a = nodes[0]!.baseUrl;
  const token = seeded.secret;
  const must = (r: Reply, status: number) => {
    if (r.status !== status) throw new Error(`expected ${status}: ${r.status} ${r.text}`);
  };
  must(
    await call(a, 'PATCH', `/api/v1/flags/${seeded.flagId}`, {
      token,
      body: { enabled: true, trafficPercentage: 50, experiment: kFlags[0].experiment },
    }),
    200,
  );
  must(
    await call(a, 'POST', '/api/v1/flags', {
      token,
      body: {
        name: kFlags[1].name,
        enabled: true,
        trafficPercentage: 100,
        experiment: kFlags[1].experiment,
        variants: { red: 'red', green: 'green', blue: 'blue' },
        defaultVariant: 'red',
      },
    }),
    201,
  );
  const made = await call(a, 'POST', '/api/v1/client-keys', { token, body: { name: 'web', uses: ['events'] } });
  must(made, 201);
  const key = made.json.secret as string;
  await caughtUp(nodes, token, made);
  // Both nodes know the key and both flags' experiments: an exposure of no variant of theirs is
  // rejected for its variant (so counts nothing), not for its key or flag.
  for (const node of nodes)
    await until(
      async () => {
        const r = await call(node.baseUrl, 'POST', '/ofrep/v1/events', {
          token: key,
          body: {
            events: kFlags.map((f) => ({ kind: 'exposure', key: f.name, targetingKey: 'probe', variant: 'none', timestamp: Date.now() })),
          },
        });
        return r.status === 200 && r.json.rejected.every((x: { reason: string }) => /is not one of flag/.test(x.reason));
      },
      60_000,
      'the key and flags on every node',
    );
  return { url, nodes, key, token, projectId: seeded.projectId };
}

/**
 * Waits until each node's copy has the revision `written` was answered at: a read sent with
 * Flagwire-Min-Revision waits there for it, where polling the node every 10 ms took CPU from the nodes
 * it waited for. What the caller then checks with `until` holds at its first look (or, should the wait
 * end first, a later one).
 */
async function caughtUp(nodes: readonly TestServer[], token: string, written: Reply): Promise<void> {
  const headers = { 'flagwire-min-revision': written.headers.get('flagwire-revision') ?? '0' };
  await Promise.all(nodes.map((node) => call(node.baseUrl, 'GET', '/api/v1/events/settings', { token, headers })));
}

/** Sets how many days the project keeps raw events (null: none), and waits until every node's copy says so. */
export async function keepRaw(t: TestContext, { nodes, token }: World, days: number | null): Promise<void> {
  const set = await call(nodes[0]!.baseUrl, 'PATCH', '/api/v1/events/settings', { token, body: { rawEventRetentionDays: days } });
  t.equal(set.status, 200, set.text);
  await caughtUp(nodes, token, set);
  for (const node of nodes)
    await until(
      async () => (await call(node.baseUrl, 'GET', '/api/v1/events/settings', { token })).json.rawEventRetentionDays === days,
      60_000,
      'the retention on every node',
    );
}

/** An event as a raw event keeps it (docs/events.md: Raw events), without when it was stored. */
export type KeptEvent = Record<'kind' | 'key' | 'targetingKey' | 'variant' | 'value' | 'details' | 'timestamp', unknown>;

export function asKept(wire: Record<string, unknown>): KeptEvent {
  return {
    kind: wire.kind,
    key: wire.key,
    targetingKey: wire.targetingKey,
    variant: wire.kind === 'exposure' ? wire.variant : null,
    value: wire.kind === 'track' ? wire.value : null,
    details: null,
    timestamp: wire.timestamp,
  };
}

/** The raw events exported from `node` (JSON lines), in the export's order. */
export async function exported(node: TestServer, token: string, query = ''): Promise<(KeptEvent & { storedAt: number })[]> {
  const r = await fetch(`${node.baseUrl}/api/v1/events/export${query}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`export: ${r.status} ${text}`);
  return jsonLinesOf(text);
}

export function jsonLinesOf(text: string): (KeptEvent & { storedAt: number })[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** The events as sets: each kept event, without when it was stored, in one order. */
export function sortedKept(events: readonly KeptEvent[]): string[] {
  return events
    .map(({ kind, key, targetingKey, variant, value, details, timestamp }) =>
      JSON.stringify([kind, key, targetingKey, variant, value, details, timestamp]),
    )
    .sort();
}

/** Raw events as they count, in their order: replayed, they give the statistics. */
export function replayed(events: readonly KeptEvent[]): CountedEvent[] {
  return events.map((e): CountedEvent => {
    const subject = e.targetingKey as string;
    const at = e.timestamp as number;
    if (e.kind === 'track') return { kind: 'track', subject, metric: e.key as string, value: millionths(e.value as number), at };
    const experiment = kFlags.find((f) => f.name === e.key)!.experiment;
    return { kind: 'exposure', subject, experiment, variant: e.variant as string, at };
  });
}

/** The events of one run, in phases (see the file's head), from `seed`. */
export function phases(seed: number, subjects: number): { before: Sent[]; exposures: Sent[]; again: Sent[]; after: Sent[] } {
  const next = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const now = Date.now();
  const names = Array.from({ length: subjects }, (_, i) => `user-${i}`);
  // Within the last two hours: exposures in the first, so outcomes fall on both sides of them.
  const at = (from: number, span: number) => now - 2 * 3_600_000 + from + Math.floor(next() * span);
  const track = (subject: string, when: number): Sent => {
    const metric = pick(kMetrics);
    const value = pick(kValues);
    return {
      wire: { kind: 'track', key: metric, targetingKey: subject, value, timestamp: when },
      counted: { kind: 'track', subject, metric, value: millionths(value), at: when },
    };
  };
  const exposure = (subject: string, flag: (typeof kFlags)[number], variant: string, when: number): Sent => ({
    wire: { kind: 'exposure', key: flag.name, targetingKey: subject, variant, timestamp: when },
    counted: { kind: 'exposure', subject, experiment: flag.experiment, variant, at: when },
  });
  const before = Array.from({ length: subjects * 2 }, () => track(pick(names), at(0, 7_200_000)));
  const exposures: Sent[] = [];
  const again: Sent[] = [];
  for (const subject of names)
    for (const flag of kFlags) {
      if (next() < 0.2) continue;
      const when = at(0, 3_600_000);
      exposures.push(exposure(subject, flag, pick(flag.variants), when));
      // A second exposure, another variant perhaps: a duplicate, which changes nothing.
      if (next() < 0.5) again.push(exposure(subject, flag, pick(flag.variants), at(0, 7_200_000)));
    }
  const after = Array.from({ length: subjects * 8 }, () => track(pick(names), at(0, 7_200_000)));
  return { before, exposures, again, after };
}

/** `events` in batches of at most `size`, in order. */
export function batches<T>(events: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < events.length; i += size) out.push(events.slice(i, i + size));
  return out;
}

/** The statistics of every experiment on `node`, and as recomputed from `counted` in order. */
export async function compare(
  t: TestContext,
  node: TestServer,
  token: string,
  counted: readonly CountedEvent[],
  what: string,
): Promise<void> {
  for (const { experiment } of kFlags) {
    const r = await call(node.baseUrl, 'GET', `/api/v1/experiments/${experiment}/statistics`, { token });
    t.equal(r.status, 200, r.text);
    t.strictSame(r.json, recomputedStatistics(experiment, null, counted), `${what}: ${experiment} on ${node.baseUrl}, exactly`);
  }
}

// The bench's scenarios in one table: what each sends, to which server, and how its load is driven.
// runner.ts runs them, report.ts titles them. Another way to drive load (a native generator, say) is
// another `Load` kind here and its driver in runner.ts.
import type { BenchData } from './dataset.js';
import type { Sequence } from './load.js';

export type ScenarioKey = 'hello' | 'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g' | 'h' | 'i' | 'j' | 'k' | 'l' | 'm' | 'n';

/** What `--scenarios` may name; the hello world runs in every round whatever is chosen. */
export const kAllScenarios: ScenarioKey[] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n'];

const kKeys = 10_000;
export const kMixedWriteRate = 50;
export const kMixedWriteConnections = 10;
/**
 * (l): (a)'s requests offered at this fixed rate, evenly spaced (open model, bench/paced.ts), for
 * latency below saturation. A closed-loop run at n connections can never show a mean latency under
 * n ÷ throughput (Little's law: 200 connections at 28k req/s queue 7 ms on average), so a latency
 * target needs a fixed offered load.
 */
export const kLatencyRate = 10_000;

export const kJsonHeaders = { 'content-type': 'application/json' };

/** The twin Flagwire servers of (h)-(k) (runner.ts starts them). */
export type TwinRole = 'metricsOn' | 'metricsOff' | 'limitOn' | 'limitOff';
export type ServerRole = 'hello' | 'flagwire' | TwinRole;

export interface RequestPaths {
  a: string;
  b: string;
  c: string;
  d: string;
  /** (j)/(k): the token description, the cheapest authenticated Management route. */
  token: string;
  /** OFREP: the path, and the body whose `{key}` rotates like (a)'s targetingKey. */
  g: string;
  gBody: string;
  /**
   * (n): the typed flag, every request through its five rules down to `fractional` (version 2.3.1,
   * country US, an e-mail at example.com), keyed like (a).
   */
  n: string;
}

/** Request templates; `{key}` rotates over 10,000 targeting keys (each connection takes its share). */
export function requestPaths(data: BenchData): RequestPaths {
  return {
    a: `/v1/flags/${data.evalFlag.id}?targetingKey={key}&plan=beta`,
    b: `/v1/flags/${data.groupFlag.id}?env=${data.groupFlag.env}&targetingKey={key}&plan=beta`,
    c: `/v1/flags/project/${data.projectId}?targetingKey={key}&plan=beta&country=NL`,
    d: `/api/v1/flags/${data.evalFlag.id}`,
    token: '/api/v1/token',
    g: `/ofrep/v1/evaluate/flags/${data.evalFlag.id}`,
    gBody: '{"context":{"targetingKey":"{key}","plan":"beta"}}',
    n: `/v1/flags/${data.typedFlag.id}?targetingKey={key}&userId={key}&version=2.3.1&country=US&email=someone%40example.com&tier=free`,
  };
}

/** The hello world answers every GET with (a)'s 200 body. */
export function helloBody(data: BenchData): string {
  return JSON.stringify({ id: data.evalFlag.id, name: data.evalFlag.name, enabled: true });
}

const rotate = (template: string, post?: { body: string; headers: Record<string, string> }): Sequence => ({
  kind: 'rotate',
  template,
  keys: kKeys,
  ...(post ? { method: 'POST', ...post } : {}),
});

const readTokenGet = (path: string, data: BenchData): Sequence => ({
  kind: 'fixed',
  request: { method: 'GET', path, headers: { authorization: `Bearer ${data.readSecret}` } },
});

/**
 * PATCH runs: connection i owns flag i and alternates it between two values, so every request is a
 * change (never `changed: false`) and two connections never race on one flag. The values move on with
 * every write run (`writeRun` counts them), so the first request of a run changes the value the last
 * run left.
 */
function patches(data: BenchData, writeRun: number): Sequence {
  return { kind: 'patch', flagIds: data.writeFlagIds, value: 1 + ((writeRun * 2) % 98), secret: data.writeSecret };
}

/** (l)/(m): connection i of n takes keys i, i+n, … like a rotation. */
export function pacedPath(template: string, connections: number): (connection: number, k: number) => string {
  return (i, k) => template.replace('{key}', `user-${(i + k * connections) % kKeys}`);
}

export type Load =
  /** Closed loop (autocannon, load.ts): every connection sends its next request when the last is answered. */
  | { kind: 'reads'; requests(paths: RequestPaths, data: BenchData): Sequence }
  /** Closed-loop PATCHes, every answer checked to be a change; far from generator-bound, so one generator thread. */
  | { kind: 'writes'; requests(data: BenchData, writeRun: number): Sequence }
  /** The reads at full load, and beside them writes at a fixed rate in total (open model). */
  | {
      kind: 'mixed';
      reads(paths: RequestPaths, data: BenchData): Sequence;
      writes(data: BenchData, writeRun: number): Sequence;
      writeConnections: number;
      writeRate: number;
    }
  /** Open model (paced.ts): GETs of `template` offered at `rate`, evenly spaced. */
  | { kind: 'paced'; template(paths: RequestPaths): string; rate: number };

export interface Scenario {
  /** As RESULTS.md and the chart name it. */
  title: string;
  server: ServerRole;
  load: Load;
  /** Shown as a share of the hello world's req/s; not where the scenario sets its req/s (writes, a fixed rate). */
  vsHello: boolean;
}

const kReadsA: Load = { kind: 'reads', requests: (p) => rotate(p.a) };
const kTokenReads: Load = { kind: 'reads', requests: (p, data) => readTokenGet(p.token, data) };
const kPacedA: Load = { kind: 'paced', template: (p) => p.a, rate: kLatencyRate };

export const kScenarios: Record<ScenarioKey, Scenario> = {
  hello: { title: 'uWS hello world (same body and headers)', server: 'hello', load: kReadsA, vsHello: true },
  a: { title: '(a) GET /v1/flags/{id}, 10k targetingKeys + audience attribute', server: 'flagwire', load: kReadsA, vsHello: true },
  b: {
    title: '(b) same on a group flag with env',
    server: 'flagwire',
    load: { kind: 'reads', requests: (p) => rotate(p.b) },
    vsHello: true,
  },
  c: {
    title: '(c) GET /v1/flags/project/{id}, 50 flags',
    server: 'flagwire',
    load: { kind: 'reads', requests: (p) => rotate(p.c) },
    vsHello: true,
  },
  d: {
    title: '(d) GET /api/v1/flags/{id}, read token',
    server: 'flagwire',
    load: { kind: 'reads', requests: (p, data) => readTokenGet(p.d, data) },
    vsHello: true,
  },
  e: {
    title: '(e) PATCH /api/v1/flags/{id}, durable changes',
    server: 'flagwire',
    load: { kind: 'writes', requests: patches },
    vsHello: false,
  },
  f: {
    title: '(f) (a) while (e) writes 50/s',
    server: 'flagwire',
    load: {
      kind: 'mixed',
      reads: (p) => rotate(p.a),
      writes: patches,
      writeConnections: kMixedWriteConnections,
      writeRate: kMixedWriteRate,
    },
    vsHello: true,
  },
  g: {
    title: '(g) OFREP POST /ofrep/v1/evaluate/flags/{key}, same flag and context as (a)',
    server: 'flagwire',
    load: { kind: 'reads', requests: (p) => rotate(p.g, { body: p.gBody, headers: kJsonHeaders }) },
    vsHello: true,
  },
  h: { title: '(h) (a) on a twin Flagwire, metrics on', server: 'metricsOn', load: kReadsA, vsHello: true },
  i: { title: '(i) (a) on a twin Flagwire, FLAGWIRE_METRICS=off', server: 'metricsOff', load: kReadsA, vsHello: true },
  j: { title: '(j) GET /api/v1/token on a twin Flagwire, rate limiter on', server: 'limitOn', load: kTokenReads, vsHello: true },
  k: { title: '(k) GET /api/v1/token on a twin Flagwire, rate limiter off', server: 'limitOff', load: kTokenReads, vsHello: true },
  l: {
    title: '(l) (a) offered at a fixed 10,000 req/s (open model): latency below saturation',
    server: 'flagwire',
    load: kPacedA,
    vsHello: false,
  },
  n: {
    title:
      '(n) GET /v1/flags/{id} of a typed flag, five-rule targeting tree (sem_ver, in, starts_with, ends_with, fractional by an attribute)',
    server: 'flagwire',
    load: { kind: 'reads', requests: (p) => rotate(p.n) },
    vsHello: true,
  },
  m: {
    title: "(m) the hello world offered (a)'s requests at 10,000 req/s, same generator as (l): its latency floor",
    server: 'hello',
    load: kPacedA,
    vsHello: false,
  },
};

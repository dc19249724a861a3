// OFREP requests asked of the server and of an edge serving one of its projects: every answer (status,
// body as bytes, ETag) must be the same, as src/edge promises for the routes and the project it serves.
import type { EvalWorld } from '../evaluation/engine/eval-world.js';

export interface OfrepRequest {
  readonly label: string;
  /** '' for the bulk route; else the flag's key, as sent in the path. */
  readonly key: string | null;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface OfrepReply {
  readonly status: number;
  readonly body: string;
  readonly etag: string | null;
}

/** Asks every case of `cases` of both; each answer must be the same. */
export async function compareAll(
  t: { same(found: unknown, wanted: unknown, message: string): boolean; equal(found: unknown, wanted: unknown, message: string): boolean },
  serverUrl: string,
  edgeUrl: string,
  cases: readonly OfrepRequest[],
): Promise<void> {
  let same = 0;
  for (const request of cases) {
    const [expected, got] = [await ask(serverUrl, request), await ask(edgeUrl, request)];
    if (t.same(got, expected, request.label)) same++;
  }
  t.equal(same, cases.length, `${cases.length} requests answered alike, ${cases.filter((c) => c.key === null).length} of them bulk`);
}

export async function ask(baseUrl: string, request: OfrepRequest, more: Record<string, string> = {}): Promise<OfrepReply> {
  const path = request.key === null ? '/ofrep/v1/evaluate/flags' : `/ofrep/v1/evaluate/flags/${request.key}`;
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    body: request.body,
    headers: { 'content-type': 'application/json', ...request.headers, ...more },
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, body: await res.text(), etag: res.headers.get('etag') };
}

/** The cases for the single-environment project of `world` (test/evaluation/engine/eval-world.ts), `typed` a typed flag of it. */
export function ofrepCases(world: EvalWorld, typed: { id: string; name: string }): OfrepRequest[] {
  const { ids } = world;
  const project = { 'X-Flagwire-Project': ids.single };
  const body = (context: Record<string, unknown>) => JSON.stringify({ context });
  const contexts: Record<string, unknown>[] = [
    { targetingKey: 'u1' },
    { targetingKey: 'user-77', plan: 'beta', country: 'NL' },
    { targetingKey: 'user-78', plan: 'beta', country: 'DE', cohort: 'alice' },
    { cohort: 'vip' },
    {},
    { targetingKey: 'u9', plan: 'pro', nested: { a: 1 }, list: [1, 2], n: 42, b: true },
  ];
  const cases: OfrepRequest[] = [];
  const flags: [string, string][] = [
    ['on', ids.on],
    ['off', ids.off],
    ['half', ids.half],
    ['zero', ids.zero],
    ['aud', ids.aud],
    ['aud-half', ids.audHalf],
    [typed.name, typed.id],
  ];
  for (const [name, id] of flags) {
    for (const [i, context] of contexts.entries()) {
      cases.push({ label: `${name} by id, context ${i}`, key: id, body: body(context), headers: {} });
      cases.push({ label: `${name} by name, context ${i}`, key: encodeURIComponent(name), body: body(context), headers: project });
    }
  }
  for (const [i, context] of contexts.entries())
    cases.push({ label: `bulk, context ${i}`, key: null, body: body(context), headers: project });
  cases.push(
    { label: 'bulk, empty body', key: null, body: '', headers: project },
    { label: 'bulk, no project header', key: null, body: body({ targetingKey: 'u1' }), headers: {} },
    { label: 'bulk, not JSON', key: null, body: '{"context":', headers: project },
    { label: 'bulk, context not an object', key: null, body: '{"context": 3}', headers: project },
    { label: 'flag, not JSON', key: ids.on, body: 'nope', headers: {} },
    { label: 'flag, targetingKey not a string', key: ids.half, body: '{"context": {"targetingKey": 5}}', headers: {} },
    { label: 'flag, unknown id', key: 'no-such-flag', body: body({ targetingKey: 'u1' }), headers: {} },
    { label: 'flag, unknown name', key: 'no-such-flag', body: body({ targetingKey: 'u1' }), headers: project },
    { label: 'flag, a name without the project header', key: 'on', body: body({ targetingKey: 'u1' }), headers: {} },
    { label: 'flag, percent-encoded id', key: encodeURIComponent(ids.on), body: body({}), headers: {} },
  );
  return cases;
}

// The edge's differential: generated contexts asked of the server and of an edge serving the same
// project (edge-flags.ts), each through the bulk route (every flag at once, under its id and its name),
// and each tenth through the single-flag route for one flag as well. Status, bytes and ETag must agree.
// differential.test.ts runs a sample; bench/edge.bench.ts runs 1,000,000.
import { edgeContexts } from './edge-flags.js';
import { ask, type OfrepReply, type OfrepRequest } from './ofrep-cases.js';

export interface DifferentialRun {
  readonly serverUrl: string;
  readonly edgeUrl: string;
  readonly projectId: string;
  readonly flagIds: readonly string[];
  readonly contexts: number;
  /** Requests in flight to each at once. */
  readonly concurrency: number;
  /** Told every 100,000 contexts (the bench's long runs). */
  readonly progress?: (contexts: number, result: DifferentialResult) => void;
}

export interface DifferentialResult {
  /** Flag answers compared: each bulk answer holds two per flag. */
  answers: number;
  requests: number;
  mismatches: number;
  /** The first few mismatches, for the failure message. */
  examples: string[];
  /** Answers by reason or error code, across the bulk answers. */
  byReason: Record<string, number>;
}

export async function runDifferential(run: DifferentialRun): Promise<DifferentialResult> {
  const next = edgeContexts();
  const result: DifferentialResult = { answers: 0, requests: 0, mismatches: 0, examples: [], byReason: {} };
  const project = { 'X-Flagwire-Project': run.projectId };
  let started = 0;
  const compare = (request: OfrepRequest, expected: OfrepReply, got: OfrepReply) => {
    result.requests++;
    if (expected.status === got.status && expected.body === got.body && expected.etag === got.etag) return;
    result.mismatches++;
    if (result.examples.length < 5) result.examples.push(`${request.label}: ${difference(expected, got)}`);
  };
  const worker = async () => {
    while (started < run.contexts) {
      const i = started++;
      if (i > 0 && i % 100_000 === 0) run.progress?.(i, result);
      const body = JSON.stringify({ context: next() });
      const bulk: OfrepRequest = { label: `bulk ${i} ${body}`, key: null, body, headers: project };
      const [expected, got] = await Promise.all([ask(run.serverUrl, bulk), ask(run.edgeUrl, bulk)]);
      compare(bulk, expected, got);
      if (expected.status === 200) {
        for (const flag of (JSON.parse(expected.body) as { flags: { reason?: string; errorCode?: string }[] }).flags) {
          const label = flag.errorCode ?? flag.reason ?? '?';
          result.byReason[label] = (result.byReason[label] ?? 0) + 1;
          result.answers++;
        }
      }
      if (i % 10 === 0) {
        const key = run.flagIds[i % run.flagIds.length]!;
        const one: OfrepRequest = { label: `flag ${key} ${i} ${body}`, key, body, headers: {} };
        const [wanted, found] = await Promise.all([ask(run.serverUrl, one), ask(run.edgeUrl, one)]);
        compare(one, wanted, found);
      }
    }
  };
  await Promise.all(Array.from({ length: run.concurrency }, worker));
  return result;
}

/** Where two replies part: status and ETag, and the bodies around their first differing character. */
function difference(expected: OfrepReply, got: OfrepReply): string {
  let at = 0;
  while (at < expected.body.length && expected.body[at] === got.body[at]) at++;
  const around = (body: string) => body.slice(Math.max(0, at - 200), at + 200);
  return `server ${expected.status} ${expected.etag} …${around(expected.body)}…\nedge ${got.status} ${got.etag} …${around(got.body)}…`;
}

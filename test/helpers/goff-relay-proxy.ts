// A GO Feature Flag relay proxy in front of a real Flagwire, for GO Feature Flag's stock OpenFeature
// provider (@openfeature/go-feature-flag-provider) in black-box tests (issue 58, item 2; docs/events.md).
//
// Why it exists: the stock provider evaluates through GO Feature Flag's own evaluation API
// (POST /v1/feature/{flag}/eval) at the same `endpoint` as its collector, not through OFREP, and Flagwire
// serves OFREP, not that API. So this server answers that API from Flagwire's OFREP route, translating
// the request and the answer; the collector is what the tests are about, and it is not translated:
// POST /v1/data/collector goes through to Flagwire unchanged (method, raw headers, Authorization
// included, and body bytes), and Flagwire's answer comes back unchanged (status, raw headers, bytes).
// What Flagwire reads is the stock hook's collector body, byte for byte; each exchange is recorded.
//
//   GO Feature Flag (0.7.0 sends, and reads)                     Flagwire's OFREP
//   {user: {key, anonymous, custom}, defaultValue}           ->  {context: {...custom, anonymous, targetingKey: key}}
//   {value, variationType: variant, reason, metadata,         <-  200 {value, variant, reason, metadata}
//    failed: false, trackEvents: true, cacheable: true}
//   {value: defaultValue, variationType: 'SdkDefault',        <-  4xx {errorCode, errorDetails}
//    reason: 'ERROR', failed: true, trackEvents: true, errorCode, cacheable: false}
//
// `cacheable: true`: GO Feature Flag's relay says so of an answer that holds while the flag does (its
// percentage split is sticky on the key, as Flagwire's is on the targeting key), which every answer of
// the flags these tests evaluate does. It matters: the stock hook (0.7.0) sends the events of cached
// evaluations only. `version` (optional in GO Feature Flag's answer, never read by the provider) is
// left out: OFREP's answer has none. Any other answer from Flagwire (no errorCode) is a 502, which
// the provider takes as an unknown error.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One collector request as the stock hook sent it and Flagwire's answer to it, both as they went. */
export interface CollectorExchange {
  /** The request's headers, as received (and passed on). */
  headers: IncomingHttpHeaders;
  /** The request's body bytes, as received (and passed on). */
  body: Buffer;
  /** Flagwire's answer: its status and body, as passed back. */
  status: number;
  answer: string;
}

export interface GoffRelayProxy {
  /** The provider's `endpoint`. */
  readonly url: string;
  readonly exchanges: CollectorExchange[];
  /** How many events the collector bodies passed on so far hold in all. */
  eventsSent(): number;
  /** Resolves once eventsSent() reaches `count` (the bound only catches a hang). */
  waitForEvents(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const kEvalPath = /^\/v1\/feature\/([^/]+)\/eval$/;
const kCollectorPath = '/v1/data/collector';

/** The relay proxy over Flagwire at `flagwire` (its base URL), evaluating in `project` (X-Flagwire-Project). */
export async function startGoffRelayProxy(flagwire: string, project: string): Promise<GoffRelayProxy> {
  const exchanges: CollectorExchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const evalFlag = req.method === 'POST' ? kEvalPath.exec(req.url ?? '') : null;
      if (req.method === 'POST' && req.url === kCollectorPath) passThrough(req, body, res);
      else if (evalFlag !== null)
        evaluate(decodeURIComponent(evalFlag[1]!), body).then(
          (answer) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
          (err: unknown) => res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err)),
        );
      else res.writeHead(404, { 'content-type': 'text/plain' }).end(`not GO Feature Flag's API: ${req.method} ${req.url}`);
    });
  });

  /** The collector request to Flagwire as it came, and Flagwire's answer back as it went. */
  const passThrough = (req: IncomingMessage, body: Buffer, res: ServerResponse) => {
    const upstream = request(new URL(kCollectorPath, flagwire), { method: req.method, headers: req.rawHeaders }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const bytes = Buffer.concat(chunks);
        exchanges.push({ headers: req.headers, body, status: answer.statusCode ?? 0, answer: bytes.toString() });
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders).end(bytes);
      });
    });
    upstream.on('error', (err) => res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err)));
    upstream.end(body);
  };

  /** GO Feature Flag's answer for `flag`, from Flagwire's OFREP answer to the same context. */
  const evaluate = async (flag: string, body: Buffer): Promise<Record<string, unknown>> => {
    const { user, defaultValue } = JSON.parse(body.toString()) as GoffEvalRequest;
    const context = { ...user.custom, anonymous: user.anonymous, targetingKey: user.key };
    const r = await fetch(`${flagwire}/ofrep/v1/evaluate/flags/${encodeURIComponent(flag)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-flagwire-project': project },
      body: JSON.stringify({ context }),
    });
    const ofrep = (await r.json()) as Record<string, unknown>;
    if (r.status === 200)
      return {
        value: ofrep.value,
        variationType: ofrep.variant,
        reason: ofrep.reason,
        metadata: ofrep.metadata,
        failed: false,
        trackEvents: true,
        cacheable: true,
      };
    if (typeof ofrep.errorCode !== 'string') throw new Error(`Flagwire's OFREP answered ${r.status}: ${JSON.stringify(ofrep)}`);
    return {
      value: defaultValue,
      variationType: 'SdkDefault',
      reason: 'ERROR',
      failed: true,
      trackEvents: true,
      errorCode: ofrep.errorCode,
      cacheable: false,
    };
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const eventsSent = () =>
    exchanges.reduce((sum, exchange) => sum + (JSON.parse(exchange.body.toString()) as { events: unknown[] }).events.length, 0);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    eventsSent,
    async waitForEvents(count, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (eventsSent() < count) {
        if (Date.now() > deadline) throw new Error(`the collector got ${eventsSent()} events, not ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the stock provider (0.7.0) posts to /v1/feature/{flag}/eval. */
interface GoffEvalRequest {
  user: { key: string; anonymous?: boolean; custom?: Record<string, unknown> };
  defaultValue: unknown;
}

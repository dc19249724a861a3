// Discovery's GET (upstream-follower.ts), by node:http or node:https instead of fetch (issue 57, item 2):
// a relay's writer thread asks discovery at its start, and a thread's first fetch loads Node's fetch
// (undici), a large part of the writer's start (bench/RESULTS.md, Costs behind the code's choices), while
// node:http is loaded there already (the capabilities' server parts). What fetch would have done
// otherwise is kept by asking fetch itself: an answer that redirects is asked again by fetch, which
// follows it as discovery always has, and a URL that names credentials goes to fetch, which refuses it.
// A timeout or a stop ends the GET with the signal's reason, as it ends a fetch.
import type * as https from 'node:https';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { loadOnUse } from '../load-on-use.js';

/** An upstream's answer: its status and its body as text ('' when the body could not be read, as fetch's text() caught). */
export interface UpstreamAnswer {
  readonly status: number;
  readonly body: string;
}

// An https upstream's module, loaded by its first GET: a relay of an http upstream never needs TLS here.
const httpsLib = loadOnUse<typeof https>('node:https');

/** The statuses fetch follows (its redirect statuses), when the answer names where to. */
const kRedirects = new Set([301, 302, 303, 307, 308]);

/** GET `url` with `headers`, ended by `signal`: the answer, or the error fetch would end with. */
export async function getUpstream(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<UpstreamAnswer> {
  const target = new URL(url);
  if (target.username !== '' || target.password !== '') return byFetch(url, headers, signal);
  const answer = await byRequest(target, headers, signal);
  return answer === 'redirect' ? byFetch(url, headers, signal) : answer;
}

async function byFetch(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<UpstreamAnswer> {
  const res = await fetch(url, { headers, signal });
  return { status: res.status, body: await res.text().catch(() => '') };
}

function byRequest(target: URL, headers: Record<string, string>, signal: AbortSignal): Promise<UpstreamAnswer | 'redirect'> {
  signal.throwIfAborted();
  const request = target.protocol === 'https:' ? httpsLib().request : httpRequest;
  return new Promise((resolve, reject) => {
    // The signal's reason, not the request's AbortError: a timeout reads as fetch's did.
    const aborted = () => reject(signal.reason);
    const req = request(target, { method: 'GET', headers, signal }, (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (kRedirects.has(status) && res.headers.location !== undefined) {
        res.resume();
        resolve('redirect');
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      // Decoded as fetch's text() decodes (UTF-8, a byte-order mark dropped).
      res.on('end', () => resolve({ status, body: new TextDecoder().decode(Buffer.concat(chunks)) }));
      res.on('error', () => resolve({ status, body: '' }));
      res.on('close', () => {
        if (!res.complete) resolve({ status, body: '' });
      });
    });
    req.on('error', (err) => (signal.aborted ? aborted() : reject(err)));
    req.end();
  });
}

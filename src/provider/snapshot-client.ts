// GET /v1/snapshots/{project_id}[?env=] for the provider (src/snapshots/routes.ts): with the read token,
// If-None-Match with the ETag of the snapshot it holds, a time limit, and a bound on the body's size.
// Nothing of Node's: the edge (src/edge) fetches with it too.
import { isSnapshot } from './snapshot-check.js';
import { kConfigTagHeader, type Snapshot } from '../model/snapshot-shape.js';

export interface SnapshotSource {
  /** The server's base URL (http://host:port). */
  readonly url: string;
  readonly token: string;
  readonly project: string;
  /** null: a single-environment project. */
  readonly environment: string | null;
}

/** `configTag`: the project's configuration tag (src/snapshots/routes.ts, Flagwire-Config-Tag; '' when absent). */
export type SnapshotAnswer =
  | { readonly modified: true; readonly snapshot: Snapshot; readonly etag: string; readonly configTag: string }
  | { readonly modified: false; readonly configTag: string };

/** A refusal the server answered (401, 403, 404, ...): retrying the same request will not help until something changes. */
export class SnapshotRefused extends Error {}

/** Far above any real project (the Management API's own limits keep projects much smaller). */
export const kMaxSnapshotBytes = 64 * 1024 * 1024;

export function snapshotUrl(source: SnapshotSource): string {
  return projectRouteUrl(source, 'snapshots');
}

/** Where the provider's usage reports go (src/usage-reports/routes.ts): the same project and environment. */
export function usageUrl(source: SnapshotSource): string {
  return projectRouteUrl(source, 'usage');
}

function projectRouteUrl(source: SnapshotSource, route: string): string {
  const path = `${source.url.replace(/\/+$/, '')}/v1/${route}/${encodeURIComponent(source.project)}`;
  return source.environment === null ? path : `${path}?env=${encodeURIComponent(source.environment)}`;
}

/** The snapshot, or `modified: false` when the server's still has `etag`; throws on a refusal or a network failure. */
export async function fetchSnapshot(source: SnapshotSource, etag: string | null, timeoutMs: number): Promise<SnapshotAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${source.token}` };
  if (etag !== null) headers['if-none-match'] = etag;
  const res = await fetch(snapshotUrl(source), { headers, signal: AbortSignal.timeout(timeoutMs) });
  const configTag = res.headers.get(kConfigTagHeader) ?? '';
  if (res.status === 304) return { modified: false, configTag };
  const text = await boundedText(res);
  if (res.status !== 200) {
    // The spec's envelope {error, detail, docs}; its detail says what to change.
    let detail = text.slice(0, 500);
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? detail;
    } catch {}
    const refusal = `The server refused the snapshot (${res.status}): ${detail}`;
    if (res.status >= 400 && res.status < 500 && res.status !== 429) throw new SnapshotRefused(refusal);
    throw new Error(refusal);
  }
  const snapshot: unknown = JSON.parse(text);
  if (!isSnapshot(snapshot)) throw new Error('The server answered something that is not a snapshot.');
  return { modified: true, snapshot, etag: res.headers.get('etag') ?? '', configTag };
}

async function boundedText(res: Response): Promise<string> {
  if (res.body === null) return '';
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value: chunk } = await reader.read();
    if (done) break;
    size += chunk.byteLength;
    if (size > kMaxSnapshotBytes) {
      await reader.cancel();
      throw new Error(`The snapshot is larger than ${kMaxSnapshotBytes} bytes.`);
    }
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

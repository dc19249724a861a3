// Relays for tests: a relay key made on the upstream's data dir by the command line, a relay started on
// a data dir of its own (`serve --upstream URL --upstream-token SECRET`, as users run it), and waits
// for what it shows on /ready.
import { call } from '../helpers/http.js';
import { type CliOptions, cli, type TestContext } from '../helpers/cli.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';

export interface RelayKey {
  id: string;
  secret: string;
}

/** `flagwire relay key create --name NAME` on `dataDir` (`args`: --database URL and the like). */
export async function createRelayKey(dataDir: string, name: string, args: string[] = [], options: CliOptions = {}): Promise<RelayKey> {
  const r = await cli(dataDir, ['relay', 'key', 'create', '--name', name, ...args], options);
  if (r.code !== 0) throw new Error(`relay key create: ${r.stderr}`);
  return { id: r.json.id as string, secret: r.json.secret as string };
}

/** `flagwire relay key revoke KEY_ID` on `dataDir`. */
export async function revokeRelayKey(t: TestContext, dataDir: string, id: string, args: string[] = []): Promise<void> {
  const r = await cli(dataDir, ['relay', 'key', 'revoke', id, ...args]);
  t.equal(r.code, 0, r.stderr);
}

export interface RelayOptions {
  dataDir?: string;
  /** The sync service's port ('free': any); a relay restarted keeps it for the providers dialled to it. */
  syncPort?: number | 'free';
  env?: Record<string, string>;
}

/** A relay of `upstreamUrl` with `key`. */
export function startRelay(upstreamUrl: string, key: string, options: RelayOptions = {}): Promise<TestServer> {
  return startTestServer({
    dataDir: options.dataDir ?? tempDataDir(),
    syncPort: options.syncPort ?? 'free',
    env: { FLAGWIRE_UPSTREAM_URL: upstreamUrl, FLAGWIRE_UPSTREAM_TOKEN: key, ...options.env },
  });
}

/** A relay's /ready, its body's `relay` object with it. */
export async function relayReady(relay: TestServer): Promise<{ status: number; json: any }> {
  const r = await call(relay.baseUrl, 'GET', '/ready');
  return { status: r.status, json: r.json };
}

/** The revision a node's evaluation answers name now (Flagwire-Revision of an OFREP bulk evaluation of `projectId`). */
export async function servedRevision(node: TestServer, projectId: string): Promise<number> {
  const r = await call(node.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
    body: { context: { targetingKey: 'revision-probe' } },
    headers: { 'X-Flagwire-Project': projectId },
  });
  if (r.status !== 200) throw new Error(`bulk evaluation on ${node.baseUrl}: ${r.status} ${r.text}`);
  return Number(r.headers.get('flagwire-revision'));
}

/** Waits until `relay` is ready and serves `upstream`'s revision of `projectId` (the bound only catches a hang). */
export async function waitCaughtUp(relay: TestServer, upstream: TestServer, projectId: string): Promise<number> {
  const target = await servedRevision(upstream, projectId);
  await pollUntil(
    `the relay ${relay.baseUrl} at revision ${target}`,
    async () => {
      const ready = await relayReady(relay);
      return ready.status === 200 ? ready.json.relay.revision : -1;
    },
    (revision) => revision >= target,
  );
  return target;
}

/** Reads the change stream at `path` until `done` accepts what came (or a minute passed: a hang). */
export async function readStreamUntil(
  baseUrl: string,
  path: string,
  done: (text: string) => boolean,
  started?: () => void,
): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 60_000);
  let text = '';
  try {
    const res = await fetch(`${baseUrl}${path}`, { signal: controller.signal });
    const reader = res.body!.getReader();
    let told = false;
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += Buffer.from(value).toString();
      if (!told && text.includes('event: ready')) {
        told = true;
        started?.();
      }
      if (done(text)) break;
    }
  } catch {
    // aborted: the minute is up; the caller's assertion says what was missing
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return text;
}

// Checks made outside the timed runs: a probe of every route before any load, and the read-your-writes
// check after the warm-up.
import type { BenchData } from './dataset.js';
import type { Server } from './processes.js';
import type { Bench } from './runner.js';
import { helloBody, kJsonHeaders } from './scenarios.js';
import { median } from './stats.js';

async function expectOk(url: string, init: RequestInit, what: string): Promise<string> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  if (res.status < 200 || res.status > 299)
    throw new Error(`${what}: ${init.method ?? 'GET'} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

/** One request of each scenario, before any load: a broken route fails in a second, not after the warm-up. */
export async function probe({ data, paths, servers: { hello, flagwire, twins } }: Bench): Promise<void> {
  const key = (p: string) => p.replace('{key}', 'user-1');
  const body = await expectOk(hello.url + key(paths.a), {}, 'hello world');
  if (body !== helloBody(data)) throw new Error(`hello world answered ${body}`);
  for (const [name, path] of [
    ['a', paths.a],
    ['b', paths.b],
    ['c', paths.c],
  ] as const) {
    const text = await expectOk(flagwire.url + key(path), {}, `(${name})`);
    JSON.parse(text);
  }
  await expectOk(flagwire.url + paths.d, { headers: { authorization: `Bearer ${data.readSecret}` } }, '(d)');
  await expectOk(flagwire.url + paths.g, { method: 'POST', headers: kJsonHeaders, body: key(paths.gBody) }, '(g)');
  if (twins !== null) {
    for (const s of [twins.metricsOn, twins.metricsOff]) await expectOk(s.url + key(paths.a), {}, s.name);
    for (const s of [twins.limitOn, twins.limitOff])
      await expectOk(s.url + paths.token, { headers: { authorization: `Bearer ${data.readSecret}` } }, s.name);
  }
  await expectOk(
    `${flagwire.url}/api/v1/flags/${data.writeFlagIds[0]!}`,
    {
      method: 'PATCH',
      headers: { authorization: `Bearer ${data.writeSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ trafficPercentage: 99 }),
    },
    '(e)',
  );
}

export interface Visibility {
  /** PATCH-then-evaluate checks made. */
  checks: number;
  stale: number;
  patchP50Ms: number;
}

/**
 * Read-your-writes, sequentially: PATCH enabled, then at once evaluate; a PATCH's 200 means the change
 * is durable, so the very next evaluation must see it (design §1).
 */
export async function visibilityCheck(flagwire: Server, data: BenchData, pairs: number): Promise<Visibility> {
  const headers = { authorization: `Bearer ${data.writeSecret}`, 'content-type': 'application/json' };
  const patchUrl = `${flagwire.url}/api/v1/flags/${data.visibilityFlagId}`;
  const evalUrl = `${flagwire.url}/v1/flags/${data.visibilityFlagId}?targetingKey=k`;
  let stale = 0;
  const patchMs: number[] = [];
  for (let i = 0; i < pairs; i++) {
    for (const enabled of [true, false]) {
      const t0 = performance.now();
      await expectOk(patchUrl, { method: 'PATCH', headers, body: JSON.stringify({ enabled }) }, 'visibility PATCH');
      patchMs.push(performance.now() - t0);
      const seen = JSON.parse(await expectOk(evalUrl, {}, 'visibility GET')) as { enabled: boolean };
      if (seen.enabled !== enabled) stale++;
    }
  }
  return { checks: pairs * 2, stale, patchP50Ms: median(patchMs) };
}

// The lists of scheduled changes and rollouts a page at a time, and a project's pending changes bounded
// in count and bytes (issue 42, item 5), against the real server: pages follow `next` to the end in
// order; past its first entry a page stops at 4 MiB; a change that would take the project's pending
// changes past 16 MiB is refused and recorded nowhere; bad paging words are the spec's 400.
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const base = server.baseUrl;
const kHourMs = 3_600_000;
const kPageBytes = 4 * 1024 * 1024;

async function createFlag(name: string): Promise<string> {
  const r = await call(base, 'POST', '/api/v1/flags', { token: secrets.write, body: { name } });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id as string;
}
const schedule = (flagId: string, at: number, patch: unknown) =>
  call(base, 'POST', `/api/v1/flags/${flagId}/schedules`, { token: secrets.write, body: { at, patch } });

/** Every page of a list, following `next`; each page's answer size too. */
async function allPages(path: string, name: string): Promise<{ items: Record<string, any>[]; pages: { count: number; bytes: number }[] }> {
  const items: Record<string, any>[] = [];
  const pages: { count: number; bytes: number }[] = [];
  let next: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await call(base, 'GET', next === null ? path : `${path}${sep}after=${encodeURIComponent(next)}`, { token: secrets.read });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    items.push(...r.json[name]);
    pages.push({ count: r.json[name].length, bytes: Buffer.byteLength(r.text) });
    next = r.json.next;
    if (pages.length > 100) throw new Error('more than 100 pages');
  } while (next !== null);
  return { items, pages };
}

async function refusedListing(t: Test, path: string, detail: RegExp) {
  const r = await call(base, 'GET', path, { token: secrets.read });
  t.equal(r.status, 400, path);
  t.match(r.json, { error: 'Invalid request', detail }, path);
}

t.test('scheduled changes a page at a time, by due time; only the pending ones; bad paging words refused', async (t) => {
  const flag = await createFlag('paged-schedules');
  const now = Date.now();
  const made: string[] = [];
  // Made out of due order: the list is by due time.
  for (const hours of [5, 1, 7, 3, 2, 6, 4]) {
    const r = await schedule(flag, now + hours * kHourMs, { trafficPercentage: hours * 10 });
    t.equal(r.status, 201, r.text);
    made[hours] = r.json.id;
  }
  const cancelled = await call(base, 'POST', `/api/v1/schedules/${made[3]}/cancel`, { token: secrets.write });
  t.equal(cancelled.status, 200);

  const first = await call(base, 'GET', '/api/v1/schedules?limit=3', { token: secrets.read });
  t.equal(first.status, 200, first.text);
  t.equal(first.json.schedules.length, 3, 'three on the first page');
  t.type(first.json.next, 'string', 'and where the next starts');
  const everything = await allPages('/api/v1/schedules?limit=3', 'schedules');
  const ours = everything.items.filter((s) => s.flagId === flag).map((s) => s.id);
  t.same(ours, made.slice(1), 'every change once, by due time, across the pages');
  t.ok(
    everything.pages.every((p) => p.count <= 3),
    'no page past its limit',
  );
  const pending = await allPages('/api/v1/schedules?status=pending&limit=2', 'schedules');
  t.same(
    pending.items.filter((s) => s.flagId === flag).map((s) => s.id),
    made.slice(1).filter((id) => id !== made[3]),
    'status=pending: the cancelled one left out',
  );
  t.ok(
    pending.items.every((s) => s.status === 'pending'),
    'only pending ones',
  );
  const defaultPage = await call(base, 'GET', '/api/v1/schedules', { token: secrets.read });
  t.equal(defaultPage.json.next, null, 'under 100: one page, next null');

  await refusedListing(t, '/api/v1/schedules?limit=0', /limit must be a whole number from 1 to 500/);
  await refusedListing(t, '/api/v1/schedules?limit=501', /limit must be a whole number from 1 to 500/);
  await refusedListing(t, '/api/v1/schedules?after=garbage', /after must be the "next" of an earlier page/);
  await refusedListing(t, '/api/v1/schedules?status=done', /status must be pending/);
  await refusedListing(t, '/api/v1/rollouts?limit=x', /limit must be a whole number/);

  const listed = await cli(server.dataDir, ['schedule', 'list', ids.single, '--limit', '2']);
  t.equal(listed.code, 0, listed.stderr);
  t.equal(listed.json.schedules.length, 2, 'the CLI pages the same way');
  t.type(listed.json.next, 'string');
  const human = await cli(server.dataDir, ['schedule', 'list', ids.single, '--limit', '2'], { json: false });
  t.match(human.stdout, /More: add --after \d+\.sch_/, 'and tells a person how to go on');
});

t.test("a project's pending changes are bounded in bytes; a page stops at 4 MiB", async (t) => {
  const flag = await createFlag('large-patches');
  // A patch of about 900 KB: 3,500 cohorts of 250 characters (a body stays under the 1 MiB cap).
  const cohorts = (n: number) => Array.from({ length: 3500 }, (_, i) => `${String(n).padStart(4, '0')}-${i}-`.padEnd(250, 'x'));
  const now = Date.now();
  let accepted = 0;
  let refusal: { status: number; json: any } | null = null;
  for (let n = 0; n < 40 && refusal === null; n++) {
    const r = await schedule(flag, now + (n + 1) * kHourMs, { cohorts: cohorts(n) });
    if (r.status === 201) accepted++;
    else refusal = r;
  }
  t.ok(refusal !== null, `refused after ${accepted} large changes`);
  t.ok(accepted >= 15 && accepted <= 19, `16 MiB hold about 18 changes of 900 KB: ${accepted}`);
  t.match(refusal!.json, {
    error: 'Invalid request',
    detail: /pending scheduled changes would hold \d+ bytes, more than 16777216; cancel some first/,
  });

  const pending = await allPages('/api/v1/schedules?status=pending', 'schedules');
  const large = pending.items.filter((s) => s.flagId === flag);
  t.equal(large.length, accepted, 'the refused change was recorded nowhere');
  t.ok(pending.pages.length >= 4, `${accepted} changes of 900 KB take at least four pages: ${pending.pages.length}`);
  for (const page of pending.pages)
    t.ok(page.bytes <= kPageBytes + 1024 * 1024, `a page of ${page.bytes} bytes: 4 MiB, and the one entry that passes it`);
  // Cancelling one frees its bytes for another.
  const cancelled = await call(base, 'POST', `/api/v1/schedules/${large[0].id}/cancel`, { token: secrets.write });
  t.equal(cancelled.status, 200);
  const again = await schedule(flag, now + 100 * kHourMs, { cohorts: cohorts(99) });
  t.equal(again.status, 201, 'room again once one is cancelled');
});

t.test('rollouts a page at a time, oldest first', async (t) => {
  const started: string[] = [];
  for (let i = 0; i < 5; i++) {
    const flag = await createFlag(`paged-rollout-${i}`);
    const r = await call(base, 'POST', `/api/v1/flags/${flag}/rollouts`, {
      token: secrets.write,
      body: { steps: [{ trafficPercentage: 10, holdMs: kHourMs }, { trafficPercentage: 100 }] },
    });
    t.equal(r.status, 201, r.text);
    started.push(r.json.id);
  }
  const paged = await allPages('/api/v1/rollouts?limit=2', 'rollouts');
  t.same(
    paged.items.map((p) => p.id).filter((id) => started.includes(id)),
    started,
    'each once, oldest first',
  );
  t.ok(
    paged.pages.every((p) => p.count <= 2),
    'two a page',
  );
  const listed = await cli(server.dataDir, ['rollout', 'list', ids.single, '--limit', '1']);
  t.equal(listed.code, 0, listed.stderr);
  t.equal(listed.json.rollouts.length, 1);
  const second = await cli(server.dataDir, ['rollout', 'list', ids.single, '--limit', '1', '--after', listed.json.next]);
  t.not(second.json.rollouts[0].id, listed.json.rollouts[0].id, 'the CLI follows next');
  // One at a time per flag still holds, read from the flag's own list.
  const flag = (await call(base, 'GET', '/api/v1/rollouts?limit=1', { token: secrets.read })).json.rollouts[0].flagId;
  const twice = await call(base, 'POST', `/api/v1/flags/${flag}/rollouts`, {
    token: secrets.write,
    body: { steps: [{ trafficPercentage: 20, holdMs: kHourMs }, { trafficPercentage: 100 }] },
  });
  t.equal(twice.status, 400);
  t.match(twice.json.detail, /already has a running rollout/);
});

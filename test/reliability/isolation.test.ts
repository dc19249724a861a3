// Isolation sweep (issue 8, item 3): two organisations, each with a single- and a multi-environment
// project (plus a project with prototype-named environments and one whose organisation fell below
// Teams), and tokens of every kind (read, write, environment-limited, revoked, expired, 402). Every
// Management route, with every token, against every flag id of every other project: each is refused,
// and the answer is byte-identical (status, content type, body) to the answer for an id that exists
// nowhere, so nothing tells a caller which ids exist elsewhere. With a live token (valid, and its
// organisation eligible) the refusal is the spec's: GET and PATCH of another project's flag are a 404
// with the `Not found` envelope saying no flag with that id exists in this project (a PATCH with a read
// token is the 403 every write route gives it), and other methods on the flag path are 404 `Not found`. Lists and lookups by name never show
// another project's flags; another project's audience id is refused like a nonexistent one. Nothing
// changes in the store throughout.
import t from 'tap';
import { randomId } from '../../src/model/ids.js';
import { call, type Reply } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { StoreDigest } from '../helpers/store-digest.js';
import { buildRichWorld, kUnlimited } from './support.js';

t.test("isolation sweep: every route × every token × every other project's flag ids", async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  const server = await startTestServer({ dataDir, env: { ...kUnlimited } });
  const digest = new StoreDigest(dataDir);
  t.teardown(async () => {
    await server.stop();
    await digest.close();
    await world.store.close();
  });
  const { ids, secrets } = world;
  // live: valid and its organisation eligible (not revoked, expired or below Teams).
  const tokens: { name: string; secret: string; project: string; live: boolean; permission: 'read' | 'write' }[] = [
    { name: 'read', secret: secrets.read, project: ids.single, live: true, permission: 'read' },
    { name: 'write', secret: secrets.write, project: ids.single, live: true, permission: 'write' },
    { name: 'multiWrite', secret: secrets.multiWrite, project: ids.multi, live: true, permission: 'write' },
    { name: 'multiRead', secret: secrets.multiRead, project: ids.multi, live: true, permission: 'read' },
    { name: 'stagingWrite', secret: secrets.stagingWrite, project: ids.multi, live: true, permission: 'write' },
    { name: 'writeB', secret: secrets.writeB, project: ids.singleB, live: true, permission: 'write' },
    { name: 'multiBWrite', secret: world.multiB.secret, project: world.multiB.project, live: true, permission: 'write' },
    { name: 'multiBRead(production)', secret: world.multiB.readSecret, project: world.multiB.project, live: true, permission: 'read' },
    { name: 'protoWrite', secret: world.proto.secret, project: world.proto.project, live: true, permission: 'write' },
    { name: 'free(402)', secret: secrets.free, project: ids.free, live: false, permission: 'write' },
    { name: 'revoked', secret: world.refused.revoked, project: ids.single, live: false, permission: 'write' },
    { name: 'expired', secret: world.refused.expired, project: ids.single, live: false, permission: 'write' },
  ];
  // flag: GET or PATCH of one flag (needs read or write permission); other: a method /api/v1/flags/{id} does not have.
  type Route = { name: string; kind: 'flag' | 'other'; needs: 'read' | 'write'; send(secret: string, flagId: string): Promise<Reply> };
  const routes: Route[] = [
    { name: 'GET', kind: 'flag', needs: 'read', send: (s, id) => call(server.baseUrl, 'GET', `/api/v1/flags/${id}`, { token: s }) },
    ...['staging', 'production', 'toString', 'nope'].map(
      (env): Route => ({
        name: `GET ?env=${env}`,
        kind: 'flag',
        needs: 'read',
        send: (s, id) => call(server.baseUrl, 'GET', `/api/v1/flags/${id}?env=${env}`, { token: s }),
      }),
    ),
    {
      name: 'PATCH',
      kind: 'flag',
      needs: 'write',
      send: (s, id) => call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}`, { token: s, body: { enabled: true } }),
    },
    ...['staging', 'production', 'toString'].map(
      (env): Route => ({
        name: `PATCH ?env=${env}`,
        kind: 'flag',
        needs: 'write',
        send: (s, id) =>
          call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}?env=${env}`, { token: s, body: { cohorts: ['x'], trafficPercentage: 100 } }),
      }),
    ),
    {
      name: 'PATCH invalid body',
      kind: 'flag',
      needs: 'write',
      send: (s, id) => call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}`, { token: s, body: { nope: 1 } }),
    },
    {
      name: 'PATCH empty body',
      kind: 'flag',
      needs: 'write',
      send: (s, id) => call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}`, { token: s, raw: '' }),
    },
    { name: 'DELETE', kind: 'other', needs: 'read', send: (s, id) => call(server.baseUrl, 'DELETE', `/api/v1/flags/${id}`, { token: s }) },
    {
      name: 'PUT',
      kind: 'other',
      needs: 'read',
      send: (s, id) => call(server.baseUrl, 'PUT', `/api/v1/flags/${id}`, { token: s, body: { enabled: true } }),
    },
    {
      name: 'POST',
      kind: 'other',
      needs: 'read',
      send: (s, id) => call(server.baseUrl, 'POST', `/api/v1/flags/${id}`, { token: s, body: { name: 'x' } }),
    },
  ];
  const kDocs = `${server.baseUrl}/docs#`;
  /**
   * What the spec says a live token gets for another project's flag on this route, or null when it
   * only has to be refused: the problem with `r`, or '' when it is right.
   */
  const specProblem = (token: (typeof tokens)[number], route: Route, r: Reply): string | null => {
    if (!token.live) return null;
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(r.text);
    } catch {
      json = undefined;
    }
    const envelope = (status: number, title: string, anchor: string, detail?: string) => {
      const ok =
        r.status === status &&
        (r.headers.get('content-type') ?? '').startsWith('application/json') &&
        json !== undefined &&
        Object.keys(json).sort().join(',') === 'detail,docs,error' &&
        json.error === title &&
        typeof json.detail === 'string' &&
        (detail === undefined || json.detail === detail) &&
        json.docs === `${kDocs}${anchor}`;
      return ok ? '' : `expected ${status} ${title}${detail === undefined ? '' : ` "${detail}"`}, got ${r.status} ${r.text.slice(0, 200)}`;
    };
    // spec: Errors, 404 "no such flag, flag of another project, or any nonexistent path under /api/v1";
    // "the 404 for a flag says no flag with that id exists in this project".
    if (route.kind === 'other') return envelope(404, 'Not found', 'not-found');
    // spec: Errors, 403 "read token on a write route".
    if (route.needs === 'write' && token.permission === 'read') return envelope(403, 'Insufficient permission', 'insufficient-permission');
    return envelope(404, 'Not found', 'not-found', 'No flag with that id exists in this project.');
  };
  const nowhere = [`flg_${randomId(16)}`, `flg_${randomId(16)}`];
  const before = digest.take();
  const snapshot = world.snapshot();
  const same = (a: Reply, b: Reply) =>
    a.status === b.status && a.text === b.text && a.headers.get('content-type') === b.headers.get('content-type');

  let checks = 0;
  /** Of the checks: answers to live tokens held to the spec's exact status and envelope. */
  let specChecks = 0;
  let notFoundChecks = 0;
  const leaks: string[] = [];
  for (const token of tokens) {
    const foreign = world.flags.filter((f) => f.project !== token.project);
    for (const route of routes) {
      const baseline = await route.send(token.secret, nowhere[0]!);
      const baseline2 = await route.send(token.secret, nowhere[1]!);
      if (!same(baseline, baseline2)) leaks.push(`${token.name} ${route.name}: two nonexistent ids answered differently`);
      if (baseline.status < 400) leaks.push(`${token.name} ${route.name}: a nonexistent id got ${baseline.status}`);
      const baselineProblem = specProblem(token, route, baseline);
      if (baselineProblem) leaks.push(`${token.name} ${route.name} nonexistent id: ${baselineProblem}`);
      for (const flag of foreign) {
        const r = await route.send(token.secret, flag.id);
        checks++;
        if (r.status < 400) leaks.push(`${token.name} ${route.name} ${flag.id}: ${r.status} ${r.text.slice(0, 120)}`);
        else if (!same(r, baseline))
          leaks.push(
            `${token.name} ${route.name} ${flag.id}: ${r.status} ${r.text.slice(0, 160)} differs from ${baseline.status} ${baseline.text.slice(0, 160)}`,
          );
        const problem = specProblem(token, route, r);
        if (problem !== null) {
          specChecks++;
          if (r.status === 404) notFoundChecks++;
          if (problem !== '') leaks.push(`${token.name} ${route.name} ${flag.id}: ${problem}`);
        }
      }
    }
    // Lists and lookups by name: only the token's own project, whatever the name.
    const live = !['free(402)', 'revoked', 'expired'].includes(token.name);
    const lists = [await call(server.baseUrl, 'GET', '/api/v1/flags', { token: token.secret })];
    for (const name of new Set(world.flags.filter((f) => f.project !== token.project).map((f) => f.name))) {
      lists.push(await call(server.baseUrl, 'GET', `/api/v1/flags?name=${encodeURIComponent(name)}`, { token: token.secret }));
    }
    for (const list of lists) {
      checks++;
      if (!live) {
        if (list.status < 400) leaks.push(`${token.name}: list answered ${list.status}`);
        continue;
      }
      const own = new Set(world.flags.filter((f) => f.project === token.project).map((f) => f.id));
      const strangers = (list.json?.flags ?? []).filter((f: { id: string }) => !own.has(f.id));
      if (list.status !== 200 || strangers.length > 0)
        leaks.push(`${token.name}: list shows ${list.status} ${JSON.stringify(strangers).slice(0, 200)}`);
    }
    if (live) {
      checks++;
      const self = await call(server.baseUrl, 'GET', '/api/v1/token', { token: token.secret });
      if (self.json?.project?.id !== token.project) leaks.push(`${token.name}: /token names project ${self.json?.project?.id}`);
    }
  }

  // Another project's audience id is refused exactly like an id that exists nowhere.
  const audienceCases = [
    {
      token: secrets.write,
      project: ids.single,
      path: `/api/v1/flags/${ids.flag}`,
      method: 'PATCH',
      body: (a: string) => ({ audienceId: a }),
    },
    {
      token: secrets.write,
      project: ids.single,
      path: '/api/v1/flags',
      method: 'POST',
      body: (a: string) => ({ name: `aud-${randomId(6)}`, audienceId: a }),
    },
    {
      token: secrets.multiWrite,
      project: ids.multi,
      path: `/api/v1/flags/${ids.groupFlag}?env=staging`,
      method: 'PATCH',
      body: (a: string) => ({ audienceId: a }),
    },
    {
      token: secrets.multiWrite,
      project: ids.multi,
      path: '/api/v1/flags',
      method: 'POST',
      body: (a: string) => ({ name: `aud-${randomId(6)}`, environments: { staging: { audienceId: a } } }),
    },
    {
      token: secrets.writeB,
      project: ids.singleB,
      path: `/api/v1/flags/${ids.flagB}`,
      method: 'PATCH',
      body: (a: string) => ({ audienceId: a }),
    },
  ];
  for (const c of audienceCases) {
    const fake = `aud_${randomId(12)}`;
    const baseline = await call(server.baseUrl, c.method, c.path, { token: c.token, body: c.body(fake) });
    for (const audience of world.audiences.filter((a) => a.project !== c.project)) {
      const r = await call(server.baseUrl, c.method, c.path, { token: c.token, body: c.body(audience.id) });
      checks++;
      if (r.status !== 400 || r.text.replaceAll(audience.id, fake) !== baseline.text) {
        leaks.push(
          `audience ${audience.id} on ${c.method} ${c.path}: ${r.status} ${r.text.slice(0, 200)} vs ${baseline.text.slice(0, 200)}`,
        );
      }
    }
  }

  t.comment(
    `isolation: ${tokens.length} tokens × ${routes.length} routes × every other project's flags, plus lists, name lookups and audiences: ${checks} checks, ${leaks.length} leaks; ` +
      `${specChecks} of the checks with a live token held to the spec's exact answer (${notFoundChecks} of them 404 Not found)`,
  );
  t.same(
    leaks,
    [],
    "every cross-project request is refused, indistinguishable from a nonexistent id; a live token gets the spec's 404 Not found",
  );
  t.ok(checks > 1000, `${checks} checks`);
  const live = tokens.filter((k) => k.live);
  const expectedSpecChecks = live.reduce((n, k) => n + routes.length * world.flags.filter((f) => f.project !== k.project).length, 0);
  t.equal(specChecks, expectedSpecChecks, `every live token's answer on every route and foreign flag was held to the spec (${specChecks})`);
  t.same(StoreDigest.changed(before, digest.take()), [], 'no record changed (token activity and denial mail aside)');
  t.equal(world.snapshot(), snapshot, 'orgs, projects, flags, audit and tokens unchanged');
});

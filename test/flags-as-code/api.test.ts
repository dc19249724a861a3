// Flags as code over the Management API (GET /api/v1/export, POST /api/v1/plan and /api/v1/apply),
// against the real server over HTTP: a read token exports and plans, a write token applies; what apply
// answers is served at once by the Evaluation API; applying twice writes once; a stale ifRevision, a
// console-only change, a bad file or a token limited to other environments changes nothing; the
// OpenAPI document describes the three routes.
import t, { type Test } from 'tap';
import { Value } from '@sinclair/typebox/value';
import { FlagFile } from '../../src/flags-as-code/flag-file.js';
import { PlanResult } from '../../src/flags-as-code/schemas.js';
import { call, type Reply } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { listAudiences } from '../../src/model/records/project-records.js';

const { server, world } = await startWorldServer(t);

const exportFile = (token: string, query = '') => call(server.baseUrl, 'GET', `/api/v1/export${query}`, { token });
const plan = (token: string, body: unknown, query = '') => call(server.baseUrl, 'POST', `/api/v1/plan${query}`, { token, body });
const apply = (token: string, body: unknown, query = '') => call(server.baseUrl, 'POST', `/api/v1/apply${query}`, { token, body });
const flagByName = async (name: string, token: string) => {
  const r = await call(server.baseUrl, 'GET', `/api/v1/flags?name=${encodeURIComponent(name)}`, { token });
  return r.json.flags[0];
};
/** The Evaluation API's answer for one fixed key (sticky bucketing). */
const evaluate = async (id: string, query = '') => {
  const r = await call(server.baseUrl, 'GET', `/v1/flags/${id}?targetingKey=k-1${query}`);
  if (r.status !== 200) throw new Error(`evaluate ${r.status} ${r.text}`);
  return r.json.enabled as boolean;
};
const audit = (projectId: string) => {
  world.store.resetReadTxn();
  return world.store.listAudit(projectId, { limit: 1000, before: null });
};
/** The current file of a project, as the API exports it (a fresh copy to edit). */
const current = async (token: string) => {
  const r = await exportFile(token);
  if (r.status !== 200) throw new Error(`export ${r.status} ${r.text}`);
  return r.json;
};

/** A request that must be refused with `status` and `title`, and must change no record. */
async function refused(t: Test, status: number, title: string, request: () => Promise<Reply>): Promise<string> {
  const before = world.snapshot();
  const r = await request();
  t.equal(r.status, status, r.text);
  t.equal(r.json?.error, title);
  t.same(Object.keys(r.json ?? {}), ['error', 'detail', 'docs'], "the spec's error envelope");
  t.equal(world.snapshot(), before, 'nothing changed');
  return r.json?.detail;
}

t.test('a read token exports: deterministic two-space JSON, no audiences, no flag-wide cohorts', async (t) => {
  const first = await exportFile(world.secrets.read);
  t.equal(first.status, 200);
  t.equal(first.headers.get('content-type'), 'application/json');
  const second = await exportFile(world.secrets.read, '?format=flagwire');
  t.equal(second.text, first.text, 'the same state gives the same bytes');
  t.equal(first.text, `${JSON.stringify(first.json, null, 2)}\n`, 'two-space JSON with a final newline');
  t.ok(Value.Check(FlagFile, first.json), 'a FlagFile');
  t.strictSame(Object.keys(first.json), ['flagwire', 'kind', 'flags'], 'no audiences key: the API cannot list audiences');
  t.strictSame(Object.keys(first.json.flags), ['banner', 'checkout'], 'flags by name, not by creation');
  t.strictSame(first.json.flags, {
    banner: { description: '', tags: [], enabled: false, trafficPercentage: 0, cohorts: [], audience: null },
    checkout: { description: '', tags: [], enabled: true, trafficPercentage: 50, cohorts: ['alice'], audience: null },
  });

  const multi = await exportFile(world.secrets.multiRead);
  t.equal(multi.status, 200);
  t.equal((await exportFile(world.secrets.multiRead)).text, multi.text);
  t.ok(Value.Check(FlagFile, multi.json), 'a FlagFile');
  t.strictSame(Object.keys(multi.json), ['flagwire', 'kind', 'environments', 'flags']);
  t.strictSame(multi.json.environments, ['staging', 'production']);
  const search = multi.json.flags.search;
  t.notOk('cohorts' in search, "a group flag's flag-wide list is not read through the API");
  t.strictSame(search.environments.staging.cohorts, ['wide-1', 'wide-2'], 'an environment shows its effective list');
  t.strictSame(search.environments.production.cohorts, ['qa']);

  const flagd = await exportFile(world.secrets.multiRead, '?format=flagd&env=staging');
  t.equal(flagd.status, 200);
  t.match(flagd.json, { flags: { search: { state: 'ENABLED', variants: { on: true, off: false } } } });
  t.match(
    await refused(t, 400, 'Invalid request', () => exportFile(world.secrets.multiRead, '?format=flagd')),
    '(valid environments: staging, production)',
    "flagd's format of a multi-environment project needs env",
  );
  t.match(
    await refused(t, 400, 'Invalid request', () => exportFile(world.secrets.read, '?format=yaml')),
    /"format" must be flagwire or flagd/,
  );
  t.match(
    await refused(t, 403, 'Environment not permitted', () => exportFile(world.secrets.stagingWrite, '?format=flagd&env=production')),
    /"production".*limited to: staging/,
  );
});

t.test('a read token plans, changes nothing, and cannot apply', async (t) => {
  const file = await current(world.secrets.read);
  file.flags.banner = { ...file.flags.banner, enabled: true, trafficPercentage: 100 };
  file.flags['fac-new'] = { enabled: true, trafficPercentage: 100 };
  const before = world.snapshot();
  const planned = await plan(world.secrets.read, file);
  t.equal(planned.status, 200, planned.text);
  t.equal(world.snapshot(), before, 'a plan writes nothing');
  t.ok(Value.Check(PlanResult, planned.json), 'a PlanResult');
  t.match(planned.json, { projectId: world.ids.single, changed: true, notInFile: [], ignored: [] });
  t.strictSame(planned.json.changes, [
    {
      op: 'update',
      kind: 'flag',
      name: 'banner',
      fields: [
        { path: 'enabled', before: false, after: true },
        { path: 'trafficPercentage', before: 0, after: 100 },
      ],
      consoleOnly: false,
    },
    {
      op: 'create',
      kind: 'flag',
      name: 'fac-new',
      fields: [
        { path: 'description', before: null, after: '' },
        { path: 'tags', before: null, after: [] },
        { path: 'enabled', before: null, after: true },
        { path: 'trafficPercentage', before: null, after: 100 },
        { path: 'cohorts', before: null, after: [] },
        { path: 'audience', before: null, after: null },
      ],
      consoleOnly: false,
    },
  ]);
  const detail = await refused(t, 403, 'Insufficient permission', () => apply(world.secrets.read, file));
  t.match(detail, /read permission.*needs write permission/);
});

t.test('a write token applies: created and updated, served at once, audited as the token; twice writes once', async (t) => {
  const file = await current(world.secrets.read);
  // A single flag's cohorts are its state's (PATCH sets them), not the console-only flag-wide list.
  file.flags.banner = { ...file.flags.banner, enabled: true, trafficPercentage: 100, cohorts: ['carol'] };
  file.flags['fac-on'] = { enabled: true, trafficPercentage: 100, cohorts: ['bob'] };
  file.flags['fac-off'] = { enabled: false, trafficPercentage: 0 };
  file.flags['fac-colour'] = {
    enabled: true,
    trafficPercentage: 100,
    variants: { red: '#f00', green: '#0f0' },
    defaultVariant: 'red',
    targeting: { if: [{ in: ['@example.com', { var: 'email' }] }, 'green', null] },
  };
  const banner = await flagByName('banner', world.secrets.read);
  t.equal(await evaluate(banner.id), false, 'banner is off before');
  const planned = await plan(world.secrets.read, file);
  const auditBefore = audit(world.ids.single);

  const applied = await apply(world.secrets.write, file);
  t.equal(applied.status, 200, applied.text);
  t.ok(Value.Check(PlanResult, applied.json), 'a PlanResult');
  t.equal(applied.json.changed, true);
  t.strictSame(applied.json.changes, planned.json.changes, 'apply did what the plan showed');
  t.ok(applied.json.revision > planned.json.revision, 'the revision it left is later than the one planned');

  // The Evaluation API answers the new state right after the 200.
  const on = await flagByName('fac-on', world.secrets.read);
  t.ok(on, 'fac-on created');
  t.equal(await evaluate(on.id), true, 'a created flag is served at once');
  t.equal(await evaluate(banner.id), true, 'an updated flag is served at once');
  t.strictSame((await flagByName('banner', world.secrets.read)).cohorts, ['carol'], "a single flag's cohorts applied");
  t.match(on, { kind: 'flag', enabled: true, trafficPercentage: 100, cohorts: ['bob'], audienceId: null });
  const off = await flagByName('fac-off', world.secrets.read);
  t.equal(await evaluate(off.id), false);

  const entries = audit(world.ids.single);
  const added = entries.slice(0, entries.length - auditBefore.length);
  t.equal(added.length, 4, 'one audit entry per change');
  t.same(added.map((e) => e.action).sort(), ['flag.create', 'flag.create', 'flag.create', 'flag.patch']);
  for (const entry of added) t.match(entry, { actor: `token:${world.tokenIds.write}`, actorName: 'ci-write' });
  t.equal(added[0]!.seq, applied.json.revision, "the revision is the apply's last audited change");

  const again = await apply(world.secrets.write, file);
  t.equal(again.status, 200);
  t.match(again.json, { changed: false, changes: [], revision: applied.json.revision });
  t.equal(audit(world.ids.single).length, entries.length, 'applying the same file again writes no audit entry');
  const replanned = await plan(world.secrets.read, file);
  t.match(replanned.json, { changed: false, changes: [], revision: applied.json.revision });
  const exported = await current(world.secrets.read);
  t.strictSame(
    exported.flags['fac-on'],
    { description: '', tags: [], enabled: true, trafficPercentage: 100, cohorts: ['bob'], audience: null },
    'exported back as applied',
  );
  t.match(exported.flags['fac-colour'], file.flags['fac-colour'], 'typed variants too');
  const roundTrip = await apply(world.secrets.write, exported);
  t.match(roundTrip.json, { changed: false, changes: [] }, 'the export applies back as no change');
  const colour = await flagByName('fac-colour', world.secrets.read);
  const ofrep = await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${colour.id}`, {
    body: { context: { targetingKey: 'k-1', email: 'ann@example.com' } },
  });
  t.match(ofrep.json, { value: '#0f0', variant: 'green' }, 'the rule is served as the file wrote it');
});

t.test('ifPlan: the plan a reviewer saw is applied, or nothing (409 Plan changed); a bad digest is 400', async (t) => {
  const file = await current(world.secrets.read);
  file.flags.checkout.trafficPercentage = 35;
  delete file.flags.banner; // kept without prune
  const planned = await plan(world.secrets.read, file);
  t.equal(planned.status, 200);
  t.match(planned.json, { changed: true, digest: /^[0-9a-f]{64}$/, notInFile: ['banner'] });
  t.equal((await plan(world.secrets.read, file)).json.digest, planned.json.digest, 'the same changes: the same digest');
  const conditions = `?ifRevision=${planned.json.revision}&ifPlan=${planned.json.digest}`;

  // The same revision, another file (or prune): other changes than the reviewed plan's.
  const other = structuredClone(file);
  other.flags.checkout.trafficPercentage = 40;
  const detail = await refused(t, 409, 'Plan changed', () => apply(world.secrets.write, other, conditions));
  t.match(detail, `not those of the plan ${planned.json.digest}`);
  // With prune, banner would be deleted: a change the reviewed plan did not have.
  await refused(t, 409, 'Plan changed', () => apply(world.secrets.write, file, `${conditions}&prune=true`));
  for (const bad of ['abc', planned.json.digest.toUpperCase(), `${planned.json.digest}0`]) {
    const text = await refused(t, 400, 'Invalid request', () => apply(world.secrets.write, file, `?ifPlan=${bad}`));
    t.match(text, '"ifPlan" must be a plan\'s digest');
  }

  const applied = await apply(world.secrets.write, file, conditions);
  t.equal(applied.status, 200, applied.text);
  t.strictSame(applied.json.changes, planned.json.changes, 'the reviewed changes');
  t.equal(applied.json.digest, planned.json.digest, 'the answer names the plan it applied');
  t.equal((await flagByName('checkout', world.secrets.read)).trafficPercentage, 35);
});

t.test('ifRevision: a stale one is 409 and nothing applied; the current one applies', async (t) => {
  const file = await current(world.secrets.read);
  const planned = await plan(world.secrets.read, file);
  t.equal(planned.json.changed, false);
  // Someone else changes a flag after the plan.
  const checkout = await flagByName('checkout', world.secrets.read);
  const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${checkout.id}`, {
    token: world.secrets.write,
    body: { trafficPercentage: 60 },
  });
  t.equal(patched.status, 200);
  file.flags.checkout.trafficPercentage = 70;
  const stale = planned.json.revision;
  const detail = await refused(t, 409, 'Revision conflict', () => apply(world.secrets.write, file, `?ifRevision=${stale}`));
  const now = (await plan(world.secrets.read, file)).json.revision;
  t.ok(now > stale);
  t.match(detail, `since revision ${stale} (it is at revision ${now}); nothing was applied`);
  t.match(detail, `ifRevision=${now}`, "the fix names the API's parameter");
  t.equal((await flagByName('checkout', world.secrets.read)).trafficPercentage, 60);

  const ok = await apply(world.secrets.write, file, `?ifRevision=${now}`);
  t.equal(ok.status, 200, ok.text);
  t.equal(ok.json.changed, true);
  t.strictSame(ok.json.changes, [
    { op: 'update', kind: 'flag', name: 'checkout', fields: [{ path: 'trafficPercentage', before: 60, after: 70 }], consoleOnly: false },
  ]);
  t.equal((await flagByName('checkout', world.secrets.read)).trafficPercentage, 70);
  t.equal(
    (await apply(world.secrets.write, file, `?ifRevision=${ok.json.revision}`)).json.changed,
    false,
    'the revision it left is current',
  );
});

t.test('prune: plan lists the delete; apply refuses it (console-only) and applies nothing', async (t) => {
  const file = await current(world.secrets.read);
  delete file.flags['fac-off'];
  file.flags.banner.trafficPercentage = 40;
  const kept = await plan(world.secrets.read, file);
  t.equal(kept.status, 200);
  t.strictSame(kept.json.notInFile, ['fac-off'], 'without prune the flag is kept, and named');
  t.notOk(
    kept.json.changes.some((c: any) => c.op === 'delete'),
    'nothing deleted without prune',
  );
  const pruned = await plan(world.secrets.read, file, '?prune=true');
  t.equal(pruned.status, 200);
  t.strictSame(pruned.json.notInFile, []);
  t.strictSame(
    pruned.json.changes.find((c: any) => c.op === 'delete'),
    { op: 'delete', kind: 'flag', name: 'fac-off', fields: [], consoleOnly: true },
  );
  t.equal((await plan(world.secrets.read, file, '?prune=false')).text, kept.text, 'prune=false is the default');

  const detail = await refused(t, 403, 'Forbidden', () => apply(world.secrets.write, file, '?prune=true'));
  t.match(detail, 'delete flag "fac-off" (--prune)');
  t.match(detail, 'Nothing was applied');
  t.equal((await flagByName('banner', world.secrets.read)).trafficPercentage, 100, "the file's other change was not applied either");
  t.ok(await flagByName('fac-off', world.secrets.read), 'the flag is still there');
});

t.test('console-only edits of an existing flag are refused by name; audiences and flag-wide lists are ignored', async (t) => {
  const file = await current(world.secrets.read);
  file.flags.checkout.description = 'the new checkout';
  file.flags.checkout.tags = ['web'];
  file.flags.banner.trafficPercentage = 30;
  const planned = await plan(world.secrets.read, file);
  t.match(planned.json.changes, [
    { name: 'banner', consoleOnly: false },
    { name: 'checkout', consoleOnly: true },
  ]);
  const detail = await refused(t, 403, 'Forbidden', () => apply(world.secrets.write, file));
  t.match(detail, 'change description, tags of flag "checkout"');
  t.notMatch(detail, 'banner');

  // Audiences equal to the project's: the API leaves them alone and says so.
  const withAudiences = await current(world.secrets.read);
  withAudiences.audiences = { Beta: { rules: [{ attribute: 'plan', values: ['beta'] }] } };
  withAudiences.flags.checkout.audience = 'Beta';
  const kIgnored = ['audiences (defined in the console; flags may name them)'];
  const audPlan = await plan(world.secrets.read, withAudiences);
  t.equal(audPlan.status, 200, audPlan.text);
  t.strictSame(audPlan.json.ignored, kIgnored);
  t.strictSame(audPlan.json.changes, [
    { op: 'update', kind: 'flag', name: 'checkout', fields: [{ path: 'audience', before: null, after: 'Beta' }], consoleOnly: false },
  ]);
  const audApply = await apply(world.secrets.write, withAudiences);
  t.equal(audApply.status, 200, audApply.text);
  t.strictSame(audApply.json.ignored, kIgnored);
  t.equal((await flagByName('checkout', world.secrets.read)).audienceId, world.ids.audience, 'a flag may name an audience');
  // Rules that differ are not shown nor written either: the API neither reads nor defines audiences.
  const other = structuredClone(withAudiences);
  other.audiences.Beta.rules = [{ attribute: 'plan', values: ['gold'] }];
  const otherPlan = await plan(world.secrets.read, other);
  t.match(otherPlan.json, { changed: false, changes: [], ignored: kIgnored });
  t.notMatch(otherPlan.text, '"beta"', 'the stored rules are not revealed');
  t.equal((await apply(world.secrets.write, other)).json.changed, false);
  world.store.resetReadTxn();
  t.strictSame(listAudiences(world.store, world.ids.single).find((a) => a.name === 'Beta')!.rules, [
    { attribute: 'plan', values: ['beta'] },
  ]);

  // A group flag's flag-wide list in the file is ignored the same way.
  const multi = await current(world.secrets.multiRead);
  multi.flags.search.cohorts = ['wide-1', 'wide-2'];
  const multiPlan = await plan(world.secrets.multiRead, multi);
  t.match(multiPlan.json, {
    changed: false,
    changes: [],
    ignored: ['flags.search.cohorts (a flag-wide cohort list is set in the console)'],
  });
  t.equal((await apply(world.secrets.multiWrite, multi)).status, 200);
});

t.test('a bad file is 400 naming the place; an empty body, bad prune or ifRevision are 400', async (t) => {
  const file = await current(world.secrets.read);
  file.flags.checkout.trafficPercentage = 101;
  file.flags.banner.colour = 'red';
  const detail = await refused(t, 400, 'Invalid request', () => apply(world.secrets.write, file));
  t.match(detail, /^The file cannot be applied, nothing changed: /);
  t.match(detail, 'flags.checkout.trafficPercentage must be a whole number between 0 and 100');
  t.match(detail, 'unknown field "flags.banner.colour"', 'every problem, each naming its place');
  t.equal(await refused(t, 400, 'Invalid request', () => plan(world.secrets.read, file)), detail, 'plan says the same');

  const unknownAudience = await current(world.secrets.read);
  unknownAudience.flags.banner.audience = 'Nobody';
  t.match(
    await refused(t, 400, 'Invalid request', () => apply(world.secrets.write, unknownAudience)),
    'flags.banner.audience: there is no audience "Nobody"',
  );
  const wrongKind = await current(world.secrets.multiRead);
  t.match(await refused(t, 400, 'Invalid request', () => apply(world.secrets.write, wrongKind)), '"kind": "multi"');

  for (const route of ['/api/v1/plan', '/api/v1/apply']) {
    const empty = await refused(t, 400, 'Invalid request', () =>
      call(server.baseUrl, 'POST', route, { token: world.secrets.write, raw: '' }),
    );
    t.match(empty, /^The request body is empty/, route);
  }
  const good = await current(world.secrets.read);
  t.equal(
    await refused(t, 400, 'Invalid request', () => apply(world.secrets.write, good, '?prune=yes')),
    '"prune" must be true or false, not "yes".',
  );
  t.equal(
    await refused(t, 400, 'Invalid request', () => plan(world.secrets.read, good, '?prune=1')),
    '"prune" must be true or false, not "1".',
  );
  for (const bad of ['abc', '-1', '1.5', '']) {
    t.match(
      await refused(t, 400, 'Invalid request', () => apply(world.secrets.write, good, `?ifRevision=${bad}`)),
      `"ifRevision" must be a revision number (from a plan), not "${bad}".`,
    );
  }
});

t.test('a token limited to environments applies changes to its environments only', async (t) => {
  const file = await current(world.secrets.multiRead);
  file.flags.search.environments.staging.trafficPercentage = 40;
  const ok = await apply(world.secrets.stagingWrite, file);
  t.equal(ok.status, 200, ok.text);
  t.strictSame(ok.json.changes, [
    {
      op: 'update',
      kind: 'flag',
      name: 'search',
      fields: [{ path: 'environments.staging.trafficPercentage', before: 100, after: 40 }],
      consoleOnly: false,
    },
  ]);
  const search = await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.groupFlag}`, { token: world.secrets.multiRead });
  t.match(search.json.environments, {
    staging: { trafficPercentage: 40, cohorts: ['wide-1', 'wide-2'] },
    production: { trafficPercentage: 0, cohorts: ['qa'] },
  });
  const entry = audit(world.ids.multi)[0]!;
  t.match(entry, { actor: `token:${world.tokenIds.stagingWrite}`, actorName: 'staging-only', action: 'flag.patch' });

  // A change in another environment: 403, and the staging change beside it is not applied either.
  file.flags.search.environments.staging.trafficPercentage = 20;
  file.flags.search.environments.production.enabled = true;
  t.match(
    await refused(t, 403, 'Environment not permitted', () => apply(world.secrets.stagingWrite, file)),
    /"production".*limited to: staging/,
  );
  t.equal(
    (await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.groupFlag}?env=staging`, { token: world.secrets.multiRead })).json
      .trafficPercentage,
    40,
  );

  // A new flag: state in its environment may be set, in another not.
  const created = await current(world.secrets.multiRead);
  created.flags['fac-staged'] = { environments: { staging: { enabled: true, trafficPercentage: 100 } } };
  const made = await apply(world.secrets.stagingWrite, created);
  t.equal(made.status, 200, made.text);
  const staged = await flagByName('fac-staged', world.secrets.multiRead);
  t.equal(await evaluate(staged.id, '&env=staging'), true, 'served at once in staging');
  t.equal(await evaluate(staged.id, '&env=production'), false);
  created.flags['fac-prod'] = { environments: { production: { enabled: true, trafficPercentage: 100 } } };
  t.match(await refused(t, 403, 'Forbidden', () => apply(world.secrets.stagingWrite, created)), /"production".*limited to: staging/);
});

t.test('413 for a body over 1 MiB on plan and apply, and the server keeps serving', async (t) => {
  const file = await current(world.secrets.read);
  file.flags.banner.description = 'x'.repeat(1024 * 1024);
  for (const [route, token] of [
    ['/api/v1/plan', world.secrets.read],
    ['/api/v1/apply', world.secrets.write],
  ] as const) {
    const detail = await refused(t, 413, 'Request body too large', () => call(server.baseUrl, 'POST', route, { token, body: file }));
    t.ok(detail, route);
  }
  t.equal((await plan(world.secrets.read, await current(world.secrets.read))).status, 200, 'the server keeps serving');
});

t.test('the OpenAPI document has the three routes, FlagFile and PlanResult', async (t) => {
  const r = await call(server.baseUrl, 'GET', '/api/v1/openapi.json');
  t.equal(r.status, 200);
  const doc = r.json;
  t.ok(doc.components.schemas.FlagFile, 'FlagFile component');
  t.ok(doc.components.schemas.PlanResult, 'PlanResult component');
  const fileRef = { $ref: '#/components/schemas/FlagFile' };
  const planRef = { $ref: '#/components/schemas/PlanResult' };
  const exp = doc.paths['/api/v1/export']?.get;
  t.same(exp?.responses['200'].content['application/json'].schema, fileRef);
  t.same(
    exp?.parameters.map((p: any) => p.name),
    ['format', 'env', 'Flagwire-Min-Revision'],
  );
  for (const path of ['/api/v1/plan', '/api/v1/apply']) {
    const op = doc.paths[path]?.post;
    t.ok(op, `POST ${path}`);
    t.same(op.requestBody.content['application/json'].schema, fileRef, `${path} takes a FlagFile`);
    t.same(op.responses['200'].content['application/json'].schema, planRef, `${path} answers a PlanResult`);
    t.ok(op.responses['413'], `${path}: 413`);
  }
  const applyOp = doc.paths['/api/v1/apply'].post;
  t.same(
    applyOp.parameters.map((p: any) => p.name),
    ['prune', 'ifRevision', 'ifPlan', 'Flagwire-Min-Revision'],
  );
  t.match(applyOp.responses['409'].description, 'Revision conflict');
  t.match(applyOp.responses['409'].description, 'Plan changed');
  t.match(applyOp.responses['403'].description, 'Insufficient permission');
  t.notOk(doc.paths['/api/v1/plan'].post.responses['403'], 'a read token may plan');
});

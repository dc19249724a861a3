// Approvals and flags as code, black-box (docs/approvals.md: "the whole apply is one request: it stays
// all or nothing"): `flagwire apply` of a file that turns a flag on in production exits 3 and applies
// nothing, not even its unguarded parts; approved, the whole file is applied in one revision. The
// Management API's POST /api/v1/apply answers 202 with the request; `flagwire flags import` (flagd's
// format) is held the same way.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { ChangeRequestedBody } from '../../src/approvals/change-requested.js';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets, tokenIds } = world;
const files = tempDir(t);

async function ok(args: string[]): Promise<any> {
  const r = await cli(server.dataDir, args);
  if (r.code !== 0) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
  return r.json;
}

const exported = async () => {
  const { flagwire, kind, environments, audiences, flags } = await ok(['export', ids.multi]);
  return { flagwire, kind, environments, audiences, flags };
};
/** The project's flags as the API lists them, and the revision it answered at. */
const flags = async () => {
  const r = await call(server.baseUrl, 'GET', '/api/v1/flags', { token: secrets.multiRead });
  return { revision: Number(r.headers.get('flagwire-revision')), flags: r.json.flags as any[] };
};

await ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--as', ids.admin]);

t.test(
  '`flagwire apply` of a file that turns a flag on in production: exit 3, nothing applied; approved, the whole file in one revision',
  async (t) => {
    const file = await exported();
    file.flags.search.environments.production.enabled = true;
    file.flags.search.environments.staging.trafficPercentage = 40;
    file.flags.search.description = 'from the file';
    file.flags['new-one'] = { ...file.flags.search, description: 'new', environments: { staging: file.flags.search.environments.staging } };
    const path = join(files, 'flags.json');
    writeFileSync(path, JSON.stringify(file));
    const before = await flags();
    const applied = await cli(server.dataDir, ['apply', ids.multi, '--file', path, '--as', ids.editor]);
    t.equal(applied.code, 3, applied.stdout);
    const request = applied.json.changeRequest;
    t.strictSame(request.environments, ['production']);
    t.match(request.author, { id: `user:${ids.editor}` });
    t.strictSame(
      request.diff.map((d: any) => `${d.name} ${d.field}`).sort(),
      ['new-one ', 'search description', 'search environments.production.enabled', 'search environments.staging.trafficPercentage'],
      'the whole file: its unguarded parts too',
    );
    t.strictSame((await flags()).flags, before.flags, 'nothing applied, not even the staging change or the new flag');

    const approved = await ok(['request', 'approve', request.id, '--version', String(request.version), '--as', ids.owner]);
    t.equal(approved.status, 'applied');
    const after = await flags();
    t.equal(after.revision, before.revision + 1, 'one revision');
    const search = after.flags.find((f) => f.name === 'search');
    t.match(search, {
      description: 'from the file',
      environments: { production: { enabled: true }, staging: { trafficPercentage: 40 } },
    });
    t.match(
      after.flags.find((f) => f.name === 'new-one'),
      { description: 'new', environments: { staging: { trafficPercentage: 40 } } },
    );
    const plan = await cli(server.dataDir, ['plan', ids.multi, '--file', path]);
    t.equal(plan.code, 0, 'the project is what the file says');
  },
);

t.test('POST /api/v1/apply of such a file: 202 with the request, nothing applied', async (t) => {
  const file = await exported();
  file.flags.search.environments.production.trafficPercentage = 25;
  file.flags.search.environments.staging.trafficPercentage = 60;
  const before = await flags();
  const r = await call(server.baseUrl, 'POST', '/api/v1/apply', { token: secrets.multiWrite, body: file });
  t.equal(r.status, 202, r.text);
  t.ok(Value.Check(ChangeRequestedBody, r.json));
  t.match(r.json.changeRequest, { author: { id: `token:${tokenIds.multiWrite}` }, status: 'pending', environments: ['production'] });
  t.strictSame((await flags()).flags, before.flags, 'nothing applied');
  t.equal(
    (await ok(['request', 'approve', r.json.changeRequest.id, '--version', String(r.json.changeRequest.version), '--as', ids.admin]))
      .status,
    'applied',
  );
  t.match(
    (await flags()).flags.find((f) => f.name === 'search'),
    { environments: { staging: { trafficPercentage: 60 }, production: { trafficPercentage: 25 } } },
  );
});

t.test('`flagwire flags import` of a flagd file for production: exit 3, nothing imported; approved, imported', async (t) => {
  const path = join(files, 'flagd.json');
  writeFileSync(
    path,
    JSON.stringify({ flags: { imported: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' } } }),
  );
  const before = await flags();
  const r = await cli(server.dataDir, ['flags', 'import', ids.multi, '--file', path, '--env', 'production', '--as', ids.editor]);
  t.equal(r.code, 3, r.stdout);
  t.match(r.json.changeRequest, {
    environments: ['production'],
    author: { id: `user:${ids.editor}` },
    diff: [{ name: 'imported', field: '' }],
  });
  t.strictSame((await flags()).flags, before.flags, 'nothing imported');
  t.equal(
    (await ok(['request', 'approve', r.json.changeRequest.id, '--version', String(r.json.changeRequest.version), '--as', ids.admin]))
      .status,
    'applied',
  );
  t.match(
    (await flags()).flags.find((f) => f.name === 'imported'),
    { environments: { production: { enabled: true } } },
  );
});

t.test(
  "an apply landing on its author's pending request adds no field it leaves as it is: a field changed meanwhile is not undone, the request is not stale, and approving applies it",
  async (t) => {
    const made = await call(server.baseUrl, 'POST', '/api/v1/flags', {
      token: secrets.multiWrite,
      body: { name: 'piped', environments: { staging: { enabled: true, trafficPercentage: 10 }, production: {} } },
    });
    t.equal(made.status, 201, `off in production: made at once (${made.text})`);
    const opening = await exported();
    opening.flags.piped.environments.production.trafficPercentage = 15;
    const opened = await call(server.baseUrl, 'POST', '/api/v1/apply', { token: secrets.multiWrite, body: opening });
    t.equal(opened.status, 202, opened.text);
    t.equal(opened.json.edited, false, 'a request opened');
    const flagId = opened.json.changeRequest.diff[0].id as string;
    // Meanwhile the same token changes staging, which is not guarded: applied at once.
    const staging = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}?env=staging`, {
      token: secrets.multiWrite,
      body: { trafficPercentage: 35 },
    });
    t.equal(staging.status, 200, staging.text);
    // The pipeline exports again (staging at 35) and turns production on too: an edit of its request.
    const next = await exported();
    next.flags.piped.environments.production.trafficPercentage = 15;
    next.flags.piped.environments.production.enabled = true;
    const edited = await call(server.baseUrl, 'POST', '/api/v1/apply', { token: secrets.multiWrite, body: next });
    t.equal(edited.status, 202, edited.text);
    t.equal(edited.json.edited, true, 'the request edited');
    t.match(edited.json.detail, new RegExp(`it edited change request ${opened.json.changeRequest.id}`));
    const request = edited.json.changeRequest;
    t.equal(request.id, opened.json.changeRequest.id, 'the same request');
    t.strictSame(
      request.diff.map((d: any) => [d.field, d.current, d.proposed]),
      [
        ['environments.production.enabled', false, true],
        ['environments.production.trafficPercentage', 0, 15],
      ],
      'what it changes, and nothing it leaves as it is',
    );
    t.equal(request.diff.filter((d: any) => JSON.stringify(d.current) === JSON.stringify(d.proposed)).length, 0, 'no no-op field');
    t.equal(request.stale, false, 'not stale');
    const approved = await ok(['request', 'approve', request.id, '--version', String(request.version), '--as', ids.admin]);
    t.equal(approved.status, 'applied', 'approving applies it');
    t.match(
      (await flags()).flags.find((f) => f.id === flagId),
      { environments: { staging: { trafficPercentage: 35 }, production: { enabled: true, trafficPercentage: 15 } } },
      'production as asked, staging as changed meanwhile',
    );
  },
);

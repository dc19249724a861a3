// Every string the Management API stores must be valid Unicode (I-JSON, RFC 7493): a lone surrogate
// written as an escape, anywhere in a body, keys included, and bytes that are not UTF-8 are a 400
// naming the path (or the encoding) that changes nothing; valid text of any script round-trips exactly,
// and repeating it is a no-op.
import t, { type Test } from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const kFlags = '/api/v1/flags';
/** A body written as JSON text, so that an escape such as `\ud800` reaches the server as sent. */
const post = (token: string, raw: string | Uint8Array<ArrayBuffer>) => call(server.baseUrl, 'POST', kFlags, { token, raw });
const patch = (token: string, id: string, raw: string | Uint8Array<ArrayBuffer>, query = '') =>
  call(server.baseUrl, 'PATCH', `${kFlags}/${id}${query}`, { token, raw });
const get = (path: string) => call(server.baseUrl, 'GET', path, { token: world.secrets.write });
const auditCount = (projectId: string) => {
  world.store.resetReadTxn();
  return world.store.listAudit(projectId, { limit: 1000, before: null }).length;
};

const kFix = 'send only well-formed text (I-JSON, RFC 7493)';
const lone = (path: string, units: string) => `${path} is not valid Unicode: it has a lone surrogate (${units}); ${kFix}`;
const kNotUtf8 = 'The request body is not valid UTF-8; send the JSON encoded as UTF-8 (I-JSON, RFC 7493).';

/** A request that must be a 400 with exactly `detail`, with no record changed. */
async function refused(t: Test, request: () => Promise<{ status: number; json: any }>, detail: string) {
  const before = world.snapshot();
  const r = await request();
  t.equal(r.status, 400, detail);
  t.equal(r.json?.error, 'Invalid request');
  t.equal(r.json?.detail, detail);
  t.equal(world.snapshot(), before, 'nothing changed');
}

t.test('the report: lone surrogates are refused, so three names can no longer become one', async (t) => {
  await refused(t, () => post(world.secrets.write, '{"name":"vip-flag","cohorts":["vip\\ud800"]}'), lone('cohorts[0]', '\\uD800'));
  for (const [escaped, unit] of [
    ['\\ud800', '\\uD800'],
    ['\\udbff', '\\uDBFF'],
    ['\\udc00', '\\uDC00'],
  ]) {
    await refused(t, () => post(world.secrets.write, `{"name":"dup${escaped}"}`), lone('name', unit));
  }
  const replaced = await get(`${kFlags}?name=${encodeURIComponent('dup\uFFFD\uFFFD\uFFFD')}`);
  t.same(replaced.json.flags, [], 'no flag was stored under the name the three would have collapsed to');
  // The repeated patch of the report: refused every time, never an audit entry.
  for (let i = 0; i < 3; i++) {
    await refused(t, () => patch(world.secrets.write, world.ids.flag, '{"cohorts":["vip\\ud800"]}'), lone('"cohorts[0]"', '\\uD800'));
  }
});

t.test('create: every stored string and every key is checked, all problems in one detail', async (t) => {
  const w = world.secrets.write;
  await refused(t, () => post(w, '{"name":"a\\udc00b"}'), lone('name', '\\uDC00'));
  await refused(t, () => post(w, '{"name":"d","description":"text \\ud83d"}'), lone('description', '\\uD83D'));
  await refused(t, () => post(w, '{"name":"t","tags":["fine","t\\udbff"]}'), lone('tags[1]', '\\uDBFF'));
  await refused(t, () => post(w, '{"name":"c","cohorts":["ok","x\\udfffy\\ud800"]}'), lone('cohorts[1]', '\\uDFFF, \\uD800'));
  await refused(t, () => post(w, '{"name":"a","audienceId":"aud\\ud800"}'), lone('audienceId', '\\uD800'));
  await refused(t, () => post(w, '{"name":"k","col\\ud800our":1}'), lone('the key col\\uD800our', '\\uD800'));
  await refused(t, () => post(w, '{"name":"u","extra":{"deep":["\\udc01"]}}'), lone('extra.deep[0]', '\\uDC01'));
  await refused(
    t,
    () => post(w, '{"tags":["\\ud800"],"name":"n\\udc00","cohorts":["a","b","\\udbff"]}'),
    [lone('tags[0]', '\\uD800'), lone('name', '\\uDC00'), lone('cohorts[2]', '\\uDBFF')].join('; '),
  );

  const m = world.secrets.multiWrite;
  await refused(
    t,
    () => post(m, '{"name":"g","environments":{"production":{"cohorts":["ok","qa\\ud800"]}}}'),
    lone('environments.production.cohorts[1]', '\\uD800'),
  );
  await refused(
    t,
    () => post(m, '{"name":"g","environments":{"staging":{"audienceId":"\\udc00"}}}'),
    lone('environments.staging.audienceId', '\\uDC00'),
  );
  await refused(
    t,
    () => post(m, '{"name":"g","environments":{"prod\\ud800":{"cohorts":["\\udfff"]}}}'),
    [lone('the key environments.prod\\uD800', '\\uD800'), lone('environments.prod\\uD800.cohorts[0]', '\\uDFFF')].join('; '),
  );
});

t.test('patch: every field, both project kinds, with the env problem in the same detail', async (t) => {
  await refused(
    t,
    () => patch(world.secrets.write, world.ids.flag, '{"enabled":true,"cohorts":["a","\\ud800"]}'),
    lone('"cohorts[1]"', '\\uD800'),
  );
  await refused(t, () => patch(world.secrets.write, world.ids.flag, '{"audienceId":"\\udc00"}'), lone('"audienceId"', '\\uDC00'));
  await refused(t, () => patch(world.secrets.write, world.ids.flag, '{"\\udbffcohorts":[]}'), lone('the key "\\uDBFFcohorts"', '\\uDBFF'));
  const group = world.ids.groupFlag;
  await refused(
    t,
    () => patch(world.secrets.multiWrite, group, '{"cohorts":["qa\\ud800"]}', '?env=production'),
    lone('"cohorts[0]"', '\\uD800'),
  );
  const missing = await patch(world.secrets.multiWrite, group, '{"cohorts":["qa\\ud800"]}');
  t.equal(missing.status, 400);
  t.match(
    missing.json.detail,
    /^This flag belongs to a multi-environment project: add the "env" query parameter .*; "cohorts\[0\]" is not valid Unicode/,
  );
});

t.test('bytes that are not UTF-8 are refused, never decoded to U+FFFD', async (t) => {
  const bytes = (...parts: (string | number[])[]) => new Uint8Array(Buffer.concat(parts.map((p) => Buffer.from(p))));
  const w = world.secrets.write;
  await refused(t, () => post(w, bytes('{"name":"caf', [0xff], '"}')), kNotUtf8);
  // A surrogate encoded as if it were a character (CESU-8/WTF-8): what a lone surrogate was stored as.
  await refused(t, () => post(w, bytes('{"name":"n","cohorts":["vip', [0xed, 0xa0, 0x80], '"]}')), kNotUtf8);
  await refused(t, () => post(w, bytes('{"name":"overlong', [0xc0, 0xaf], '"}')), kNotUtf8);
  await refused(t, () => post(w, bytes('{"name":"cut', [0xe2, 0x82], '"}')), kNotUtf8);
  await refused(t, () => post(w, bytes('{"name":"x"}', [0x80])), kNotUtf8);
  await refused(t, () => patch(w, world.ids.flag, bytes('{"cohorts":["', [0xfe], '"]}')), kNotUtf8);
  const missing = await patch(world.secrets.multiWrite, world.ids.groupFlag, bytes('{"enabled":true,"x":"', [0xff], '"}'));
  t.equal(missing.status, 400);
  t.match(
    missing.json.detail,
    /^This flag belongs to a multi-environment project: add the "env" query parameter .*; The request body is not valid UTF-8;/,
  );
});

t.test('valid text of any script round-trips exactly, and repeating it changes nothing', async (t) => {
  const name = '新功能 🚀 launch';
  const body = {
    name,
    description: 'Ünïcödé — ελληνικά, עברית, 日本語, and e\u0301 (combining)',
    tags: ['标签', '😀', 'cafe\u0301'],
    // Precomposed and decomposed é are different strings: kept apart, never normalised.
    cohorts: ['vip-😀', 'café', 'cafe\u0301', '\uFDD0 noncharacter', '👩‍👩‍👧 family'],
  };
  const created = await post(world.secrets.write, JSON.stringify(body));
  t.equal(created.status, 201);
  t.match(created.json, { name, description: body.description, tags: body.tags });
  t.same(created.json.cohorts, body.cohorts);
  const read = await get(`${kFlags}/${created.json.id}`);
  t.same(read.json, created.json, 'GET returns exactly what was sent');
  const found = await get(`${kFlags}?name=${encodeURIComponent(name)}`);
  t.same(
    found.json.flags.map((f: { id: string }) => f.id),
    [created.json.id],
    '?name= finds the one flag by the exact text',
  );

  // A surrogate pair written as escapes is one valid character: the same name, so a duplicate.
  const pair = await post(world.secrets.write, '{"name":"pair-\\ud83d\\ude00"}');
  t.equal(pair.status, 201);
  t.equal(pair.json.name, 'pair-😀');
  t.match((await post(world.secrets.write, JSON.stringify({ name: 'pair-😀' }))).json.detail, /a flag named "pair-😀" already exists/);

  const cohorts = JSON.stringify({ cohorts: ['新', 'e\u0301', '😀', 'Ω'] });
  const audit = auditCount(world.ids.single);
  const first = await patch(world.secrets.write, created.json.id, cohorts);
  t.equal(first.status, 200);
  t.equal(first.json.changed, true);
  t.same(first.json.flag.cohorts, ['新', 'e\u0301', '😀', 'Ω']);
  t.equal(auditCount(world.ids.single), audit + 1, 'one audit entry');
  const before = world.snapshot();
  for (let i = 0; i < 2; i++) {
    const again = await patch(world.secrets.write, created.json.id, cohorts);
    t.equal(again.json.changed, false, 'the same patch again is a no-op');
  }
  t.equal(world.snapshot(), before, 'no second audit entry, nothing written');

  const groupBody = JSON.stringify({ cohorts: ['ステージ', '🧪'] });
  const groupFirst = await patch(world.secrets.multiWrite, world.ids.groupFlag, groupBody, '?env=staging');
  t.equal(groupFirst.json.changed, true);
  const groupBefore = world.snapshot();
  const groupAgain = await patch(world.secrets.multiWrite, world.ids.groupFlag, groupBody, '?env=staging');
  t.equal(groupAgain.json.changed, false);
  t.same(groupAgain.json.flag.cohorts, ['ステージ', '🧪']);
  t.equal(world.snapshot(), groupBefore, 'multi-environment: nothing written the second time');
});

t.test('a multi-environment create with non-ASCII cohorts reads back the same', async (t) => {
  const body = { name: 'グループ', environments: { production: { cohorts: ['👍', 'ñ'] } } };
  const created = await post(world.secrets.multiWrite, JSON.stringify(body));
  t.equal(created.status, 201);
  t.same(created.json.environments.production.cohorts, ['👍', 'ñ']);
  const read = await call(server.baseUrl, 'GET', `${kFlags}/${created.json.id}?env=production`, { token: world.secrets.multiWrite });
  t.same(read.json.cohorts, ['👍', 'ñ']);
  t.equal(read.json.name, 'グループ');
});

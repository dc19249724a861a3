// Token secrets never leak (issue 8, item 3): a secret appears in the console output that creates it
// (`token create`, `token rotate`) and nowhere else: not in any API response, not in any log line of
// the server (at trace level, its most verbose), not in any audit entry, token activity, denial or
// e-mail, not in any other console output, and not in the data file's bytes at all (only its SHA-256).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { hashSecret } from '../../src/model/ids.js';
import { dataFilePath } from '../../src/store/layout.js';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildRichWorld, kUnlimited } from './support.js';

t.test('token secrets appear only in the output that creates them', async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  await world.store.close();
  const { ids } = world;

  // Tokens made through the console: the creation outputs are the only places their secrets may appear.
  const creations: string[] = [];
  const created: { id: string; secret: string; project: string }[] = [];
  for (const [project, user, extra] of [
    [ids.single, ids.editor, ['--permission', 'write']],
    [ids.single, ids.editor, ['--permission', 'read']],
    [ids.multi, ids.owner, ['--permission', 'write', '--env', 'staging', '--expires', '30d']],
  ] as const) {
    for (const json of [true, false]) {
      const r = await cli(dataDir, ['token', 'create', project, '--as', user, '--name', `console-${created.length}`, ...extra], { json });
      t.equal(r.code, 0, `token create (${json ? 'json' : 'human'})`);
      const secret = /fw_[A-Za-z0-9]{40}/.exec(r.stdout)?.[0];
      const id = json ? r.json.id : /\b([A-Za-z0-9]{20})\b/.exec(r.stdout.replace(secret ?? '', ''))?.[1];
      t.ok(secret, 'the creation output shows the secret');
      creations.push(r.stdout + r.stderr);
      created.push({ id: id!, secret: secret!, project });
    }
  }
  const rotated = await cli(dataDir, ['token', 'rotate', created[0]!.id, '--as', ids.admin]);
  t.equal(rotated.code, 0, 'token rotate');
  const newSecret = /fw_[A-Za-z0-9]{40}/.exec(rotated.stdout)?.[0];
  t.ok(newSecret, 'the rotation output shows the replacement secret');
  creations.push(rotated.stdout + rotated.stderr);

  const secrets = [
    ...Object.values(world.secrets),
    world.proto.secret,
    world.multiB.secret,
    world.multiB.readSecret,
    world.refused.revoked,
    world.refused.expired,
    ...created.map((c) => c.secret),
    newSecret!,
  ];
  const live = [
    created[1]!.secret,
    created[2]!.secret,
    newSecret!,
    world.secrets.write,
    world.secrets.read,
    world.secrets.multiWrite,
    world.secrets.stagingWrite,
  ];

  // Every kind of request, with every token: accepted, refused (401, 402, 403, 404, 400), and the
  // secret misplaced in the URL, in a malformed header, or repeated.
  const server = await startTestServer({ dataDir, env: { ...kUnlimited, FLAGWIRE_LOG_LEVEL: 'trace', FLAGWIRE_TEST_HOOKS: '1' } });
  t.teardown(() => server.stop());
  const responses: string[] = [];
  const record = (r: { status: number; headers: Headers; text: string }) => {
    responses.push(`${r.status} ${[...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${r.text}`);
  };
  for (const secret of secrets) {
    for (const [method, path, body] of [
      ['GET', '/api/v1/token'],
      ['GET', '/api/v1/flags'],
      ['GET', `/api/v1/flags/${ids.flag}`],
      ['GET', `/api/v1/flags/${ids.groupFlag}?env=production`],
      ['PATCH', `/api/v1/flags/${ids.flag}`, { enabled: true }],
      ['PATCH', `/api/v1/flags/${ids.groupFlag}?env=production`, { trafficPercentage: 5 }],
      ['PATCH', `/api/v1/flags/${ids.flagB}`, { enabled: true }],
      ['POST', '/api/v1/flags', { name: `s-${responses.length}` }],
      ['PATCH', `/api/v1/flags/${ids.flag}`, { nope: true }],
      ['DELETE', `/api/v1/flags/${ids.flag}`],
    ] as const) {
      record(await call(server.baseUrl, method, path, { token: secret, body }));
    }
    record(await call(server.baseUrl, 'GET', `/api/v1/flags?token=${secret}`, { token: secret }));
    record(await call(server.baseUrl, 'GET', `/api/v1/flags?access_token=${secret}`));
    record(await call(server.baseUrl, 'GET', '/api/v1/flags', { headers: { authorization: `Bearer ${secret}garbage` } }));
    record(await call(server.baseUrl, 'GET', '/api/v1/flags', { headers: { authorization: `Token ${secret}` } }));
    record(await call(server.baseUrl, 'GET', '/api/v1/flags', { headers: { authorization: `Bearer ${secret}, Bearer ${secret}` } }));
    record(await call(server.baseUrl, 'OPTIONS', '/api/v1/flags', { headers: { authorization: `Bearer ${secret}` } }));
    record(await call(server.baseUrl, 'GET', `/v1/flags/${ids.flag}?targetingKey=${secret}`));
  }
  record(await call(server.baseUrl, 'POST', '/__test/flush'));
  t.equal(await server.stop(), 0, 'the server stops cleanly (activity and denials flushed)');

  // Console outputs other than creation: lists, activity, audit, mail, revocation, flag edits; json and human.
  const outputs: string[] = [];
  const commands = [
    ['token', 'list', ids.single],
    ['token', 'list', ids.multi],
    ['audit', ids.single],
    ['audit', ids.multi],
    ['mail', 'list'],
    ...created.map((c) => ['token', 'activity', c.id]),
    ['token', 'activity', world.tokenIds.read!],
    ['token', 'activity', world.tokenIds.write!],
    ['flag', 'tags', ids.flag, 'x,y'],
  ];
  for (const json of [true, false]) {
    const runs = await Promise.all(commands.map((args) => cli(dataDir, args, { json })));
    runs.forEach((r, i) => {
      t.equal(r.code, 0, `flagwire ${commands[i]!.join(' ')}${r.code === 0 ? '' : `: ${r.stdout}${r.stderr}`}`);
      outputs.push(r.stdout + r.stderr);
    });
  }
  const revoke = await cli(dataDir, ['token', 'revoke', created[2]!.id, '--as', ids.owner]);
  outputs.push(revoke.stdout + revoke.stderr);
  const audit = await cli(dataDir, ['audit', ids.single, '--limit', '1000']);
  outputs.push(audit.stdout);

  const fileBytes = readFileSync(dataFilePath(dataDir)).toString('latin1');
  const places: [string, string][] = [
    ['API responses', responses.join('\n')],
    ['server log', server.logs()],
    ['server stdout', server.output()],
    ['console outputs', outputs.join('\n')],
    ['data file bytes', fileBytes],
  ];
  let checks = 0;
  const leaks: string[] = [];
  for (const secret of secrets) {
    const body = secret.slice(3); // the 40 random characters, with or without the prefix
    for (const [place, text] of places) {
      checks++;
      if (text.includes(body)) leaks.push(`${secret.slice(0, 8)}… in ${place}`);
    }
    const inCreations = creations.filter((c) => c.includes(secret)).length;
    if (created.some((c) => c.secret === secret) || secret === newSecret) {
      t.equal(inCreations, 1, `${secret.slice(0, 8)}… shown by exactly one creation output`);
    }
  }
  t.comment(
    `secrets: ${secrets.length} secrets × ${places.length} places (${responses.length} API responses, ` +
      `${server.logs().split('\n').length} log lines at trace level, ${outputs.length} console outputs, the data file's ${fileBytes.length} bytes): ${checks} checks, ${leaks.length} leaks`,
  );
  t.same(leaks, [], 'no secret anywhere but its creation output');
  t.ok(
    live.every((s) => fileBytes.includes(hashSecret(s))),
    "the data file holds the secrets' SHA-256 (the check reads the right bytes)",
  );
  t.ok(
    responses.some((r) => r.startsWith('200')) && responses.some((r) => r.startsWith('401')) && responses.some((r) => r.startsWith('403')),
    'accepted and refused requests were made',
  );
  t.match(server.logs(), /flagwire stopped/, 'the server log was captured');
});

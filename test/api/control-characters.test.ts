// Issue 23, item 9 (a): a name with a control character (C0 including NUL, DEL, C1) is refused with the
// usual 400 envelope and changes nothing: flag names over the API, and organisation, user, project,
// audience, token and flag names through the CLI (the web console's API calls the same writer commands).
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { startWorldServer } from '../helpers/world-server.js';
import { FlagwireError } from '../../src/errors.js';
import { requireName } from '../../src/model/input-checks.js';

const kRule = 'must be a non-blank string of at most 200 characters, without control characters (U+0000-U+001F, U+007F-U+009F)';
/** C0 (NUL, BEL, ESC, US), DEL and C1 (NEL, CSI, APC): each alone in the middle of a name. */
const kControls = ['\u0000', '\u0007', '\u001b', '\u001f', '\u007f', '\u0085', '\u009b', '\u009f'];
const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

t.test('the Management API refuses a flag name with a control character, and creates nothing', async (t) => {
  const { server, world } = await startWorldServer(t);
  const auth = { authorization: `Bearer ${world.secrets.write}`, 'content-type': 'application/json' };
  const before = world.snapshot();
  for (const c of kControls) {
    const res = await fetch(`${server.baseUrl}/api/v1/flags`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `a${c}b` }) });
    const body = (await res.json()) as { error: string; detail: string; docs: string };
    t.equal(res.status, 400, `${hex(c)}: 400`);
    t.same(
      { error: body.error, detail: body.detail },
      { error: 'Invalid request', detail: `name ${kRule}` },
      `${hex(c)}: the usual envelope`,
    );
  }
  const ok = await fetch(`${server.baseUrl}/api/v1/flags`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Ünïcode 名前 ok' }),
  });
  t.equal(ok.status, 201, 'a name without control characters is still created');
  const created = (await ok.json()) as { id: string };
  const after = (await fetch(`${server.baseUrl}/api/v1/flags`, { headers: auth }).then((r) => r.json())) as {
    flags: { id: string; name: string }[];
  };
  t.same(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for exactly these characters
    after.flags.filter((f) => /[\u0000-\u001f\u007f-\u009f]/.test(f.name)),
    [],
    'no refused name was stored',
  );
  t.ok(after.flags.some((f) => f.id === created.id));
  t.not(world.snapshot(), before, 'the snapshot sees the one create');
});

t.test("the writer's one rule for names (requireName) refuses every control, at either end too", async (t) => {
  for (const c of kControls) {
    for (const name of [`a${c}b`, `${c}ab`, `ab${c}`]) {
      t.throws(
        () => requireName('name', name),
        new FlagwireError('INVALID_REQUEST', `name ${kRule}`),
        `${hex(c)} in ${JSON.stringify(name)}`,
      );
    }
  }
  t.equal(requireName('name', ' a name '), 'a name', 'a name without controls passes, trimmed');
});

t.test('the CLI refuses a name with a control character for every command that takes one, and changes nothing', async (t) => {
  // The console on a data dir, no server: the world written to it by this process.
  const dir = tempDataDir();
  const world = buildWorld(dir);
  t.teardown(() => world.store.close());
  const { ids } = world;
  const before = world.snapshot();
  // NUL cannot be passed in argv. Every command gets one of the other controls, in turn, so that each
  // command and each control is refused at least once (the rule itself is one function, requireName,
  // over every control in-process); a process per pair would cost a minute for nothing more.
  const controls = kControls.filter((x) => x !== '\u0000');
  const name = (i: number) => `a${controls[i % controls.length]}b`;
  const commands = [
    ['org', 'create', '--name', name(0)],
    ['user', 'create', '--email', 'x@a.test', '--name', name(1)],
    ['project', 'create', '--name', name(2), '--org', ids.orgA],
    ['audience', 'create', ids.single, '--name', name(3), '--rule', 'plan=beta'],
    ['audience', 'update', ids.audience, '--name', name(4)],
    ['token', 'create', ids.single, '--as', ids.owner, '--name', name(5), '--permission', 'read'],
    ['flag', 'create', ids.single, '--name', name(6)],
    ['flag', 'rename', ids.flag, name(7)],
  ];
  for (const [i, args] of commands.entries()) {
    const c = controls[i % controls.length]!;
    const r = await cli(dir, args);
    t.equal(r.code, 1, `${args.slice(0, 2).join(' ')} with ${hex(c)}: exit 1`);
    t.same(r.json, { error: 'Invalid request', detail: `name ${kRule}` }, `${args.slice(0, 2).join(' ')} with ${hex(c)}: the API's text`);
  }
  t.equal(world.snapshot(), before, 'nothing was changed');
});

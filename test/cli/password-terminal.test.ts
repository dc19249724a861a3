// `flagwire user password` typed on a terminal: it asks on standard error, the terminal does not echo
// the password, Backspace erases, and the password set is the one typed. The terminal is a real
// pseudo-terminal made by util-linux's `script` (Debian's bsdutils, always installed).
import { spawn } from 'node:child_process';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { kCli, startTestServer } from '../helpers/server.js';
import { kDemoOwner, signIn } from '../helpers/web-console.js';
import { plain } from '../helpers/plain-process.js';

/** Runs `command` on a pseudo-terminal; `type` is sent once `prompt` has been shown. Everything the terminal showed, and the exit code. */
function onTerminal(command: string, prompt: string, type: string): Promise<{ code: number; shown: string }> {
  const child = spawn(...plain('script', ['-qefc', command, '/dev/null']), { stdio: ['pipe', 'pipe', 'pipe'] });
  let shown = '';
  let typed = false;
  const onData = (d: Buffer) => {
    shown += d.toString();
    if (!typed && shown.includes(prompt)) {
      typed = true;
      child.stdin.write(type);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      child.stdin.destroy();
      resolve({ code: code ?? -1, shown });
    }),
  );
}

t.test('a password typed on a terminal is not echoed, and is the one set', async (t) => {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const owner = (await cli(server.dataDir, ['user', 'list'])).json.users.find((u: { email: string }) => u.email === kDemoOwner);
  // "typo" then four Backspaces (DEL, as a terminal sends it) then Enter.
  const run = await onTerminal(
    `env -u NODE_OPTIONS '${process.execPath}' '${kCli}' user password ${owner.id} --data '${server.dataDir}'`,
    'Password: ',
    'staple battery horsetypo\x7f\x7f\x7f\x7f\r',
  );
  t.equal(run.code, 0, run.shown);
  t.notMatch(run.shown, /staple|battery|typo/, 'nothing typed was shown');
  await t.resolves(signIn(server.baseUrl, kDemoOwner, 'staple battery horse'), 'the password set is the one typed, less what was erased');
});

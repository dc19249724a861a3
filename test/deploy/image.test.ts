// The OCI image (scripts/image.sh; docs/deployment.md: An image), built with Debian's buildah and run as
// its configuration says (entrypoint, command, user, data volume): the demo answers /health and an
// evaluation, the image's own health check passes, the server is not root and cannot write its code,
// V8's code cache is baked in, and SIGTERM stops it cleanly.
import { execFile, spawn } from 'node:child_process';
import { chownSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { freePort } from '../helpers/free-port.js';
import { call } from '../helpers/http.js';
import { scratchDir } from '../helpers/scratch-dir.js';

const run = promisify(execFile);

/** Every process below `pid` (its children, theirs, ...), read from /proc: the container's, under buildah's. */
function descendants(pid: number): number[] {
  const children = (p: number) =>
    readFileSync(`/proc/${p}/task/${p}/children`, 'utf8')
      .split(' ')
      .filter((c) => c !== '')
      .map(Number);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    let next: number[] = [];
    try {
      next = children(queue.shift()!);
    } catch {
      // Ended meanwhile.
    }
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/** The command line of `pid`, its arguments joined by spaces ('' once it ended). */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
const kScript = fileURLToPath(new URL('../../../scripts/image.sh', import.meta.url));
const kEnv = { ...process.env, BUILDAH_ISOLATION: 'chroot' };
const tag = `localhost/flagwire-test:${process.pid}`;

/** buildah's answer to `args`. */
async function buildah(...args: string[]): Promise<string> {
  return (await run('buildah', args, { env: kEnv, maxBuffer: 16 << 20 })).stdout.trim();
}

// The bound only catches a hang: a production install and the image's commit.
t.setTimeout(900_000);
const built = (await run(kScript, [tag], { env: kEnv, maxBuffer: 16 << 20 })).stdout;
t.teardown(() => buildah('rmi', '--force', tag).catch(() => undefined));

interface ImageConfig {
  User: string;
  Entrypoint: string[];
  Cmd: string[];
  Env: string[];
  Volumes: Record<string, unknown>;
  Healthcheck?: { Test: string[] };
}
const inspected = JSON.parse(await buildah('inspect', '--type', 'image', tag)) as { Docker: { config: ImageConfig } };
const config = inspected.Docker.config;

t.test('the image is configured to run as a platform expects', async (t) => {
  t.match(built, /built .+: \d/, `says its size: ${built.trim()}`);
  t.equal(config.User, '10001:10001', 'not root');
  t.same(config.Entrypoint, ['/usr/local/bin/node', '/app/dist/src/cli/flagwire.cjs']);
  t.same(config.Cmd, ['serve']);
  t.ok('/data' in config.Volumes, 'the data directory is a volume');
  t.ok(config.Env.includes('FLAGWIRE_DATA=/data'));
  t.equal(config.Healthcheck?.Test[0], 'CMD', 'a health check');
});

t.test('runs the demo as its configuration says: /health, an evaluation, its health check, SIGTERM', async (t) => {
  const ctr = await buildah('from', tag);
  t.teardown(() => buildah('rm', ctr).catch(() => undefined));
  const data = scratchDir('flagwire-image-');
  chownSync(data, 10001, 10001);
  const port = await freePort();
  const started = performance.now();
  // As a runtime runs it: the image's user, entrypoint and command, the volume mounted; the demo and the
  // port (the host's network: chroot isolation) added as a user would.
  const server = spawn(
    'buildah',
    [
      'run',
      '--user',
      config.User,
      '--volume',
      `${data}:/data`,
      '--env',
      `FLAGWIRE_PORT=${port}`,
      '--env',
      'FLAGWIRE_SYNC_PORT=0',
      ctr,
      '--',
      ...config.Entrypoint,
      ...config.Cmd,
      '--demo',
    ],
    { env: kEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  server.stdout.on('data', (d: Buffer) => (output += d.toString()));
  server.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
  // The container's processes first: killing buildah alone leaves them running, reparented.
  t.teardown(() => {
    for (const pid of server.pid === undefined ? [] : descendants(server.pid).reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Ended meanwhile.
      }
    }
    server.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    const health = await call(base, 'GET', '/health').catch(() => null);
    if (health?.status === 200) break;
    if (server.exitCode !== null || performance.now() - started > 60_000) t.fail(`no /health: ${output}`);
    await sleep(50);
  }
  t.comment(`start to /health: ${Math.round(performance.now() - started)} ms`);
  // The demo's lines may reach the pipe after /health first answers (a busy machine): waited for.
  const evaluationIn = () => /curl -s "http:\/\/[^/]+(\/v1\/flags\/flg_\w+\?targetingKey=user-42)"/.exec(output)?.[1];
  const printedBy = performance.now() + 60_000;
  while (evaluationIn() === undefined && server.exitCode === null && performance.now() < printedBy) await sleep(50);
  const evaluation = evaluationIn();
  t.ok(evaluation, 'the demo prints an evaluation', { output });
  const answer = await call(base, 'GET', evaluation!);
  t.equal(answer.status, 200, 'evaluated');
  t.type(answer.json.enabled, 'boolean');

  const check = config.Healthcheck!.Test.slice(1);
  const healthy = await run('buildah', ['run', '--user', config.User, '--env', `FLAGWIRE_PORT=${port}`, ctr, '--', ...check], {
    env: kEnv,
  }).then(
    () => 0,
    (err: { code: number }) => err.code,
  );
  t.equal(healthy, 0, "the image's health check passes");
  const probe = 'fs.accessSync("/app/dist/src/cli/flagwire.cjs", fs.constants.W_OK)';
  const writes = await run('buildah', ['run', '--user', config.User, ctr, '--', '/usr/local/bin/node', '-e', probe], { env: kEnv }).then(
    () => 'writable',
    () => 'refused',
  );
  t.equal(writes, 'refused', 'the server cannot write its code');
  const caches = await buildah(
    'run',
    ctr,
    '--',
    '/usr/local/bin/node',
    '-e',
    'console.log(require("fs").readdirSync("/app/dist/src/cli/bundle/serve").join(" "))',
  );
  t.match(caches, /\.v8-cache/, "V8's code cache is baked in");

  // This container's server: below its buildah, whatever else runs on the machine.
  const node = descendants(server.pid!).filter((pid) =>
    commandLine(pid).startsWith('/usr/local/bin/node /app/dist/src/cli/flagwire.cjs serve --demo'),
  );
  t.equal(node.length, 1, 'one server process');
  t.match(readFileSync(`/proc/${node[0]}/status`, 'utf8'), /^Uid:\t10001\t/m, "runs as the image's user");
  process.kill(Number(node[0]), 'SIGTERM');
  t.equal(await exited, 0, 'SIGTERM stops it cleanly');
  t.match(output, /flagwire stopped/);
});

// `npx flagwire …` in a clone, as the README and docs/cli.md call the console, with the real npx and an
// empty npm cache (a user's first command): it runs the build through node_modules/.bin/flagwire, as
// any later command does. It must not install the clone into npx's cache (~/.npm/_npx), which ran the
// whole build before the command (21 s quiet, 64-81 s at load) and raced when two first commands ran at
// once (ENOENT on the cache's package.json); scripts/link-bin.mjs says why. Offline, so that a missing
// link cannot fall back to fetching a package of that name from the registry.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseOneObject } from '../helpers/cli.js';
import { plain } from '../helpers/plain-process.js';
import { tempDir } from '../helpers/scratch-dir.js';

const kRepo = fileURLToPath(new URL('../../../', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npx flagwire <args>` from the clone's root, with `cache` as npm's cache. */
function npx(cache: string, args: readonly string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_cache: cache,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  delete env.FLAGWIRE_DATA;
  return new Promise((resolve) => {
    // The bound only catches a hang.
    execFile(...plain('npx', ['flagwire', ...args]), { cwd: kRepo, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** What npx installed into the cache: its _npx folder's entries (none when it ran a local command). */
function installed(cache: string): string[] {
  const npxDir = join(cache, '_npx');
  return existsSync(npxDir) ? readdirSync(npxDir) : [];
}

t.test('the build links node_modules/.bin/flagwire to the command line it built', async (t) => {
  t.equal(realpathSync(join(kRepo, 'node_modules/.bin/flagwire')), realpathSync(join(kRepo, 'dist/src/cli/flagwire.cjs')));
});

t.test("a user's first command: the clone's build, nothing installed into npx's cache", async (t) => {
  const cache = tempDir(t, 'flagwire-npm-cache-');
  const data = join(tempDir(t), 'data');
  const r = await npx(cache, ['org', 'create', '--name', 'Acme', '--plan', 'teams', '--json', '--data', data]);
  t.equal(r.code, 0, `exit 0 (${r.stderr.trim()})`);
  t.match(parseOneObject(r.stdout), { name: 'Acme', plan: 'teams' }, 'the command ran');
  t.strictSame(installed(cache), [], 'npx installed nothing into its cache');
});

t.test('two first commands at once, each with an empty cache and the same one', async (t) => {
  const cache = tempDir(t, 'flagwire-npm-cache-');
  const dir = tempDir(t);
  const runs = await Promise.all(
    ['a', 'b'].map((name) => npx(cache, ['org', 'create', '--name', name, '--json', '--data', join(dir, name)])),
  );
  runs.forEach((r, i) => {
    t.equal(r.code, 0, `command ${i + 1}: exit 0 (${r.stderr.trim()})`);
    t.equal(parseOneObject(r.stdout).name, ['a', 'b'][i], `command ${i + 1} ran`);
  });
  t.strictSame(installed(cache), [], 'npx installed nothing into its cache');
});

// scripts/build-inputs.mjs, which lets `npm test` skip a build of a tree dist/ already holds: on a small
// project of its own in a scratch dir (its tsconfig.json, a source, the output, a package.json whose build
// only leaves a mark), whether a build is needed as the tree changes, and that `ensure` builds exactly
// when one is.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { scratchDir } from '../helpers/scratch-dir.js';

const kScript = fileURLToPath(new URL('../../../scripts/build-inputs.mjs', import.meta.url));
const { buildNeeded } = (await import(kScript)) as { buildNeeded(root: string): string | null };

/** A project that builds with `npm run build`: it leaves `built` and records its inputs, as Flagwire's does. */
function project(): string {
  const root = scratchDir('flagwire-build-inputs-');
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'dist/src'), { recursive: true });
  mkdirSync(join(root, 'node_modules'));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ include: ['src'] }));
  const build = `node -e "require('fs').writeFileSync('built', '')" && node ${JSON.stringify(kScript)} write`;
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'p', private: true, scripts: { build } }));
  writeFileSync(join(root, 'package-lock.json'), '{}');
  writeFileSync(join(root, 'node_modules/.package-lock.json'), '{"packages":{}}');
  writeFileSync(join(root, 'src/a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'dist/src/a.js'), 'export const a = 1;\n');
  return root;
}

const run = (root: string, command: string) => execFileSync(process.execPath, [kScript, command], { cwd: root, encoding: 'utf8' });

t.test('a build is needed until one is recorded, and again when a source, a manifest or what npm installed changes', async (t) => {
  const root = project();
  t.equal(buildNeeded(root), 'no finished build is recorded');
  run(root, 'write');
  t.equal(buildNeeded(root), null, 'recorded: dist/ is the build of this tree');

  writeFileSync(join(root, 'src/a.ts'), 'export const a = 2;\n');
  t.match(buildNeeded(root), /changed since the last build/, 'a source edited');
  writeFileSync(join(root, 'src/a.ts'), 'export const a = 1;\n');
  t.equal(buildNeeded(root), null, 'the edit undone: the same bytes, no build (times are not read)');

  writeFileSync(join(root, 'src/b.ts'), 'export const b = 1;\n');
  t.match(buildNeeded(root), /changed since the last build/, 'a source added');
  rmSync(join(root, 'src/b.ts'));
  t.equal(buildNeeded(root), null);

  writeFileSync(join(root, 'node_modules/.package-lock.json'), '{"packages":{"node_modules/x":{}}}');
  t.match(buildNeeded(root), /changed since the last build/, 'another install');
  writeFileSync(join(root, 'node_modules/.package-lock.json'), '{"packages":{}}');
  writeFileSync(join(root, 'package.json'), `${JSON.stringify({ name: 'p', private: true })}\n`);
  t.match(buildNeeded(root), /changed since the last build/, 'the manifest edited');
});

t.test(
  "a source's output removed or written since the record needs a build, and a build begun and not finished records none",
  async (t) => {
    const root = project();
    run(root, 'write');
    rmSync(join(root, 'dist/src/a.js'));
    t.equal(buildNeeded(root), 'dist/src/a.js is missing');
    writeFileSync(join(root, 'dist/src/a.js'), 'export const a = 1;\n');
    t.equal(buildNeeded(root), 'dist/src/a.js was written after the last build', 'put back by hand, after the record');
    run(root, 'write');
    t.equal(buildNeeded(root), null);

    // tsc run alone on an edit, the edit then undone: the sources' digest matches the record again, but the
    // output is the edit's, written after it.
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, 'dist/src/a.js'), later, later);
    t.equal(buildNeeded(root), 'dist/src/a.js was written after the last build');
    // A build writes its outputs, then the record.
    writeFileSync(join(root, 'dist/src/a.js'), 'export const a = 1;\n');
    run(root, 'write');
    t.equal(buildNeeded(root), null, 'a build records it again');
    run(root, 'forget');
    t.equal(buildNeeded(root), 'no finished build is recorded', 'the first step of a build takes the record away');
  },
);

t.test("forget also forgets tsc's incremental state when a source's output is missing, so tsc emits it again", async (t) => {
  const root = project();
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ include: ['src'], compilerOptions: { tsBuildInfoFile: 'dist/.tsbuildinfo' } }),
  );
  writeFileSync(join(root, 'dist/.tsbuildinfo'), '{}');
  run(root, 'forget');
  t.ok(existsSync(join(root, 'dist/.tsbuildinfo')), 'every output there: the state is kept (the build stays incremental)');
  rmSync(join(root, 'dist/src/a.js'));
  t.match(run(root, 'forget'), /dist\/src\/a\.js is missing: tsc emits every file/);
  t.notOk(existsSync(join(root, 'dist/.tsbuildinfo')), 'the state is gone');
});

t.test('ensure runs the build when one is needed, and only then', async (t) => {
  const root = project();
  t.match(run(root, 'ensure'), /^build: no finished build is recorded/);
  t.ok(existsSync(join(root, 'built')), 'built');
  t.equal(buildNeeded(root), null, 'the build recorded its inputs');

  rmSync(join(root, 'built'));
  t.match(run(root, 'ensure'), /not built again/);
  t.notOk(existsSync(join(root, 'built')), 'nothing changed: no build');

  writeFileSync(join(root, 'src/a.ts'), 'export const a = 3;\n');
  run(root, 'ensure');
  t.ok(existsSync(join(root, 'built')), 'a source changed: built again');
});

// Whether dist/ is the build of the tree as it is now, so that `npm test` builds only when it is not.
//
// `npm run build` writes, as its last step, a digest of everything it reads (DIST/.build-inputs): the
// folders tsc compiles (tsconfig.json's include, which holds every script and bundle source too), the
// compiler's configuration, the package manifests, what npm installed (node_modules/.package-lock.json,
// which npm rewrites on every install), and Node's version. It removes that file as its first step, so a
// build that fails midway is never taken for a finished one. `npm test`'s pretest then builds only when
// the digest of the tree differs from it, or when a source's output is missing (removed by hand) or was
// written after it (tsc run alone).
//
// Why: `npm ci` builds (the prepare script), and CI's `npm test` right after built the same tree again,
// tens of seconds on the 2-core machine (tsc's incremental check of every file most of them) for
// outputs it already had. The digest reads the sources' bytes, not their times, so a checkout that moves
// times only, or an edit undone, needs no build, and an edit within the same second is never missed.
//
// `forget` also forgets tsc's incremental state (tsconfig.json's tsBuildInfoFile) when a source's output
// is missing: an incremental tsc (and tsc -b) trusts that state, so an output deleted by hand with its
// source unchanged would never be emitted again; this build then emits every file.
//
// Run: node scripts/build-inputs.mjs forget | write | ensure
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const kConfigFile = 'tsconfig.json';
/** Files beside the compiled folders that the build reads or that decide what it makes. */
const kInputFiles = ['package.json', 'package-lock.json', kConfigFile, 'node_modules/.package-lock.json'];
const kDigestFile = join('dist', '.build-inputs');

/** The folders tsc compiles, as `root`'s tsconfig.json includes them. */
function sourceDirs(root) {
  return JSON.parse(readFileSync(join(root, kConfigFile), 'utf8')).include;
}

/** Every file under `dir`, in one order (by name, folder by folder). */
function* filesUnder(dir) {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (entry.isFile()) yield path;
  }
}

/** The output in dist/ of each TypeScript source of `root`'s compiled folders. */
export function* compiledOutputs(root) {
  for (const dir of sourceDirs(root))
    for (const path of filesUnder(join(root, dir)))
      if (path.endsWith('.ts') && !path.endsWith('.d.ts')) yield join(root, 'dist', relative(root, path)).replace(/\.ts$/, '.js');
}

/** The digest of what a build of `root` reads: every file's path and bytes, in one order. */
export function inputsDigest(root) {
  const hash = createHash('sha256').update(`node ${process.version}\0`);
  const add = (path) => {
    hash.update(`${relative(root, path)}\0`);
    hash.update(existsSync(path) ? readFileSync(path) : '(absent)');
    hash.update('\0');
  };
  for (const dir of sourceDirs(root)) for (const path of filesUnder(join(root, dir))) add(path);
  for (const file of kInputFiles) add(join(root, file));
  return hash.digest('hex');
}

/**
 * Why `root` needs a build, or null when dist/ is the build of its tree as it is. An output written
 * after the record was not made by the build it records: tsc run alone on an edit since undone would
 * otherwise leave the edit's output behind sources whose digest matches again.
 */
export function buildNeeded(root) {
  const record = join(root, kDigestFile);
  let built;
  let recordedAt;
  try {
    built = readFileSync(record, 'utf8').trim();
    recordedAt = statSync(record).mtimeMs;
  } catch {
    return 'no finished build is recorded';
  }
  if (built !== inputsDigest(root)) return 'the sources or the installed packages changed since the last build';
  for (const output of compiledOutputs(root)) {
    const writtenAt = mtimeMs(output);
    if (writtenAt === null) return `${relative(root, output)} is missing`;
    if (writtenAt > recordedAt) return `${relative(root, output)} was written after the last build`;
  }
  return null;
}

function mtimeMs(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.cwd();
  const command = process.argv[2];
  if (command === 'forget') {
    rmSync(join(root, kDigestFile), { force: true });
    const stateFile = JSON.parse(readFileSync(join(root, kConfigFile), 'utf8')).compilerOptions?.tsBuildInfoFile;
    const state = stateFile === undefined ? undefined : join(root, stateFile);
    const missing = state !== undefined && existsSync(state) ? [...compiledOutputs(root)].find((output) => !existsSync(output)) : undefined;
    if (missing !== undefined) {
      console.log(`${relative(root, missing)} is missing: tsc emits every file this build`);
      rmSync(state);
    }
  } else if (command === 'write') {
    writeFileSync(join(root, kDigestFile), `${inputsDigest(root)}\n`);
  } else if (command === 'ensure') {
    const why = buildNeeded(root);
    if (why === null) {
      console.log('build: dist/ is the build of this tree (scripts/build-inputs.mjs); not built again');
    } else {
      console.log(`build: ${why}`);
      const { status } = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
      process.exitCode = status ?? 1;
    }
  } else {
    console.error('usage: node scripts/build-inputs.mjs forget | write | ensure');
    process.exitCode = 2;
  }
}

// What the command line's entry (src/cli/cli.ts) reads so that a command loads only what it runs, derived
// from the build's own output by `npm run build` after tsc (and after bundle-typebox.mjs, whose single
// file the bundle takes in):
//   dist/src/cli/flagwire.cjs: the bin, the entry and what it imports at once as one CommonJS file
//     (buildBin, below), so help and usage errors start no ES module loader;
//   dist/src/cli/commands.json: every command's shape (CommandSpec: words, usage, options, help), from
//     the commands the capabilities declare, so help, the version and usage errors need no capability;
//   dist/src/cli/bundle/main.js: main.js with every source module it imports in one script V8 caches
//     (scripts/script-bundle.mjs), what it imports only on use (serve's server, a PostgreSQL client) run
//     at its first import; the packages and built-in modules those import are required or imported there
//     (kRequiredOnUse), so a command other than serve never loads uWebSockets.js, piscina, pino or pg;
//     the npm packages stay apart, as Node loads them. A module's import.meta.url is rewritten to the URL
//     of its own file, so what it finds next to itself (worker files, package.json) is found as before;
//   dist/src/cli/bundle/serve/main.js: the same, in one file, for serve (a long-running command), which
//     loads all of it;
//   dist/src/cli/bundle/writer/actor.js, eval/worker.js, events/events-thread.js and
//     frontend/frontend-thread.js: the writer thread's, an evaluation worker's, the events thread's and a
//     front-end thread's entries bundled the same way, which the bundle above starts instead of the
//     modules (a node's writer thread loaded some 190 of them, an evaluation worker 75: bench/RESULTS.md,
//     issue 57 item 2).
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import {
  kBundleDir,
  kRequireBanner,
  kScriptRunner,
  kStorePackages,
  kStorePackagesModule,
  kStorePackagesName,
  kStorePackagesTwin,
  kUwsTwin,
  namedExports,
  specifierFrom,
  storePackageSource,
  stubPath,
  writeCommonJsRunner,
  writeScriptBundle,
} from './script-bundle.mjs';

const kCliDir = new URL('../dist/src/cli/', import.meta.url);

const { kCliCommands } = await import(new URL('commands.js', kCliDir).href);
// longRunning too: the entry runs a long-running command (serve) from its own bundle.
const kShapeKeys = ['name', 'usage', 'summary', 'positionals', 'argumentHelp', 'options', 'notes', 'longRunning'];
const shapes = kCliCommands.map((command) =>
  Object.fromEntries(kShapeKeys.filter((k) => command[k] !== undefined).map((k) => [k, command[k]])),
);
writeFileSync(new URL('commands.json', kCliDir), `${JSON.stringify(shapes)}\n`);

const kSrcDir = fileURLToPath(new URL('..', kCliDir));
/**
 * The evaluators route sets name (`workerModule: new URL('./ofrep-evaluator.js', import.meta.url).href`,
 * src/evaluation/engine/routes.ts), by path under dist/src: read from the modules that declare them, so a new
 * route set's evaluator is bundled as it is declared.
 */
function declaredEvaluators(dir = kSrcDir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === kBundleDir.replace(/\/$/, '') ? [] : declaredEvaluators(path);
    if (!entry.name.endsWith('.js')) return [];
    return [...readFileSync(path, 'utf8').matchAll(/workerModule: new URL\('(\.{1,2}\/[^']+\.js)', import\.meta\.url\)/g)].map(([, spec]) =>
      relative(kSrcDir, join(dir, spec)),
    );
  });
}
/**
 * The entries a node starts by URL, bundled (each by its path under dist/src, with its bundle's): its
 * threads' and the start-up probe's process. A source module that starts one (`new Worker(new
 * URL('../writer/thread/actor.js', import.meta.url))`) starts its bundle instead, when it runs from a
 * bundle itself. A process that runs the modules unbundled (a test's in-process server, a test's
 * capability) starts them unbundled as before.
 */
const kStartedBundles = [
  { dir: 'writer', entries: ['writer/thread/actor.js'] },
  // An evaluation worker imports its route sets' evaluators by URL (src/evaluation/engine/worker.ts): they are
  // entries of its bundle, so that they and the worker share one copy of each module (the engine).
  { dir: 'eval', entries: ['evaluation/engine/worker.js', ...declaredEvaluators()] },
  // Started by a front end with its first batch of events or statistics read, and by the release plans'
  // scheduler with its first experiment guard's reading (src/events/event-counter.ts).
  { dir: 'events', entries: ['events/events-thread.js'] },
  // A front-end thread (FLAGWIRE_HTTP_THREADS > 1, src/server/frontend-threads.ts): from its modules,
  // each thread's start cost about 0.9 CPU s more, its evaluation workers' included (started from them,
  // they ran unbundled too).
  { dir: 'frontend', entries: ['server/frontend-thread.js'] },
  // The process that reads a data file through at a node's start (src/store/verify.ts), so that it takes
  // lmdb from the store packages' script and starts no ES module loader.
  { dir: 'probe', entries: ['store/probe.js'] },
];
/**
 * Each bundled entry's path under dist/src, and its bundle's under the command line's: a thread or the
 * probe starts from its bundle's CommonJS module (kStartedStub); an entry imported by URL keeps its name, by which the
 * script lists it (importedByUrl).
 */
const kBundledEntries = new Map(
  kStartedBundles.flatMap(({ dir, entries }) =>
    entries.map((entry, i) => [entry, i === 0 ? stubPath(dir, basename(entry, '.js'), 'commonjs') : join(dir, basename(entry))]),
  ),
);

/**
 * Each source module's import.meta.url, as the URL of its own file relative to the bundle's (a bundle is
 * one folder), and a URL it makes of a thread's entry, as that entry's bundle.
 */
function ownUrls(path, text, outdir) {
  if (!text.includes('import.meta.url')) return text;
  const threads = text.replace(/new URL\('(\.{1,2}\/[^']+\.js)', import\.meta\.url\)/g, (whole, spec) => {
    const bundled = kBundledEntries.get(relative(kSrcDir, join(dirname(path), spec)));
    return bundled === undefined
      ? whole
      : `new URL(${JSON.stringify(relative(dirname(path), join(kBundleDir, bundled)))}, import.meta.url)`;
  });
  const own = JSON.stringify(relative(outdir, path));
  return threads.replaceAll('import.meta.url', `new URL(${own}, import.meta.url).href`);
}

/** The command line's entry, and the bin made of it (buildBin, below). */
const kEntry = join(kSrcDir, 'cli/cli.js');
const kBin = join(kSrcDir, 'cli/flagwire.cjs');
/** What `entry` loads at once: its static imports and theirs, not what it imports on use (main.js). */
async function loadedAtOnce(entry) {
  const { inputs } = (
    await build({
      entryPoints: [entry],
      bundle: true,
      packages: 'external',
      format: 'esm',
      platform: 'node',
      write: false,
      metafile: true,
      logLevel: 'silent',
    })
  ).metafile;
  const modules = new Set();
  const toRead = [relative(process.cwd(), entry)];
  for (let from = toRead.pop(); from !== undefined; from = toRead.pop()) {
    for (const { path, kind, external } of inputs[from].imports) {
      if (kind !== 'import-statement' || external || modules.has(resolve(path))) continue;
      modules.add(resolve(path));
      toRead.push(path);
    }
  }
  return modules;
}
/**
 * The modules the bin has loaded before serve's bundle: serve's settings check (src/cli/serve-config.ts)
 * and what it imports, from their own files (the bin imports the check on use), read from esbuild's own
 * reading of it. serve's bundle imports these files rather than hold copies of them, so a node compiles
 * and runs each once: a copy in the bundle was a second module (TypeBox compiled and run twice in every
 * node's main thread, issue 57 item 2; config.ts's check compiled twice).
 */
const kServeCheck = join(kSrcDir, 'cli/serve-config.js');
const kServeEntryModules = new Set([kServeCheck, ...(await loadedAtOnce(kServeCheck))]);
/** The modules in `shared`, imported from their own files by a bundle made in `outdir`. */
const entryShared = (outdir, shared) => ({
  name: 'entry-shared',
  setup(b) {
    b.onResolve({ filter: /^\.{1,2}\// }, (args) => {
      const path = join(args.resolveDir, args.path);
      return shared.has(path) ? { path: specifierFrom(outdir, path), external: true } : undefined;
    });
  },
});

/**
 * The packages a bundle takes apart from its own modules, as CommonJS: lmdb and msgpackr from the store
 * packages' script (kStorePackages, below), pino and piscina from a file each (kOneFile). Their CommonJS builds, one
 * file each, not their ES modules (lmdb's entry and the modules it imports): less CPU per load, since
 * Node's ES module loader stays out. A thread never holds two copies of one.
 */
const kRequired = ['lmdb', 'msgpackr', 'pino', 'piscina'];
/** A regular expression's source that matches `text` as written (esbuild's filters are regular expressions). */
const literally = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const kRequire = createRequire(new URL('../package.json', import.meta.url));
/**
 * pino and piscina, which serve's main thread and each front-end thread load, required from one CommonJS
 * file each of their modules and their packages' (bundle/pino.cjs, piscina.cjs, made below): Node resolved,
 * read and compiled pino's files, and piscina's, one by one, about twice the CPU of one file each.
 * Flagwire logs to a destination
 * (src/server/logger.ts), never through a transport, the one part of pino that looks for files beside
 * its own (a transport's worker); piscina's worker file is found from piscina's own place (kPackagePaths).
 */
const kOneFile = new Map([
  [
    'pino',
    {
      outfile: join(kBundleDir, 'pino.cjs'),
      // Its transports' workers, started from files beside thread-stream's and pino's own: never run.
      unrun: [/^node_modules\/thread-stream\/index\.js$/, /^node_modules\/pino\/lib\/transport\.js$/],
    },
  ],
  ['piscina', { outfile: join(kBundleDir, 'piscina.cjs'), unrun: [] }],
]);
/**
 * What the packages find beside their own files, in a file made of them: lmdb's and msgpackr's own paths
 * (lmdb's native addon, compression dictionary and `require` are found from its), msgpackr-extract's
 * folder (its addon) and piscina's (its worker's file), each resolved where the file runs, as Node
 * resolved them for the packages' own files.
 */
const kPackagePaths = [
  { file: /\/lmdb\/dist\/index\.cjs$/, name: '__filename', path: 'require.resolve("lmdb")' },
  { file: /\/msgpackr\/dist\/node\.cjs$/, name: '__filename', path: 'require.resolve("msgpackr")' },
  {
    file: /\/msgpackr-extract\/index\.js$/,
    name: '__dirname',
    path: 'require("node:path").dirname(require("node:module").createRequire(require.resolve("msgpackr")).resolve("msgpackr-extract"))',
  },
  // A CommonJS file of its own (kOneFile): a require made for it, since esbuild reads `require.resolve`'s
  // name there as a module to bundle.
  {
    file: /\/piscina\/dist\/index\.js$/,
    name: '__dirname',
    path: 'require("node:path").dirname(require("node:module").createRequire(__filename).resolve("piscina"))',
  },
];
const packagePaths = {
  name: 'package-paths',
  setup(b) {
    for (const { file, name, path } of kPackagePaths) {
      b.onLoad({ filter: file }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes(name)) throw new Error(`${args.path} no longer names ${name}: see kPackagePaths`);
        return { contents: text.replaceAll(name, `(${path})`), loader: 'js' };
      });
    }
  },
};
/**
 * detect-libc, which lmdb's loader asks which libc the machine has as lmdb loads, requires
 * node:child_process at its own load, for a last resort (running `getconf` and `ldd`) that a Linux
 * whose Node names its ELF interpreter never reaches. That load brings node:net, node:dgram and DNS
 * with it, into every thread that loads lmdb, so in each of a node's threads at every start
 * and in every store command. The store packages' copy requires it where that last resort runs.
 */
const kEagerChildProcess = "const childProcess = require('child_process');";
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onLoad({ filter: /[\\/]detect-libc[\\/]lib[\\/]detect-libc\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(kEagerChildProcess)) throw new Error(`${args.path} no longer says ${kEagerChildProcess}: see lazyChildProcess`);
      const lazy = "const childProcess = new Proxy({}, { get: (_, key) => require('child_process')[key] });";
      return { contents: text.replace(kEagerChildProcess, lazy), loader: 'js' };
    });
  },
};
/**
 * Fails the build where a bundle of packages (`js`) names `__filename` or `__dirname` that kPackagePaths
 * did not rewrite: a file of theirs that names its own place would name the bundle's instead. Each
 * package file's part is read apart (esbuild heads it with the file's path), so that `unrun`, the files
 * Flagwire never runs, can be set aside; so is the rewrites' own text (piscina's names its bundle's
 * `__filename`, the place it means).
 */
function checkOwnPlaces(js, bundle, unrun = []) {
  let text = js;
  for (const { path } of kPackagePaths) text = text.replaceAll(path, '');
  for (const part of text.split(/^(?=\/\/ node_modules\/)/m)) {
    const file = /^\/\/ (node_modules\/\S+)/.exec(part)?.[1] ?? 'its own code';
    const unknown = /\b__(filename|dirname)\b/.exec(part);
    if (unknown !== null && !unrun.some((pattern) => pattern.test(file)))
      throw new Error(`${bundle} names ${unknown[0]} in ${file}: add the file to kPackagePaths`);
  }
}

/**
 * The store packages (kStorePackages: lmdb and msgpackr), with the packages they require (the native
 * addons' loader, detect-libc, weak-lru-cache, ordered-binary), as one script V8 caches
 * (bundle/store-packages.script.js, scripts/script-bundle.mjs): every thread of a node (main, writer,
 * evaluation workers, events) and every store command loads them, and each compiled their 13 CommonJS
 * files afresh: in a worker thread, `require('lmdb')` and an open cost 38-42 CPU ms, the one file 28-30
 * and the cached script 17-18 (9 threads each, load 7). A thread takes both from the one script, so
 * lmdb's encoder and ours are one msgpackr.
 */
async function buildStorePackages() {
  const { outputFiles } = await build({
    stdin: {
      // Their CommonJS files, as `require` finds them (an import of the name would take their ES modules).
      contents: [
        ...kStorePackages.map((name) => `import * as ${name} from ${JSON.stringify(kRequire.resolve(name))};`),
        `export { ${kStorePackages.join(', ')} };`,
      ].join('\n'),
      resolveDir: kSrcDir,
      sourcefile: basename(kStorePackagesModule),
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outfile: kStorePackagesModule,
    write: false,
    sourcemap: true,
    logLevel: 'warning',
    // The packages' CommonJS require() built-in modules and their native addons, which an ES module has
    // only if it makes a require.
    banner: {
      js: kRequireBanner,
    },
    plugins: [packagePaths, lazyChildProcess],
  });
  checkOwnPlaces(outputFiles.find((file) => file.path.endsWith('.js')).text, "the store packages' bundle");
  // Both: the main thread imports the module; a thread started from CommonJS requires its twin (kStartedStub).
  writeScriptBundle(outputFiles, kStorePackagesName, kBundleDir, { stubs: ['module', 'commonjs'] });
}

function requiredModule(name, outdir) {
  if (kStorePackages.includes(name)) return storePackageSource(name, outdir);
  // A package whose exports are a class (piscina) names the rest as its static members, enumerable or not.
  const value = kRequire(name);
  const own =
    typeof value === 'function'
      ? Object.getOwnPropertyNames(value).filter((key) => !['length', 'name', 'prototype', 'arguments', 'caller'].includes(key))
      : Object.keys(value);
  const file = kOneFile.get(name)?.outfile;
  const spec = file === undefined ? name : specifierFrom(outdir, file);
  return [
    "import { createRequire } from 'node:module';",
    `const required = createRequire(import.meta.url)(${JSON.stringify(spec)});`,
    ...namedExports(own).map((key) => `export const ${key} = required.${key};`),
    'export default required;',
  ].join('\n');
}

/** The rewrites above, for a bundle made in `outdir`. */
const sourceRewrites = (outdir) => ({
  name: 'source-rewrites',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${kRequired.map(literally).join('|')})$`) }, (args) => ({
      path: args.path,
      namespace: 'flagwire-required',
    }));
    b.onLoad({ filter: /.*/, namespace: 'flagwire-required' }, (args) => ({ contents: requiredModule(args.path, outdir), loader: 'js' }));
    // The store packages' module (requiredModule), imported from its own file where the bundle runs.
    b.onResolve({ filter: new RegExp(`/${literally(basename(kStorePackagesModule))}$`), namespace: 'flagwire-required' }, (args) => ({
      path: args.path,
      external: true,
    }));
    b.onLoad({ filter: /\/dist\/src\/.*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const contents = ownUrls(args.path, text, outdir);
      return contents === text ? undefined : { contents, loader: 'js' };
    });
  },
});

/**
 * For the command line's bundle, one script (below): every package and built-in module its modules import
 * statically is required where the importing module runs, as lmdb's is (requiredModule), not imported
 * by the script's module at once. A module a command loads on use (serve's server, the capabilities'
 * routes: esbuild runs it at its first import) requires uWebSockets.js, piscina or node:http2 then, so a
 * command that never runs it never loads them, as when those modules were pieces of their own. A package
 * that cannot be required (an ES module only) is imported as before.
 */
const kRequiredOnUse = {
  name: 'required-on-use',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind !== 'import-statement' || args.namespace !== 'file' || args.path === 'node:module') return undefined;
      try {
        kRequire(args.path);
      } catch {
        return { path: args.path, namespace: 'flagwire-imported' };
      }
      // Made by sourceRewrites (requiredModule), which every bundle has.
      return { path: args.path, namespace: 'flagwire-required' };
    });
    // An ES module only (uWebSockets.js): imported where the importing module runs, awaited there.
    b.onLoad({ filter: /.*/, namespace: 'flagwire-imported' }, async (args) => {
      const names = namedExports(Object.keys(await import(args.path)));
      return {
        contents: [
          `const imported = await import(${JSON.stringify(args.path)});`,
          ...names.map((key) => `export const ${key} = imported.${key};`),
          'export default imported.default;',
        ].join('\n'),
        loader: 'js',
        resolveDir: kSrcDir,
      };
    });
  },
};

// The last build's files are removed first: a file no bundle is made into any more must not stay to be loaded.
rmSync(kBundleDir, { recursive: true, force: true });
await writeCommonJsRunner();
await buildStorePackages();
for (const [name, { outfile, unrun }] of kOneFile) {
  const { outputFiles } = await build({
    entryPoints: [kRequire.resolve(name)],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    outfile,
    write: false,
    logLevel: 'warning',
    plugins: [packagePaths],
  });
  checkOwnPlaces(outputFiles[0].text, `bundle/${basename(outfile)}`, unrun);
  mkdirSync(dirname(outfile), { recursive: true });
  writeFileSync(outfile, outputFiles[0].contents);
}
const kOptions = {
  bundle: true,
  packages: 'external',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
};
// The few modules the bin holds too (the argument parser, the error table: buildBin) are copies here: the
// bin is one CommonJS file, whose modules a bundle cannot import. The bin requires the bundle from its
// CommonJS module, so a command starts no ES module loader (issue 57, item 1), its store's packages from
// their twin. The ES module is the tests' in-process runs': it
// imports the store's packages from their ES module, as a test process's own modules do, so that the
// process holds one copy of lmdb (each stub runs the packages' script anew).
await scriptBundle(join(kSrcDir, 'cli/main.js'), 'main', kBundleDir, [sourceRewrites(kBundleDir), kRequiredOnUse], {
  stubs: ['module', 'commonjs'],
  twins: { [specifierFrom(kBundleDir, kStorePackagesModule)]: specifierFrom(kBundleDir, kStorePackagesTwin) },
});
/**
 * The entries a thread's entry imports by URL (an evaluation worker's evaluators): in its script too, the
 * script's `__fw.bundled` maps each one's URL (its bundled path, as the main thread names it) to its
 * exports, and the script's `import(...)` of that URL takes them from there (the stub's `import`). So a
 * worker and its evaluators share one copy of each module (the engine) as the pieces did. They are
 * listed before the entry runs, since the entry imports them as it starts.
 */
const kByUrlEntry = 'flagwire-by-url:entry';
const importedByUrl = (entry, modules) => ({
  name: 'imported-by-url',
  setup(b) {
    b.onResolve({ filter: /^flagwire-by-url:/ }, (args) => ({ path: args.path, namespace: 'flagwire-by-url' }));
    b.onLoad({ filter: /^flagwire-by-url:entry$/, namespace: 'flagwire-by-url' }, () => ({
      // The entry's exports (a piscina worker's handler is its default export) are the bundle's.
      contents: [
        "import 'flagwire-by-url:listed';",
        `export * from ${JSON.stringify(entry)};`,
        ...(/^export default |\bas default\b/m.test(readFileSync(entry, 'utf8'))
          ? [`export { default } from ${JSON.stringify(entry)};`]
          : []),
      ].join('\n'),
      loader: 'js',
      resolveDir: kSrcDir,
    }));
    b.onLoad({ filter: /^flagwire-by-url:listed$/, namespace: 'flagwire-by-url' }, () => ({
      contents: [
        ...modules.map((path, i) => `import * as m${i} from ${JSON.stringify(path)};`),
        `const listed = [${modules.map((path, i) => `[${JSON.stringify(`./${basename(path)}`)}, m${i}]`).join(', ')}];`,
        'for (const [name, exports] of listed) __fw.bundled.set(new URL(name, import.meta.url).href, exports);',
      ].join('\n'),
      loader: 'js',
      resolveDir: kSrcDir,
    }));
  },
});

/**
 * Bundles `entry` into `outdir` as `name.script.js` and what runs it (scripts/script-bundle.mjs): the
 * module `name.js`, or what `stub` says.
 */
async function scriptBundle(entry, name, outdir, plugins, stub) {
  const { outputFiles } = await build({
    ...kOptions,
    entryPoints: { [name]: entry },
    outdir,
    write: false,
    plugins,
  });
  writeScriptBundle(outputFiles, name, outdir, stub);
}
/**
 * A started bundle (a thread's, the probe's: kStartedBundles) runs from a CommonJS module, so that the
 * thread or process loads no ES module loader (some 8-10 ms of a worker thread's start, issue 57 item 2):
 * the store's packages, which its script imports on start, from their CommonJS twin (buildStorePackages),
 * and uWebSockets.js from its (writeUwsTwin).
 */
const kStartedStub = (outdir) => {
  return {
    stubs: ['commonjs'],
    twins: {
      [specifierFrom(outdir, kStorePackagesModule)]: specifierFrom(outdir, kStorePackagesTwin),
      'uWebSockets.js': specifierFrom(outdir, kUwsTwin),
    },
  };
};

/**
 * uWebSockets.js as CommonJS, for a front-end thread's start from CommonJS: the package (uws-pack) is an ES
 * module only, which requires its native addon from its own folder by platform, architecture and Node's
 * ABI. The twin requires that addon, found where Node would find the package; the build checks that each
 * of the package's exports is the twin's own (one addon, one object in a process).
 */
async function writeUwsTwin() {
  writeFileSync(
    kUwsTwin,
    [
      '// Made by scripts/build-cli.mjs (writeUwsTwin): uWebSockets.js, an ES module only, as CommonJS, for a thread',
      "// started from CommonJS: the package's native addon, required as the package requires it.",
      "'use strict';",
      "const { existsSync } = require('node:fs');",
      "const { join } = require('node:path');",
      "const addon = ['uws', process.platform, process.arch, process.versions.modules].join('_') + '.node';",
      "const found = require.resolve.paths('uWebSockets.js').map((dir) => join(dir, 'uWebSockets.js', 'dist', 'bin', addon)).find(existsSync);",
      "if (found === undefined) throw new Error('uWebSockets.js has no ' + addon + ' for this platform and Node.js');",
      'module.exports = require(found);',
      '',
    ].join('\n'),
  );
  const twin = kRequire(kUwsTwin);
  const differs = Object.entries(await import('uWebSockets.js')).find(([name, value]) => twin[name] !== value);
  if (differs !== undefined) throw new Error(`${kUwsTwin} is not the package's own addon: its ${differs[0]} is another`);
}

// serve loads the server, every route and every command: one file, no pieces. Cut into pieces as above,
// its main thread spent more CPU before /health (issue 57 item 2). What it imports on use is in the file but runs on use; only the npm packages that some module
// of it imports statically are loaded at once, and those are the server's (uWebSockets.js, piscina, pino).
const kServeDir = join(kBundleDir, 'serve');
await scriptBundle(join(kSrcDir, 'cli/main.js'), 'main', kServeDir, [
  entryShared(kServeDir, kServeEntryModules),
  sourceRewrites(kServeDir),
]);
await writeUwsTwin();
for (const { dir, entries } of kStartedBundles) {
  const outdir = join(kBundleDir, dir);
  const [entry, ...byUrl] = entries.map((path) => join(kSrcDir, path));
  const stub = kStartedStub(outdir);
  if (byUrl.length === 0) await scriptBundle(entry, basename(entry, '.js'), outdir, [sourceRewrites(outdir)], stub);
  else await scriptBundle(kByUrlEntry, basename(entry, '.js'), outdir, [sourceRewrites(outdir), importedByUrl(entry, byUrl)], stub);
}
/**
 * The bin (`npx flagwire`, `npm start`): the entry and what it imports at once (the commands' shapes'
 * reader, the argument parser, the error table), one CommonJS file beside the entry, so that its
 * relative URLs (commands.json, the bundles, serve's settings check, package.json) name the same files.
 * Node runs a CommonJS main module without starting its ES module loader, which help and usage errors
 * then never need: `--help` costs least past a bare `node -e 0` this way, less than as one ES module and
 * far less than as several. What it imports on use (every `import()` of it: serve's settings
 * check, from its own files as kServeEntryModules says, the bundles, and main.js for a process given a
 * test's capability) stays apart, read from the entry itself rather than listed here.
 */
const onUseApart = {
  name: 'on-use-apart',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined));
  },
};
async function buildBin() {
  await build({
    entryPoints: [kEntry],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outfile: kBin,
    sourcemap: true,
    logLevel: 'warning',
    // CommonJS has no import.meta: each module's URL is made from the file's own (sourceRewrites).
    define: { 'import.meta.url': 'flagwireBinUrl' },
    banner: { js: "const flagwireBinUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [onUseApart, sourceRewrites(dirname(kBin))],
  });
  // Run by its link (scripts/link-bin.mjs): executable, as tsc does not make its own outputs.
  chmodSync(kBin, 0o755);
}
await buildBin();

// The modules the bin runs outside the bundles (itself; for serve, its settings check too:
// kServeEntryModules above, and what runs the scripts, which their modules import: asScript), by path
// under dist/src, for the tests that check a command or a node runs nothing else
// (test/cli/cli-start.test.ts, test/capability/parts-on-use.test.ts): derived here, so they cannot
// drift from what the build shares.
const underSrc = (modules) => [...new Set([kBin, ...modules])].map((path) => relative(kSrcDir, path)).sort();
writeFileSync(
  join(kBundleDir, 'outside-modules.json'),
  `${JSON.stringify({ entry: underSrc([]), serve: underSrc([...kServeEntryModules, kScriptRunner]) }, null, 2)}\n`,
);

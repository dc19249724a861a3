// The compiled tests as the suite's runner starts them (scripts/run-tests.mjs): dist/test-run/, a copy of
// dist/test/ whose files take every Flagwire module they import from one script V8 caches,
// dist/test-run/src-modules.script.js, instead of loading dist/src/'s modules one by one. Run by `npm run
// build` last.
//
// Why: Node 20 compiles every ES module afresh in every process, and each test file is a process. A test
// that seeds a data dir or runs a command in-process imports most of the capability graph (some 300 of
// dist/src's modules): resolving, reading, compiling and linking them before its first test costs about
// ten times what one cached script does (issue 57, item 5).
//
// What stays as it was:
// - Each module of the script runs when a file first imports it, before the file's code, in the order
//   of its imports (esbuild's `__esm` wrapper of a module runs it once, and scripts/src-modules.mjs runs
//   a file's imports in turn), and a test reads its exports live, by property.
// - A test process holds one copy of each Flagwire module: every file of the copy takes them from the one
//   script. The packages they import are loaded where the importing module runs, as the command line's
//   bundle loads them (scripts/build-cli.mjs): lmdb and msgpackr from the store packages' script (a test
//   file's own import of them too, through dist/test-run/packages/), the
//   others required (Node's CommonJS build of each), uWebSockets.js, an ES module only, from its CommonJS
//   twin (bundle/uws.cjs). TypeBox's module (dist/src/typebox.js, a script of its own) is imported as it
//   is, with the script.
// - Every URL a file makes of `import.meta.url` is its original's in dist/test/, so what a test starts or
//   names by path (a helper run as a child process, a capability a server loads, a fixture) is the
//   original file, which loads dist/src/ as before. A file run alone (`node dist/test/x.test.js`) is the
//   original too.
// - Each file's source map leads to its TypeScript, through tsc's map.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { build } from 'esbuild';
import { applyEdits, eachNode, kRequireBanner, kStorePackages, kUwsTwin, storePackageSource, writeScriptBundle } from './script-bundle.mjs';

const kDist = fileURLToPath(new URL('../dist/', import.meta.url));
const kTests = join(kDist, 'test');
const kSrc = join(kDist, 'src');
const kTestRun = join(kDist, 'test-run');
const kModulesName = 'src-modules';
/** A script of its own, run by its module (scripts/bundle-typebox.mjs): imported as it is. */
const kTypeBox = join(kSrc, 'typebox.js');
/**
 * lmdb and msgpackr from the store packages' script (scripts/script-bundle.mjs), as the command line's
 * bundle takes them, wherever a test file or a module of dist/src imports them: cached (their own ES
 * modules are some 5 MB of source, compiled afresh in each process), and one copy in a process, which a
 * command run in-process (test/helpers/cli.ts) shares. A test file's own import of one is of its module
 * in dist/test-run/packages/.
 */
const packageModule = (name) => join(kTestRun, 'packages', `${name}.js`);

function jsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jsFiles(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

const inside = (dir, path) => !relative(dir, path).startsWith('..');
/** The module of dist/src that `spec`, imported by the file at `path`, names (its path under dist/src), if any. */
function srcPath(spec, path) {
  if (typeof spec !== 'string' || !/^\.{1,2}\//.test(spec)) return undefined;
  const target = resolve(dirname(path), spec);
  return inside(kSrc, target) && target.endsWith('.js') ? relative(kSrc, target) : undefined;
}

/**
 * The code of the file at `path` for its copy at `copy`: each `import.meta.url` the original's URL, and
 * (unless `srcImports` is false: the script's own modules) each `import()` of a module of dist/src the
 * script's (srcImport); also answers the modules of dist/src it imports so. Most files have neither,
 * and are not parsed.
 */
function forCopy(text, path, copy, { srcImports = true } = {}) {
  if (!text.includes('import.meta.url') && !(srcImports && text.includes('import('))) return { code: text, lazies: [] };
  const edits = [];
  const lazies = [];
  const url = `new URL(${JSON.stringify(relative(dirname(copy), path))}, import.meta.url).href`;
  eachNode(parse(text, { ecmaVersion: 'latest', sourceType: 'module' }).body, (node) => {
    if (node.type === 'MemberExpression' && node.object.type === 'MetaProperty' && node.property.name === 'url')
      edits.push([node.start, node.end, url]);
    const lazy = srcImports && node.type === 'ImportExpression' ? srcPath(node.source.value, path) : undefined;
    if (lazy === undefined) return;
    edits.push([node.start, node.end, `flagwireSrcImport(${JSON.stringify(lazy)})`]);
    lazies.push(lazy);
  });
  return { code: applyEdits(text, edits), lazies };
}

const copyOf = (path) => resolve(kTestRun, relative(kTests, path));
/** How the file at `from` imports the file at `to`: a relative specifier. */
function importPath(from, to) {
  const spec = relative(dirname(from), to);
  return spec.startsWith('.') ? spec : `./${spec}`;
}
const kRegistry = join(kTestRun, `${kModulesName}.js`);

// The test files, each bundled alone: a file of dist/test it imports stays an import (of its copy), any
// other file of the project an import of the original, a package or built-in an import as it was; a
// module of dist/src becomes the script's (srcModule), loaded with the modules the file imports before
// its code runs (srcModules), as the imports of a module are.
const files = jsFiles(kTests);
const used = new Set();
const tests = {
  name: 'test-files',
  setup(b) {
    b.onResolve({ filter: /^\.{1,2}\// }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const src = srcPath(args.path, args.importer);
      if (src !== undefined) {
        used.add(src);
        return { path: src, namespace: 'flagwire-src' };
      }
      const path = resolve(args.resolveDir, args.path);
      if (inside(kTests, path) && path.endsWith('.js')) return { path: args.path, external: true };
      return { path: importPath(copyOf(args.importer), path), external: true };
    });
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (!kStorePackages.includes(args.path)) return { path: args.path, external: true };
      return { path: importPath(copyOf(args.importer), packageModule(args.path)), external: true };
    });
    b.onLoad({ filter: /.*/, namespace: 'flagwire-src' }, (args) => ({
      contents: `module.exports = flagwireSrcModule(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
    b.onLoad({ filter: /\.js$/ }, (args) => {
      const { code, lazies } = forCopy(readFileSync(args.path, 'utf8'), args.path, copyOf(args.path));
      for (const src of lazies) used.add(src);
      return { contents: code, loader: 'js' };
    });
  },
};

const kOptions = {
  outdir: kTestRun,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  write: false,
  logLevel: 'warning',
};
rmSync(kTestRun, { recursive: true, force: true });
// By folder: the import of the script heads each file, as a path from its folder (esbuild's banner, so
// the source map counts it); what the file imports of it is loaded on the same line.
const byFolder = new Map();
for (const path of files) byFolder.set(dirname(path), [...(byFolder.get(dirname(path)) ?? []), path]);
await Promise.all(
  [...byFolder].map(async ([folder, entryPoints]) => {
    const registry = relative(copyOf(folder), kRegistry);
    const banner = `import { srcModule as flagwireSrcModule, srcModules as flagwireSrcModules, srcImport as flagwireSrcImport } from ${JSON.stringify(registry.startsWith('.') ? registry : `./${registry}`)};`;
    const { outputFiles, metafile } = await build({
      entryPoints,
      outbase: kTests,
      ...kOptions,
      metafile: true,
      banner: { js: banner },
      plugins: [tests],
    });
    // The modules of dist/src each file imports (esbuild's record of its imports, in their order).
    const imports = new Map(
      Object.entries(metafile.outputs).map(([output, { entryPoint }]) => [
        resolve(output),
        metafile.inputs[entryPoint]?.imports.flatMap(({ path, kind }) =>
          kind === 'import-statement' && path.startsWith('flagwire-src:') ? [path.slice('flagwire-src:'.length)] : [],
        ) ?? [],
      ]),
    );
    for (const file of outputFiles) {
      mkdirSync(dirname(file.path), { recursive: true });
      const imported = [...new Set(imports.get(file.path) ?? [])];
      if (file.path.endsWith('.map')) {
        writeFileSync(file.path, file.contents);
        continue;
      }
      if (!file.text.startsWith(`${banner}\n`)) throw new Error(`${file.path}: esbuild's banner is not its first line`);
      writeFileSync(
        file.path,
        imported.length === 0 ? file.contents : file.text.replace('\n', ` await flagwireSrcModules(${JSON.stringify(imported)});\n`),
      );
    }
  }),
);

// The store packages a test file imports itself (a helper that reads a data dir with lmdb, a test that
// decodes with msgpackr): a module of each in dist/test-run/packages/, which the copies import.
for (const name of kStorePackages) {
  mkdirSync(dirname(packageModule(name)), { recursive: true });
  writeFileSync(packageModule(name), `${storePackageSource(name, dirname(packageModule(name)))}\n`);
}

// The script: every module of dist/src a test file imports (and what those import), each run on its
// first use.
const packages = {
  name: 'required-packages',
  setup(b) {
    b.onResolve({ filter: /.*/, namespace: 'flagwire-package' }, (args) => ({ path: args.path, external: true }));
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('node:') ? undefined : { path: args.path, namespace: 'flagwire-package' },
    );
    b.onLoad({ filter: /.*/, namespace: 'flagwire-package' }, (args) => ({
      contents: kStorePackages.includes(args.path)
        ? storePackageSource(args.path, kTestRun)
        : `module.exports = require(${JSON.stringify(args.path === 'uWebSockets.js' ? relative(kTestRun, kUwsTwin) : args.path)});`,
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.{1,2}\// }, (args) =>
      resolve(args.resolveDir, args.path) === kTypeBox ? { path: relative(kTestRun, kTypeBox), external: true } : undefined,
    );
    b.onLoad({ filter: /\/dist\/src\/.*\.js$/ }, (args) => ({
      contents: forCopy(readFileSync(args.path, 'utf8'), args.path, kRegistry, { srcImports: false }).code,
      loader: 'js',
    }));
  },
};
const listed = [...used].sort();
/** The entry's table (scripts/src-modules.mjs): each module's path under dist/src, and its import(). */
const loaderTable = {
  name: 'src-loaders',
  setup(b) {
    b.onResolve({ filter: /^flagwire:src-loaders$/ }, (args) => ({ path: args.path, namespace: 'flagwire-src-loaders' }));
    b.onLoad({ filter: /.*/, namespace: 'flagwire-src-loaders' }, () => ({
      contents: [
        'export const loaders = {',
        ...listed.map((path) => `  ${JSON.stringify(path)}: () => import(${JSON.stringify(`./${path}`)}),`),
        '};',
      ].join('\n'),
      loader: 'js',
      resolveDir: kSrc,
    }));
  },
};
const { outputFiles } = await build({
  entryPoints: { [kModulesName]: fileURLToPath(new URL('src-modules.mjs', import.meta.url)) },
  ...kOptions,
  // The packages' CommonJS builds are required (required-packages), which an ES module can only with a require of its own.
  banner: {
    js: kRequireBanner,
  },
  plugins: [loaderTable, packages],
});
writeScriptBundle(outputFiles, kModulesName, kTestRun);
console.log(`bundle-tests: ${files.length} files, ${listed.length} modules of dist/src`);

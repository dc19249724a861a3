import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { declarations, writeAndPack } from './package-parts.mjs';

const root = new URL('..', import.meta.url).pathname;
const kNative = /(^|\/)node_modules\/(lmdb|@lmdb|uWebSockets\.js|uws-pack|msgpackr|msgpackr-extract|piscina|pg|pino)\//;
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const work = mkdtempSync(join(tmpdir(), 'flagwire-provider-'));

// src/load-on-use.ts loads a package by name at run time, from the application's node_modules, which hold
// none of the engine's packages (and, in the CommonJS file, with no import.meta to load from). In the
// package it is this table instead: esbuild bundles each literal require(), still run on first use. A name
// the engine loads that the table lacks throws as the package loads, naming it.
const kLoadedOnUse = ['re2js', 'ip-address'];
const loadOnUseBundled = {
  name: 'load-on-use-bundled',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]load-on-use\.ts$/ }, () => ({
      loader: 'js',
      resolveDir: root,
      contents: `const packages = { ${kLoadedOnUse.map((name) => `'${name}': () => require('${name}')`).join(', ')} };
export function loadOnUse(name, around = (load) => load()) {
  const load = packages[name];
  if (load === undefined) throw new Error('the provider package does not bundle ' + name + ' (scripts/pack-provider.mjs)');
  let loaded;
  return () => (loaded ??= around(load));
}`,
    }));
  },
};
try {
  const pkg = join(work, 'package');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  const common = {
    entryPoints: [join(root, 'src/provider/index.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    external: ['@openfeature/server-sdk'],
    metafile: true,
    logLevel: 'warning',
    plugins: [loadOnUseBundled],
  };
  const esm = await built({ ...common, format: 'esm', outfile: join(pkg, 'dist/index.js') });
  await built({ ...common, format: 'cjs', outfile: join(pkg, 'dist/index.cjs') });
  const native = Object.keys(esm.metafile.inputs).filter((input) => kNative.test(input));
  if (native.length > 0) throw new Error(`the provider reaches server-only packages: ${native.join(', ')}`);
  // `@flagwire/openfeature-provider/events`: the events hook and sender alone, for pages as well as
  // servers, so it must reach nothing of Node's (the build fails if it does).
  const events = { ...common, entryPoints: [join(root, 'src/provider/events.ts')], platform: 'neutral', external: [] };
  const eventsEsm = await built({ ...events, format: 'esm', outfile: join(pkg, 'dist/events.js') });
  await built({ ...events, format: 'cjs', outfile: join(pkg, 'dist/events.cjs') });
  if (Object.keys(eventsEsm.metafile.inputs).length !== 1) throw new Error('the events entry must be src/provider/events.ts alone');

  // Declarations of the three files the package exports, each made from its own source alone
  // (TypeScript's transpileDeclaration, under isolatedDeclarations): no program of the engine they import,
  // which `tsc --declaration --noCheck` parsed whole (the same three files byte for byte, diffed; 4.95 ->
  // 1.15 CPU s). isolatedDeclarations refuses a declaration whose type would need that program (an
  // exported member's inferred type), so a declaration can never silently become `any`: the pack fails.
  for (const name of ['index', 'provider', 'events']) {
    const fileName = join(root, 'src/provider', `${name}.ts`);
    const outputText = declarations(fileName, 'the provider');
    writeFileSync(join(pkg, 'dist', `${name}.d.ts`), outputText);
    // The same declarations for require(): under NodeNext a .d.ts of this "type": "module" package
    // describes an ES module, which a CommonJS file may not require; a .d.cts describes the .cjs.
    writeFileSync(join(pkg, 'dist', `${name}.d.cts`), outputText.replace(/from '\.\/(\w+)\.js'/g, "from './$1.cjs'"));
  }

  const manifest = {
    name: '@flagwire/openfeature-provider',
    version,
    description: "OpenFeature server provider for Flagwire: in-process evaluation with Flagwire's own engine",
    license: 'Apache-2.0',
    type: 'module',
    main: './dist/index.cjs',
    module: './dist/index.js',
    types: './dist/index.d.ts',
    exports: {
      '.': {
        import: { types: './dist/index.d.ts', default: './dist/index.js' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      },
      './events': {
        import: { types: './dist/events.d.ts', default: './dist/events.js' },
        require: { types: './dist/events.d.cts', default: './dist/events.cjs' },
      },
      './package.json': './package.json',
    },
    files: ['dist'],
    engines: { node: '>=20' },
    peerDependencies: { '@openfeature/server-sdk': '^1.13.0' },
    publishConfig: { access: 'public' },
  };
  writeAndPack(pkg, manifest, 'docs/provider.md');
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** esbuild's build, failing on a warning too: each one printed is a file that may not work as built. */
async function built(options) {
  const result = await build(options);
  if (result.warnings.length > 0) throw new Error(`esbuild warned building ${options.outfile} (above); the package is not written`);
  return result;
}

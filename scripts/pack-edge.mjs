import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { declarations, writeAndPack } from './package-parts.mjs';

const root = new URL('..', import.meta.url).pathname;
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const work = mkdtempSync(join(tmpdir(), 'flagwire-edge-'));
const kLoadedOnUse = ['re2js', 'ip-address'];
/** What no edge runtime runs: code made from a string (a method named eval, `}eval(`, is not a call of it). */
const kCodeGeneration = /\bnew Function\s*\(|(?:^|[=;(,\s!&|?:])eval\s*\(|\bFunction\s*\(\s*['"`]/m;

/** The engine's modules that reach what no edge runtime has, and the edge's own in their place. */
const kInstead = { 'src/typebox.js': 'src/edge/typebox-interpreted.ts', 'src/bytes/utf8.js': 'src/edge/utf8-web.ts' };
const edgeModules = {
  name: 'edge-modules',
  setup(build) {
    build.onResolve({ filter: /\/(typebox|utf8)\.js$/ }, (args) => {
      const instead = kInstead[resolve(args.resolveDir, args.path).slice(root.length)];
      return instead === undefined ? undefined : { path: join(root, instead) };
    });
    build.onLoad({ filter: /[\\/]src[\\/]load-on-use\.ts$/ }, () => ({
      loader: 'js',
      resolveDir: root,
      contents: `${kLoadedOnUse.map((name, i) => `import * as p${i} from '${name}';`).join('\n')}
const packages = { ${kLoadedOnUse.map((name, i) => `'${name}': p${i}`).join(', ')} };
export function loadOnUse(name, around = (load) => load()) {
  if (!(name in packages)) throw new Error('the edge package does not bundle ' + name + ' (scripts/pack-edge.mjs)');
  let loaded;
  return () => (loaded ??= around(() => packages[name]));
}`,
    }));
  },
};

try {
  const pkg = join(work, 'package');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  const common = {
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['worker', 'import', 'default'],
    metafile: true,
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    // The application's own SDK (a peer dependency), so that the provider's errors are the ones its OpenFeature sees.
    external: ['@openfeature/server-sdk'],
    plugins: [edgeModules],
  };
  for (const name of ['index', 'worker', 'provider']) {
    const outfile = join(pkg, 'dist', `${name}.js`);
    const result = await build({ ...common, entryPoints: [join(root, 'src/edge', `${name}.ts`)], outfile });
    if (result.warnings.length > 0) throw new Error(`esbuild warned building ${outfile} (above); the package is not written`);
    const compiler = Object.keys(result.metafile.inputs).filter((input) => /typebox\/build\/esm\/compiler\//.test(input));
    if (compiler.length > 0) throw new Error(`the edge bundle reaches TypeBox's compiler: ${compiler.join(', ')}`);
    const generates = kCodeGeneration.exec(readFileSync(outfile, 'utf8'));
    if (generates !== null) throw new Error(`${outfile} generates code at run time (${generates[0]}): no edge runtime allows it`);
    // The provider's re-export of FlagwireEvents names its source; the package holds it beside (events.d.ts).
    const types = declarations(join(root, 'src/edge', `${name}.ts`), 'the edge package', true).replaceAll(
      "'../provider/events.js'",
      "'./events.js'",
    );
    writeFileSync(join(pkg, 'dist', `${name}.d.ts`), types);
  }
  // index.d.ts and worker.d.ts re-export these modules' declarations.
  writeFileSync(join(pkg, 'dist/edge.d.ts'), declarations(join(root, 'src/edge/edge.ts'), 'the edge package', true));
  writeFileSync(join(pkg, 'dist/events.d.ts'), declarations(join(root, 'src/provider/events.ts'), 'the edge package', true));

  const manifest = {
    name: '@flagwire/edge',
    version,
    description:
      "Flagwire's evaluation in Cloudflare Workers and Vercel's Edge Runtime: OFREP answered from a snapshot, as the server answers",
    license: 'Apache-2.0',
    type: 'module',
    module: './dist/index.js',
    types: './dist/index.d.ts',
    exports: {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './worker': { types: './dist/worker.d.ts', default: './dist/worker.js' },
      './provider': { types: './dist/provider.d.ts', default: './dist/provider.js' },
      './package.json': './package.json',
    },
    files: ['dist'],
    sideEffects: false,
    peerDependencies: { '@openfeature/server-sdk': '^1.13.0' },
    peerDependenciesMeta: { '@openfeature/server-sdk': { optional: true } },
    publishConfig: { access: 'public' },
  };
  writeAndPack(pkg, manifest, 'docs/edge.md');
} finally {
  rmSync(work, { recursive: true, force: true });
}

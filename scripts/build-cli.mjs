// What the command line's entry (src/cli/cli.ts) reads so that a command loads only what it runs, derived
// from the build's own output by `npm run build` after tsc (and after bundle-typebox.mjs, whose single
// file the bundle takes in):
//   dist/src/cli/commands.json: every command's shape (CommandSpec: words, usage, options, help), from
//     the commands the capabilities declare, so help, the version and usage errors need no capability;
//   dist/src/cli/bundle/main.js: main.js with every source module it imports in one file, and what it
//     imports only on use (serve's server, a PostgreSQL client) in files of their own beside it, so a
//     command other than serve never loads the packages those import (uWebSockets.js, piscina, pino,
//     pg); the npm packages stay apart, as Node loads them. A module's import.meta.url is rewritten to the URL of its
//     own file, so what it finds next to itself (worker files, package.json) is found as before.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { build } from 'esbuild';

const kCliDir = new URL('../dist/src/cli/', import.meta.url);
const kBundleDir = new URL('bundle/', kCliDir).pathname;

const { kCliCommands } = await import(new URL('commands.js', kCliDir).href);
const kShapeKeys = ['name', 'usage', 'summary', 'positionals', 'argumentHelp', 'options', 'notes'];
const shapes = kCliCommands.map((command) =>
  Object.fromEntries(kShapeKeys.filter((k) => command[k] !== undefined).map((k) => [k, command[k]])),
);
writeFileSync(new URL('commands.json', kCliDir), `${JSON.stringify(shapes)}\n`);

/** Each source module's import.meta.url, as the URL of its own file relative to the bundle's (every piece is in one folder). */
const ownUrls = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\/dist\/src\/.*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const own = JSON.stringify(relative(kBundleDir, args.path));
      return { contents: text.replaceAll('import.meta.url', `new URL(${own}, import.meta.url).href`), loader: 'js' };
    });
  },
};

// The pieces' names carry a hash: the last build's are removed first.
rmSync(kBundleDir, { recursive: true, force: true });
await build({
  entryPoints: [new URL('main.js', kCliDir).pathname],
  outdir: kBundleDir,
  bundle: true,
  splitting: true,
  packages: 'external',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  plugins: [ownUrls],
  logLevel: 'warning',
});

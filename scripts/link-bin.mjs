// Makes `npx flagwire` in a clone run the build at once: node_modules/.bin/flagwire, linked to it.
//
// Why not package.json's `bin`: npm links a package's `bin` for its dependents, never into its own
// node_modules/.bin, and npx, given a command the project's own package.json names in `bin`, installs the
// clone into its cache (~/.npm/_npx) to link it there, running the package's prepare (the whole build)
// and postinstall first: 21 s quiet and 64-81 s at load on a 2-core machine for a user's first command,
// and two first commands at once race in that cache (one failed with ENOENT on its package.json). With no
// `bin`, npx finds the command in ./node_modules/.bin and runs it, as it runs any other local tool:
// nothing installed, nothing shared written, any number at once. This runs after every build (so after
// `npm install`, whose prepare builds), and is idempotent.
import { lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const kBinDir = fileURLToPath(new URL('../node_modules/.bin/', import.meta.url));
const kLink = `${kBinDir}flagwire`;
// Relative, as npm's own links are: the clone can be moved. The bin, which scripts/build-cli.mjs makes
// (and makes executable: the link runs the file itself) after this runs.
const kTarget = '../../dist/src/cli/flagwire.cjs';

const linked = (() => {
  try {
    return lstatSync(kLink).isSymbolicLink() && readlinkSync(kLink) === kTarget;
  } catch {
    return false;
  }
})();
if (!linked) {
  mkdirSync(kBinDir, { recursive: true });
  rmSync(kLink, { force: true });
  symlinkSync(kTarget, kLink);
}

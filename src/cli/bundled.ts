// Whether a command runs from the build's bundle of main.js (bundle/main.js: one script V8 caches,
// src/cli/bundle-script.ts) or from main.js's modules: the command line's entry (src/cli/cli.ts) asks,
// and so do the tests' in-process runs of the console (test/helpers/cli.ts), so that they run the code
// the binary runs.
import { statSync } from 'node:fs';
import { kTestSwitches } from '../test-switches.js';

/**
 * Whether the build's `derived` file is at least as new as the module it is derived from: a tsc run
 * alone (not `npm run build`) leaves the older one behind, and then the modules themselves are run.
 */
function derivedIsFresh(derived: string, from: string): boolean {
  try {
    return statSync(new URL(derived, import.meta.url)).mtimeMs >= statSync(new URL(from, import.meta.url)).mtimeMs;
  } catch {
    return false;
  }
}

/**
 * True when the build's commands table (commands.json) and main's bundle are as new as the modules they
 * are derived from, and no test capability is given: a process given one (FLAGWIRE_TEST_CAPABILITY) has
 * commands the derived table lacks, and the capability's module shares Flagwire's modules, so it runs
 * main.js for all.
 */
export function runsBundled(): boolean {
  return (
    kTestSwitches.capabilityModule === null &&
    derivedIsFresh('./commands.json', './commands.js') &&
    derivedIsFresh('./bundle/main.js', './main.js')
  );
}

// Where the bench's files are: it runs from dist/bench/, two levels below the repository.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const kRepo = fileURLToPath(new URL('../../', import.meta.url));
export const kDist = fileURLToPath(new URL('../', import.meta.url));

/**
 * The bin a build's checkout runs as `npx flagwire` (`dist/src/cli/flagwire.cjs`); a build from before the
 * bin was one file runs its entry, `dist/src/cli/cli.js`, itself.
 */
export function builtBin(checkout: string): string {
  const bin = join(checkout, 'dist/src/cli/flagwire.cjs');
  return existsSync(bin) ? bin : join(checkout, 'dist/src/cli/cli.js');
}

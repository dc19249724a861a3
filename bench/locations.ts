// Where the bench's files are: it runs from dist/bench/, two levels below the repository.
import { fileURLToPath } from 'node:url';

export const kRepo = fileURLToPath(new URL('../../', import.meta.url));
export const kDist = fileURLToPath(new URL('../', import.meta.url));

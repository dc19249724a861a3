// tsc does not set the executable bit; npm links `bin` to this file, so it must be runnable.
import { chmodSync, existsSync } from 'node:fs';
const bin = new URL('../dist/src/cli/cli.js', import.meta.url);
if (existsSync(bin)) chmodSync(bin, 0o755);

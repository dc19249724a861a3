// `node --import THIS_FILE`: registers module-log-hooks.ts, so the process names every module it loads on stderr.
import { register } from 'node:module';

register(new URL('./module-log-hooks.js', import.meta.url));

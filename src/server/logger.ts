// One pino logger for the server process; JSON lines on stderr, stdout stays for the demo banner.
import { pino, type Logger } from 'pino';
import type { Config } from '../config.js';

export function createLogger(level: Config['logLevel']): Logger {
  return pino({ level, base: { service: 'flagwire' } }, pino.destination(2));
}

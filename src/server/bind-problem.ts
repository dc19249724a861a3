// Whether an address can be listened on, and if not, the setting to change: node:net's bind, which says
// why, where uWS only says that listening failed.
import { createServer } from 'node:net';
import { ConfigError } from '../config.js';

export const kPortSetting = 'FLAGWIRE_PORT (--port)';
const kHostSetting = 'FLAGWIRE_HOST (--host)';

/**
 * Why `host:port` cannot be bound exclusively, or null when it can (then it is free again on return):
 * the port when it is taken or privileged, the host when it is not an address of this machine. Asked
 * by start-up before anything starts, so that a taken port is refused before the writer, the threads and
 * the evaluation workers (start.ts: 1.9 CPU s with several front-end threads, issue 57). Listening itself
 * (listen.ts) still refuses a port taken since.
 */
export function bindProblem(host: string, port: number): Promise<ConfigError | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        resolve(
          new ConfigError(
            kPortSetting,
            `${host}:${port} is already in use (another Flagwire or another program listens there); stop it or choose another port`,
          ),
        );
      } else if (err.code === 'EACCES') {
        resolve(new ConfigError(kPortSetting, `port ${port} needs privileges this process does not have; choose a port above 1023`));
      } else {
        resolve(new ConfigError(kHostSetting, `cannot listen on ${host} (${err.code ?? err.message}); give an address of this machine`));
      }
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

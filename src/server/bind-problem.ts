// Whether an address can be listened on, and if not, the setting to change: node:net's bind, which says
// why, where uWS only says that listening failed.
import { createServer } from 'node:net';
import { ConfigError, type PortSetting } from '../config.js';

export const kHttpPort: PortSetting = { setting: 'FLAGWIRE_PORT (--port)', whenTaken: 'stop it or choose another port' };
const kHostSetting = 'FLAGWIRE_HOST (--host)';

/**
 * Why `host:port` cannot be bound exclusively, or null when it can (then it is free again on return):
 * the port (`named`) when it is taken or privileged, the host when it is not an address of this machine.
 */
export function bindProblem(host: string, port: number, named: PortSetting): Promise<ConfigError | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        resolve(
          new ConfigError(
            named.setting,
            `${host}:${port} is already in use (another Flagwire or another program listens there); ${named.whenTaken}`,
          ),
        );
      } else if (err.code === 'EACCES') {
        resolve(new ConfigError(named.setting, `port ${port} needs privileges this process does not have; choose a port above 1023`));
      } else {
        resolve(new ConfigError(kHostSetting, `cannot listen on ${host} (${err.code ?? err.message}); give an address of this machine`));
      }
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

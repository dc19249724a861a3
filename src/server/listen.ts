// Binds the HTTP port exclusively, and turns a port that cannot be bound into a configuration error.
import * as uWS from 'uWebSockets.js';
import { ConfigError } from '../config.js';
import { bindProblem, kHttpPort } from './bind-problem.js';

// uws-pack's typings declare the listen options only as an enum its runtime does not export, and omit the
// (host, port, options, cb) overload the native listen accepts: both are typed here once.
type ListenWithOptions = (
  host: string,
  port: number,
  options: number,
  cb: (socket: uWS.us_listen_socket | false) => void,
) => uWS.TemplatedApp;
const kExclusivePort = exclusivePortOption();

function exclusivePortOption(): number {
  const value = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: unknown }).LIBUS_LISTEN_EXCLUSIVE_PORT;
  // Passed as undefined, uWS would fall back to its default and share the port again, silently.
  if (typeof value !== 'number') throw new Error('uWebSockets.js does not export LIBUS_LISTEN_EXCLUSIVE_PORT');
  return value;
}

/**
 * Listens on `host:port` without SO_REUSEPORT (uWS's default sets it): a second server started on a
 * busy port must fail, not silently share it and take half of the first one's connections.
 */
export function listenExclusive(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, kExclusivePort, (socket) => {
      if (socket) resolve(socket);
      else void listenFailure(host, port).then(reject);
    });
  });
}

/**
 * uWS only says that listening failed. The same bind through node:net gives the reason, so the error
 * names the setting to change.
 */
async function listenFailure(host: string, port: number): Promise<ConfigError> {
  // Free again by now (the other listener went away in between): still name the port.
  return (
    (await bindProblem(host, port, kHttpPort)) ??
    new ConfigError(kHttpPort.setting, `${host}:${port} could not be bound; retry, or choose another port`)
  );
}

/** uWS's acceptor-and-children API, which uws-pack's typings omit: typed here once. */
interface ChildApps {
  getDescriptor(): number;
  addChildAppDescriptor(descriptor: number): void;
  removeChildAppDescriptor(descriptor: number): void;
}

export function childApps(app: uWS.TemplatedApp): ChildApps {
  return app as unknown as ChildApps;
}

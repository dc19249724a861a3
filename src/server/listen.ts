// Binds the HTTP port exclusively; tries the node's ports before anything starts; turns a port that
// cannot be bound into a configuration error naming the setting to change.
import { createServer } from 'node:net';
import * as uWS from 'uWebSockets.js';
import { type Config, ConfigError } from '../config.js';
import { listenAddress, type PortSetting, portInUse } from '../port-setting.js';

const kHttpPort: PortSetting = {
  setting: 'FLAGWIRE_PORT (--port)',
  whenTaken: 'stop it or choose another port',
  port: (config) => config.port,
};
const kHostSetting = 'FLAGWIRE_HOST (--host)';

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

function listenOn(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket | false> {
  return new Promise((resolve) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, kExclusivePort, resolve);
  });
}

/**
 * Listens on `host:port` without SO_REUSEPORT (uWS's default sets it): a second server started on a
 * busy port must fail, not silently share it and take half of the first one's connections.
 */
export async function listenExclusive(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket> {
  const socket = await listenOn(app, host, port);
  if (socket) return socket;
  throw await listenFailure(host, port, kHttpPort);
}

/**
 * Why this node's ports cannot be listened on, the HTTP port's first, then `declared` (the ports its
 * background work listens on: the sync service's, src/capability/background-work.ts) in their order; or
 * null. Asked by start-up before anything starts (start.ts), so that a taken port is refused before the
 * data directory is written and before the writer, the threads and the evaluation workers start (1.9 CPU
 * s with several front-end threads, issue 57); found at the sync service's listen, a taken sync port cost
 * all of them first. Port 0 is not tried: the HTTP port's picks a free one, the sync port's serves none.
 * Listening itself (above, and the sync service's) still refuses a port taken since.
 */
export async function portsProblem(config: Readonly<Config>, declared: readonly PortSetting[]): Promise<ConfigError | null> {
  for (const named of [kHttpPort, ...declared]) {
    const port = named.port(config);
    const problem = port === 0 ? null : await listenProblem(config.host, port, named);
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Why `host:port` cannot be listened on exclusively, or null (then it is free again on return): tried
 * as listenExclusive listens, on an app of its own, and node:net asked the reason only when that fails.
 * node:net's first listen in a process loads dns and cluster, uWS's loads nothing more: every good
 * start pays this try.
 */
async function listenProblem(host: string, port: number, named: PortSetting): Promise<ConfigError | null> {
  const app = uWS.App();
  const socket = await listenOn(app, host, port);
  if (socket) uWS.us_listen_socket_close(socket);
  app.close();
  return socket ? null : listenFailure(host, port, named);
}

/**
 * uWS only says that listening failed. The same bind through node:net gives the reason, so the error
 * names the setting to change.
 */
async function listenFailure(host: string, port: number, named: PortSetting): Promise<ConfigError> {
  // Free again by now (the other listener went away in between): still name the port.
  return (
    (await bindProblem(host, port, named)) ??
    new ConfigError(named.setting, `${listenAddress(host, port)} could not be bound; retry, or choose another port`)
  );
}

/**
 * Why `host:port` cannot be bound exclusively, or null when it can (then it is free again on return):
 * the port (`named`) when it is taken or privileged, the host when it is not an address of this machine.
 * Asked of node:net's bind, which says why, where uWS only says that listening failed.
 */
function bindProblem(host: string, port: number, named: PortSetting): Promise<ConfigError | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') resolve(portInUse(named, host, port));
      else if (err.code === 'EACCES')
        resolve(new ConfigError(named.setting, `port ${port} needs privileges this process does not have; choose a port above 1023`));
      else resolve(new ConfigError(kHostSetting, `cannot listen on ${host} (${err.code ?? err.message}); give an address of this machine`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
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

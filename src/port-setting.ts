// A port a node listens on, as start-up tries it and as its refusals name it: one value per port, read
// by start-up's try (src/server/listen.ts) and by whatever listens on it (the HTTP listen there, the
// gRPC server's: src/capability/grpc-server.ts), so both say the same of the same port.
import { type Config, ConfigError } from './config.js';

/** How a refusal names a port: its setting, and what to do when another program has it. */
export interface PortNaming {
  readonly setting: string;
  readonly whenTaken: string;
}

export interface PortSetting extends PortNaming {
  /** Its value in `config`; 0: the HTTP port picks a free one, any other serves nothing (not tried). */
  port(config: Readonly<Config>): number;
}

/** `host:port` as a refusal writes it, an IPv6 host in brackets (`[::1]:8015`), as a URL writes it. */
export function listenAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The refusal of a port another program listens on. */
export function portInUse(named: PortNaming, host: string, port: number): ConfigError {
  return new ConfigError(
    named.setting,
    `${listenAddress(host, port)} is already in use (another Flagwire or another program listens there); ${named.whenTaken}`,
  );
}

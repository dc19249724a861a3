// A port for a process a test starts later (PostgreSQL, a node, a script's nodes), found free now.
// The kernel's own choice (listen on 0) comes from the ephemeral range, the range every outgoing
// connection's source port is drawn from too: between the probe and the process binding it, another
// test's connection (a PostgreSQL client, a keep-alive) can take it and hold it for as long as it lives,
// and a dial to a port that is down can even connect to itself (TCP's simultaneous open). Ports below
// that range are never handed out as source ports, so only another test's probe can race this one.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const kLowest = 20_000;

/** The first port of the kernel's ephemeral range (Linux's default 32768 where it cannot be read). */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > kLowest ? first : 32_768;
  } catch {
    return 32_768;
  }
}

const kBelow = ephemeralStart();

/** Whether nothing holds `port` on 127.0.0.1 now. */
export function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A port free on 127.0.0.1 now, below the ephemeral range. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = kLowest + Math.floor(Math.random() * (kBelow - kLowest));
    if (await bindable(port)) return port;
  }
}

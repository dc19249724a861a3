// ip-address, loaded when an Unleash remoteAddress strategy or IN_CIDR constraint is first compiled
// (src/load-on-use.ts): its load parses a table of IPv6 subnets, start-up CPU in every thread that
// imported it (a node's main, writer and evaluation threads, every command), and few models use it.
import type * as IpAddress from 'ip-address';
import { loadOnUse } from '../../load-on-use.js';

export const ipAddress = loadOnUse<typeof IpAddress>('ip-address');

// Where a webhook may send: an http(s) URL whose host resolves to public addresses only. A URL that
// resolves to a special-purpose address (loopback, private, link-local such as the cloud metadata
// 169.254.169.254, shared, reserved, multicast, ..., or an IPv6 form of one: special-addresses.ts) is
// refused, unless FLAGWIRE_WEBHOOK_ALLOW names its host or a range holding the address: a project's
// webhook must not become a way to reach the server's own network. The address is checked when a
// delivery is sent, every time, and the connection goes to the address checked (a name that resolves
// elsewhere a moment later changes nothing).
import { FlagwireError } from '../errors.js';
import { type AddressRange, inRange, parseAddress, parseRange } from '../http/client-address.js';
import { loadOnUse } from '../load-on-use.js';
import { specialAddress } from './special-addresses.js';

/** node:dns/promises, loaded by the first delivery's look-up (src/load-on-use.ts), not by every thread that validates a URL. */
const dns = loadOnUse<typeof import('node:dns/promises')>('node:dns/promises');

/** What is wrong with a webhook URL as written (null: nothing); where it resolves is checked when sending. */
export function urlSyntaxProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a URL`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `"${url}" must start with http:// or https://`;
  if (parsed.hostname === '') return `"${url}" names no host`;
  return null;
}

/** Where a URL may be sent: the address to connect to, or why not. */
export type Destination = { address: string; family: 4 | 6 } | { refused: string };

export class UrlGuard {
  private readonly hosts: ReadonlySet<string>;
  private readonly ranges: readonly AddressRange[];

  /** `allow`: FLAGWIRE_WEBHOOK_ALLOW's entries, host names and addresses or CIDR ranges. */
  constructor(allow: readonly string[]) {
    const ranges: AddressRange[] = [];
    const hosts = new Set<string>();
    for (const entry of allow) {
      const range = parseRange(entry);
      if (typeof range === 'string') hosts.add(entry.toLowerCase());
      else ranges.push(range);
    }
    this.hosts = hosts;
    this.ranges = ranges;
  }

  async destination(url: string): Promise<Destination> {
    const problem = urlSyntaxProblem(url);
    if (problem !== null) return { refused: problem };
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    let addresses: { address: string; family: number }[];
    try {
      addresses =
        parseAddress(host) !== null ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await dns().lookup(host, { all: true });
    } catch (err) {
      return { refused: `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
    }
    if (addresses.length === 0) return { refused: `${host} does not resolve` };
    const named = this.hosts.has(host.toLowerCase());
    for (const { address } of addresses) {
      const what = named ? null : this.blocked(address);
      if (what === null) continue;
      const where = address === host ? `${host} is ${what}` : `${host} resolves to ${address}, ${what}`;
      return { refused: `${where}: not sent (FLAGWIRE_WEBHOOK_ALLOW can let it through)` };
    }
    const first = addresses[0]!;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  /** What kind of address `address` is when it may not be reached ("a private address"), or null. */
  private blocked(address: string): string | null {
    const bytes = parseAddress(address);
    if (bytes === null) return 'an unreadable address';
    if (this.ranges.some((r) => inRange(bytes, r))) return null;
    return specialAddress(address);
  }
}

/**
 * A webhook's URL refused before it is made (a 400 naming the address) when it resolves where a webhook
 * may not send: the writer cannot resolve names, so the Management API and the web console ask this
 * first; the deliverer checks again at every send, as names move. A URL that is not one is left to the
 * writer, which reports it with the body's other problems.
 */
export async function refuseUnreachableUrl(url: unknown, allow: readonly string[]): Promise<void> {
  if (typeof url !== 'string' || urlSyntaxProblem(url) !== null) return;
  const destination = await new UrlGuard(allow).destination(url);
  if ('refused' in destination) throw new FlagwireError('INVALID_REQUEST', `url: ${destination.refused}`);
}

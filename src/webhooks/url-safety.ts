// Where a webhook may send: an http(s) URL whose host resolves to public addresses only. A URL that
// resolves to a loopback, private, link-local (cloud metadata: 169.254.169.254), shared, multicast or
// unspecified address is refused, unless FLAGWIRE_WEBHOOK_ALLOW names its host or a range holding the
// address: a project's webhook must not become a way to reach the server's own network. The address is
// checked when a delivery is sent, every time, and the connection goes to the address checked (a name
// that resolves elsewhere a moment later changes nothing).
import { lookup } from 'node:dns/promises';
import { FlagwireError } from '../errors.js';
import { type AddressRange, inRange, parseAddress, parseRange } from '../http/client-address.js';

const kBlocked: readonly [string, string][] = [
  ['127.0.0.0/8', 'loopback'],
  ['::1/128', 'loopback'],
  ['0.0.0.0/8', 'unspecified'],
  ['::/128', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['fc00::/7', 'private'],
  ['100.64.0.0/10', 'shared (carrier-grade NAT)'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['fe80::/10', 'link-local'],
  ['224.0.0.0/4', 'multicast'],
  ['ff00::/8', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
];
const kBlockedRanges = kBlocked.map(([text, what]) => ({ range: parseRange(text) as AddressRange, what }));

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
      addresses = parseAddress(host) !== null ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await lookup(host, { all: true });
    } catch (err) {
      return { refused: `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
    }
    if (addresses.length === 0) return { refused: `${host} does not resolve` };
    const named = this.hosts.has(host.toLowerCase());
    for (const { address } of addresses) {
      const why = named ? null : this.blocked(address);
      if (why === null) continue;
      const what = `${/^[aeiou]/.test(why) ? 'an' : 'a'} ${why} address`;
      const where = address === host ? `${host} is ${what}` : `${host} resolves to ${address}, ${what}`;
      return { refused: `${where}: not sent (FLAGWIRE_WEBHOOK_ALLOW can let it through)` };
    }
    const first = addresses[0]!;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  /** The kind of blocked address `address` is, or null when it may be reached. */
  private blocked(address: string): string | null {
    const bytes = parseAddress(address);
    if (bytes === null) return 'unreadable';
    if (this.ranges.some((r) => inRange(bytes, r))) return null;
    return kBlockedRanges.find((b) => inRange(bytes, b.range))?.what ?? null;
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

// The client address the per-IP limits count by (spec: Limits). By default it is the TCP peer, and
// X-Forwarded-For is ignored: any client could write one. Behind a reverse proxy every client would
// then share the proxy's address, so FLAGWIRE_TRUSTED_PROXIES lists the proxies' addresses and ranges.
// Only for a request whose peer is one of them, the client is read from X-Forwarded-For, right to left:
//
//   X-Forwarded-For: spoofed, 203.0.113.7, 10.0.0.2      peer 10.0.0.3 (trusted: 10.0.0.0/8)
//                    └ the client's ┘ └ client ┘ └ trusted proxy, skipped
//                      own claims
//
// Each trusted proxy appends the address it received the request from, so the right-most entry that
// is not a trusted proxy is the one written by the proxy nearest to the client; everything left of it
// came from the client and is never used. A malformed entry on that walk (a proxy that writes ports or
// "unknown") makes the request count as the peer's: a client must not be able to pick its bucket, and
// the left entries it could otherwise fall back to are exactly the ones the client wrote. When every
// entry is a trusted proxy, the left-most one is the client (a client inside a trusted range is
// trusted). Several X-Forwarded-For header lines are joined in order, as RFC 9110 defines for a list
// header: a proxy that adds its own line rather than extending the client's still comes last. The
// `Forwarded` header (RFC 7239) is not read: every common proxy writes X-Forwarded-For.
//
// Addresses are compared as 16 bytes, IPv4 as its IPv4-mapped IPv6 form (::ffff:a.b.c.d): a server
// listening on `::` sees an IPv4 peer as 0000:0000:0000:0000:0000:ffff:7f00:0001 (uWS writes every
// group in full), and it must match `127.0.0.1` in the list.
import type { HttpRequest } from 'uWebSockets.js';

/** A network in the 128-bit space: the address with its bits past `prefixBits` zero. */
export interface AddressRange {
  network: Uint8Array;
  prefixBits: number;
}

const kIpv4Part = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const kHexGroup = /^[0-9a-fA-F]{1,4}$/;
const kDecimal = /^(0|[1-9]\d{0,2})$/;

/** An IPv4 or IPv6 address as 16 bytes, or null when `text` is not one (zones and ports are not). */
export function parseAddress(text: string): Uint8Array | null {
  return text.includes(':') ? parseIpv6(text) : parseIpv4(text);
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  for (let i = 0; i < 4; i++) {
    // No leading zeros: some parsers read 010 as octal, so the entry would not mean one address.
    if (!kIpv4Part.test(parts[i]!)) return null;
    bytes[12 + i] = Number(parts[i]);
  }
  return bytes;
}

function parseIpv6(text: string): Uint8Array | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (half: string): number[] | null => {
    if (half === '') return [];
    const groups: number[] = [];
    const parts = half.split(':');
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (i === parts.length - 1 && part.includes('.')) {
        const v4 = parseIpv4(part);
        if (v4 === null) return null;
        groups.push((v4[12]! << 8) | v4[13]!, (v4[14]! << 8) | v4[15]!);
      } else if (kHexGroup.test(part)) {
        groups.push(parseInt(part, 16));
      } else {
        return null;
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (head === null || tail === null) return null;
  // An embedded IPv4 part is only allowed at the very end.
  if (halves.length === 2 && halves[0]!.includes('.')) return null;
  const count = head.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return null;
  const groups = [...head, ...new Array<number>(8 - count).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    bytes[2 * i] = groups[i]! >> 8;
    bytes[2 * i + 1] = groups[i]! & 0xff;
  }
  return bytes;
}

/**
 * One FLAGWIRE_TRUSTED_PROXIES entry: an address (`10.0.0.3`, `::1`) or a CIDR range (`10.0.0.0/8`,
 * `fd00::/8`). Returns the reason when it is not one; a range with bits set past its prefix is refused
 * (`10.0.0.1/8` is more likely a typo for one address than a request to trust 16 million).
 */
export function parseRange(entry: string): AddressRange | string {
  const slash = entry.indexOf('/');
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const network = parseAddress(addressText);
  if (network === null) return `"${entry}" is not an IPv4 or IPv6 address or CIDR range`;
  const isIpv4 = !addressText.includes(':');
  const maxBits = isIpv4 ? 32 : 128;
  let bits = maxBits;
  if (slash !== -1) {
    const prefix = entry.slice(slash + 1);
    if (!kDecimal.test(prefix) || Number(prefix) > maxBits) return `"${entry}" has a prefix length outside 0..${maxBits}`;
    bits = Number(prefix);
  }
  const prefixBits = isIpv4 ? 96 + bits : bits;
  if (!masked(network, prefixBits).every((byte, i) => byte === network[i])) {
    return `"${entry}" has address bits set past its /${bits} prefix`;
  }
  return { network, prefixBits };
}

function masked(address: Uint8Array, prefixBits: number): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    const bits = Math.max(0, Math.min(8, prefixBits - 8 * i));
    out[i] = address[i]! & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}

function inRange(address: Uint8Array, range: AddressRange): boolean {
  const { network, prefixBits } = range;
  const whole = prefixBits >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== network[i]) return false;
  const rest = prefixBits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (address[whole]! & mask) === network[whole];
}

/** Only X-Forwarded-For is read off the request: the module is tested without uWS. */
export type ForwardedHeaders = Pick<HttpRequest, 'forEach'>;

/** The configured proxies; built once at start, only when FLAGWIRE_TRUSTED_PROXIES is not empty. */
export class TrustedProxies {
  private readonly ranges: readonly AddressRange[];

  /** `entries` were validated by the config (parseRange); a bad one here is a programming error. */
  constructor(entries: readonly string[]) {
    this.ranges = entries.map((entry) => {
      const range = parseRange(entry);
      if (typeof range === 'string') throw new Error(range);
      return range;
    });
  }

  /** Whether `address` (16 bytes) lies in one of the ranges. */
  private contains(address: Uint8Array): boolean {
    for (const range of this.ranges) if (inRange(address, range)) return true;
    return false;
  }

  /**
   * The client `req` came from: `peer` (the TCP peer, as uWS writes it) unless the peer is trusted;
   * then the right-most X-Forwarded-For entry that is not trusted (see the top of the file). Reads the
   * headers synchronously: call it before any await (uWS's HttpRequest lives on the stack).
   */
  clientAddress(peer: string, req: ForwardedHeaders): string {
    const peerAddress = parseAddress(peer);
    if (peerAddress === null || !this.contains(peerAddress)) return peer;
    // getHeader returns only the first of several lines with the same name.
    let forwardedFor: string | null = null;
    req.forEach((name, value) => {
      if (name === 'x-forwarded-for') forwardedFor = forwardedFor === null ? value : `${forwardedFor},${value}`;
    });
    if (forwardedFor === null) return peer;
    const entries = (forwardedFor as string).split(',');
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!.trim();
      const address = parseAddress(entry);
      if (address === null) return peer;
      if (!this.contains(address)) return entry;
    }
    return entries[0]!.trim();
  }
}

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

const kDecimal = /^(0|[1-9]\d{0,2})$/;

/** An IPv4 or IPv6 address as 16 bytes, or null when `text` is not one (zones and ports are not). */
export function parseAddress(text: string): Uint8Array | null {
  const bytes = new Uint8Array(16);
  return parseAddressInto(text, bytes) ? bytes : null;
}

// The parsers below scan character codes into a reused buffer instead of splitting, matching regular
// expressions and allocating: behind a proxy they run on every Management API request, and the last
// peer's verdict is remembered, since one proxy sends most requests (bench/RESULTS.md, Costs behind the
// code's choices).
const kV4 = new Uint8Array(4);
const kGroups = new Uint16Array(8);

/** Writes `text` as 16 bytes into `out`; false (and `out` left partly written) when it is not an address. */
function parseAddressInto(text: string, out: Uint8Array): boolean {
  if (text.includes(':')) return parseIpv6Into(text, out);
  if (!parseIpv4Into(text, 0, out, 12)) return false;
  out.fill(0, 0, 10);
  out[10] = 0xff;
  out[11] = 0xff;
  return true;
}

/** Dotted-decimal IPv4 from `start` to the end of `text`, into `out[at..at+3]`. */
function parseIpv4Into(text: string, start: number, out: Uint8Array, at: number): boolean {
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = start; i <= text.length; i++) {
    // The end of the text closes the last part as a dot would.
    const c = i < text.length ? text.charCodeAt(i) : 0x2e;
    if (c >= 0x30 && c <= 0x39) {
      // No leading zeros: some parsers read 010 as octal, so the entry would not mean one address.
      if (digits === 1 && value === 0) return false;
      value = value * 10 + (c - 0x30);
      if (++digits > 3 || value > 255) return false;
    } else if (c === 0x2e) {
      if (digits === 0 || part === 4) return false;
      out[at + part++] = value;
      value = 0;
      digits = 0;
    } else {
      return false;
    }
  }
  return part === 4;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** IPv6: up to eight groups of 1-4 hex digits, one `::` for a run of zero groups, an IPv4 tail. */
function parseIpv6Into(text: string, out: Uint8Array): boolean {
  const n = text.length;
  let count = 0;
  /** Where `::` stands among the groups, or -1. */
  let gap = -1;
  let i = 0;
  if (text.startsWith('::')) {
    gap = 0;
    i = 2;
  }
  while (i < n) {
    const start = i;
    let value = 0;
    for (let h = hexValue(text.charCodeAt(i)); h !== -1 && i < n; h = hexValue(text.charCodeAt(++i))) value = value * 16 + h;
    if (i < n && text.charCodeAt(i) === 0x2e) {
      // The IPv4 tail (::ffff:1.2.3.4): the last two groups.
      if (count > 6 || !parseIpv4Into(text, start, kV4, 0)) return false;
      kGroups[count++] = (kV4[0]! << 8) | kV4[1]!;
      kGroups[count++] = (kV4[2]! << 8) | kV4[3]!;
      break;
    }
    const digits = i - start;
    if (digits === 0 || digits > 4 || count === 8) return false;
    kGroups[count++] = value;
    if (i === n) break;
    if (text.charCodeAt(i) !== 0x3a) return false;
    i++;
    if (i < n && text.charCodeAt(i) === 0x3a) {
      if (gap !== -1) return false;
      gap = count;
      i++;
    } else if (i === n) {
      return false;
    }
  }
  if (gap === -1 ? count !== 8 : count > 7) return false;
  const after = gap === -1 ? 0 : count - gap;
  const before = count - after;
  out.fill(0);
  for (let g = 0; g < before; g++) {
    out[2 * g] = kGroups[g]! >> 8;
    out[2 * g + 1] = kGroups[g]! & 0xff;
  }
  for (let g = 0; g < after; g++) {
    const to = 8 - after + g;
    out[2 * to] = kGroups[before + g]! >> 8;
    out[2 * to + 1] = kGroups[before + g]! & 0xff;
  }
  return true;
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

export function inRange(address: Uint8Array, range: AddressRange): boolean {
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

/** Every X-Forwarded-For line joined in order; null without one. (getHeader returns only the first line.) */
function forwardedForOf(req: ForwardedHeaders): string | null {
  let list: string | null = null;
  req.forEach((name, value) => {
    if (name === 'x-forwarded-for') list = list === null ? value : `${list},${value}`;
  });
  return list;
}

/** The configured proxies; built once at start, only when FLAGWIRE_TRUSTED_PROXIES is not empty. */
export class TrustedProxies {
  private readonly ranges: readonly AddressRange[];
  /** Each address parsed on a request is written here: no allocation per request. */
  private readonly scratch = new Uint8Array(16);
  // The last peer and whether it is trusted: behind a proxy nearly every request comes from the same
  // one or few proxy addresses, so the peer is parsed again only when it changes.
  private lastPeer = '';
  private lastPeerTrusted = false;

  /** `entries` were validated by the config (parseRange); a bad one here is a programming error. */
  constructor(entries: readonly string[]) {
    this.ranges = entries.map((entry) => {
      const range = parseRange(entry);
      if (typeof range === 'string') throw new Error(range);
      return range;
    });
  }

  private peerTrusted(peer: string): boolean {
    if (peer !== this.lastPeer) {
      this.lastPeer = peer;
      this.lastPeerTrusted = this.trusts(peer) === true;
    }
    return this.lastPeerTrusted;
  }

  /**
   * The scheme the client used, as a trusted proxy reports it in X-Forwarded-Proto (`header`, its raw
   * value; the last entry is the nearest proxy's), lower-cased; null when the peer is not a trusted
   * proxy or sent none. The web console marks its cookie Secure when this is `https`.
   */
  forwardedProto(peer: string, header: string): string | null {
    if (header === '' || !this.peerTrusted(peer)) return null;
    const last = header
      .slice(header.lastIndexOf(',') + 1)
      .trim()
      .toLowerCase();
    return last === '' ? null : last;
  }

  /** Whether `text` is a well-formed address in one of the ranges; null when it is not an address. */
  private trusts(text: string): boolean | null {
    if (!parseAddressInto(text, this.scratch)) return null;
    for (const range of this.ranges) if (inRange(this.scratch, range)) return true;
    return false;
  }

  /**
   * The client `req` came from: `peer` (the TCP peer, as uWS writes it) unless the peer is trusted;
   * then the right-most X-Forwarded-For entry that is not trusted (see the top of the file). Reads the
   * headers synchronously: call it before any await (uWS's HttpRequest lives on the stack).
   */
  clientAddress(peer: string, req: ForwardedHeaders): string {
    if (!this.peerTrusted(peer)) return peer;
    const list = forwardedForOf(req);
    if (list === null) return peer;
    // Right to left, one entry at a time: the walk usually stops at the last entry.
    for (let end = list.length; ; ) {
      const comma = list.lastIndexOf(',', end - 1);
      const entry = list.slice(comma + 1, end).trim();
      const trusted = this.trusts(entry);
      if (trusted === null) return peer;
      // Not a proxy: the client. Every entry a proxy: the left-most.
      if (!trusted || comma === -1) return entry;
      end = comma;
    }
  }
}

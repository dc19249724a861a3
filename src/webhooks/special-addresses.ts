// Which addresses a webhook may not send to: every range of IANA's IPv4 and IPv6 Special-Purpose Address
// Registries, as ipaddr.js names them (its `range()`, kept in step with the registries), and anything
// else that is not global unicast: multicast, and IPv6 outside 2000::/3, the only block IANA allocates
// for global unicast (it catches what ipaddr.js does not name yet, such as the dummy prefix
// 100:0:0:1::/64). Even the few registry entries marked globally reachable (AS112, AMT, ORCHIDv2) are
// refused: no webhook receiver lives there, and a hand-kept list of exceptions is how gaps came in.
//
// An IPv6 address that carries an IPv4 one ends at that IPv4 address, through the host's own stack
// (IPv4-mapped, IPv4-compatible), a translator (IPv4-translated, NAT64) or a tunnel (6to4, Teredo, whose
// server and client are both IPv4 addresses), so the IPv4 address inside is judged as if it were sent
// to: ::ffff:7f00:1 and 64:ff9b::7f00:1 are loopback as 127.0.0.1 is (issue 41: a probe reached a
// forbidden IPv4 address through two IPv6 forms). Where the inside is public, the well-known
// translations and tunnels may be sent to (an IPv6-only server reaches IPv4 receivers through NAT64);
// the deprecated IPv4-compatible form never is.
import type * as IpaddrJs from 'ipaddr.js';
import { loadOnUse } from '../load-on-use.js';

type Ipv4 = IpaddrJs.IPv4;
type Ipv6 = IpaddrJs.IPv6;

/**
 * ipaddr.js, loaded when a webhook's address is first judged (src/load-on-use.ts): imported, it cost
 * start-up CPU in every thread that loaded this module (a node's main and writer threads), and most
 * nodes never judge an address at their start (issue 57, item 2).
 */
const ipaddrJs = loadOnUse<typeof IpaddrJs>('ipaddr.js');

/** ipaddr.js's IPv4 range names as the refusal says them; a name not here (a newer ipaddr.js) is refused by name. */
const kIpv4Words: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local (cloud metadata)',
  loopback: 'a loopback',
  carrierGradeNat: 'a shared (carrier-grade NAT)',
  private: 'a private',
  // 192.0.0.0/24, the documentation networks, 192.88.99.0/24, 198.18.0.0/15 and 240.0.0.0/4.
  reserved: 'a reserved (IETF protocol, documentation, benchmarking or future use)',
  as112: 'an AS112 (DNS sink)',
  amt: 'an AMT relay',
};

const kIpv6Words: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified',
  loopback: 'a loopback',
  linkLocal: 'a link-local',
  multicast: 'a multicast',
  uniqueLocal: 'a private (unique local)',
  deprecatedSiteLocal: 'a site-local (deprecated)',
  ipv4Compatible: 'an IPv4-compatible (deprecated)',
  discard: 'a discard-only',
  benchmarking: 'a benchmarking',
  amt: 'an AMT relay',
  as112v6: 'an AS112 (DNS sink)',
  deprecatedOrchid: 'an ORCHID (deprecated)',
  orchid2: 'an ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID (DET)',
  segmentRouting: 'an SRv6 segment ID',
  // 2001::/23 (IETF protocol assignments), 2001:db8::/32 and 3fff::/20 (documentation).
  reserved: 'a reserved (IETF protocol or documentation)',
  // The well-known NAT64 prefix has a place for the IPv4 address; the local-use one (RFC 8215) is
  // carved by each network to a prefix length of its own, so where the IPv4 address sits cannot be read.
  localNat64: 'a local-use NAT64 (64:ff9b:1::/48, whose IPv4 address sits where the network chose)',
};

/** The IPv4 addresses an IPv6 range carries, by where they sit in the 16 bytes, each with the form's name. */
const kEmbedded: Readonly<Record<string, (b: readonly number[]) => [form: string, ipv4: number[]][]>> = {
  ipv4Mapped: (b) => [['an IPv4-mapped', b.slice(12)]],
  rfc6145: (b) => [['an IPv4-translated', b.slice(12)]],
  ipv4Compatible: (b) => [['an IPv4-compatible', b.slice(12)]],
  rfc6052: (b) => [['a NAT64', b.slice(12)]],
  '6to4': (b) => [['a 6to4', b.slice(2, 6)]],
  // Teredo: 2001:0:<server>:<flags>:<port>:<client>, the client's bits inverted (RFC 4380).
  teredo: (b) => [
    ['a Teredo (server)', b.slice(4, 8)],
    ['a Teredo (client)', b.slice(12).map((x) => x ^ 0xff)],
  ],
};

/** The ranges whose inside decides alone: a public IPv4 address inside may be sent to. */
const kCarriers: ReadonlySet<string> = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/** The IPv6 ranges judged beside ipaddr.js's names, parsed with its first load. */
let ranges: { ipv4Compatible: [Ipv6, number]; localNat64: [Ipv6, number]; globalUnicast: [Ipv6, number] } | undefined;
function ipv6Ranges(): NonNullable<typeof ranges> {
  const { IPv6 } = ipaddrJs();
  ranges ??= {
    ipv4Compatible: IPv6.parseCIDR('::/96'),
    localNat64: IPv6.parseCIDR('64:ff9b:1::/48'),
    globalUnicast: IPv6.parseCIDR('2000::/3'),
  };
  return ranges;
}

/**
 * Why a webhook may not send to `address` (an IPv4 or IPv6 address as text), as a noun phrase for a
 * refusal ("a private address", "a NAT64 form of 10.0.0.1, a private address"); null when it may.
 */
export function specialAddress(address: string): string | null {
  let ip: Ipv4 | Ipv6;
  try {
    ip = ipaddrJs().parse(address);
  } catch {
    return 'an unreadable address';
  }
  return ip.kind() === 'ipv4' ? ipv4Special(ip as Ipv4) : ipv6Special(ip as Ipv6);
}

function ipv4Special(ip: Ipv4): string | null {
  const range = ip.range();
  return range === 'unicast' ? null : `${kIpv4Words[range] ?? `a special-purpose (${range})`} address`;
}

function ipv6Special(ip: Ipv6): string | null {
  const range = ipv6Range(ip);
  const bytes = ip.toByteArray();
  for (const [form, inside] of kEmbedded[range]?.(bytes) ?? []) {
    const why = ipv4Special(new (ipaddrJs().IPv4)(inside));
    if (why !== null) return `${form} form of ${inside.join('.')}, ${why}`;
  }
  if (kCarriers.has(range)) return null;
  if (range === 'unicast') return ip.match(ipv6Ranges().globalUnicast) ? null : 'a non-global (outside 2000::/3) address';
  return `${kIpv6Words[range] ?? `a special-purpose (${range})`} address`;
}

/** ipaddr.js's name, with two it leaves as `unicast` or lumps together told apart. */
function ipv6Range(ip: Ipv6): string {
  const range: string = ip.range();
  if (range === 'unicast' && ip.match(ipv6Ranges().ipv4Compatible)) return 'ipv4Compatible';
  if (range === 'rfc6052' && ip.match(ipv6Ranges().localNat64)) return 'localNat64';
  return range;
}

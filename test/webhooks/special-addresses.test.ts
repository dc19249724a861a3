// Where a webhook may not send, in process: every range of IANA's IPv4 and IPv6 Special-Purpose Address
// Registries is refused from its first address to its last, with the words of its kind, while the
// public addresses just outside it are not; every IPv6 form that carries an IPv4 address is judged by
// the IPv4 address inside (for each IPv4 range), the local-use NAT64 prefix and the deprecated
// IPv4-compatible form are refused whatever they carry, and IPv6 outside 2000::/3 is refused.
import t from 'tap';
import { specialAddress } from '../../src/webhooks/special-addresses.js';

const kReserved4 = 'a reserved (IETF protocol, documentation, benchmarking or future use)';
const kReserved6 = 'a reserved (IETF protocol or documentation)';
const kNonGlobal = 'a non-global (outside 2000::/3)';

/** A registry entry: its words in the refusal, its first and last address, and its public neighbours (null: none is public). */
type Entry = [range: string, words: string, first: string, last: string, before: string | null, after: string | null];

// IANA IPv4 Special-Purpose Address Registry, every entry (and multicast, from the multicast registry).
const kIpv4: Entry[] = [
  ['0.0.0.0/8 "this network"', 'an unspecified', '0.0.0.0', '0.255.255.255', null, '1.0.0.0'],
  ['10.0.0.0/8 private', 'a private', '10.0.0.0', '10.255.255.255', '9.255.255.255', '11.0.0.0'],
  ['100.64.0.0/10 shared', 'a shared (carrier-grade NAT)', '100.64.0.0', '100.127.255.255', '100.63.255.255', '100.128.0.0'],
  ['127.0.0.0/8 loopback', 'a loopback', '127.0.0.0', '127.255.255.255', '126.255.255.255', '128.0.0.0'],
  ['169.254.0.0/16 link-local', 'a link-local (cloud metadata)', '169.254.0.0', '169.254.255.255', '169.253.255.255', '169.255.0.0'],
  ['172.16.0.0/12 private', 'a private', '172.16.0.0', '172.31.255.255', '172.15.255.255', '172.32.0.0'],
  ['192.0.0.0/24 IETF protocol assignments', kReserved4, '192.0.0.0', '192.0.0.255', '191.255.255.255', '192.0.1.0'],
  ['192.0.0.9/32 PCP anycast', kReserved4, '192.0.0.9', '192.0.0.9', null, null],
  ['192.0.0.10/32 TURN anycast', kReserved4, '192.0.0.10', '192.0.0.10', null, null],
  ['192.0.0.170/32 and 192.0.0.171/32 NAT64 discovery', kReserved4, '192.0.0.170', '192.0.0.171', null, null],
  ['192.0.2.0/24 TEST-NET-1', kReserved4, '192.0.2.0', '192.0.2.255', '192.0.1.255', '192.0.3.0'],
  ['192.31.196.0/24 AS112-v4', 'an AS112 (DNS sink)', '192.31.196.0', '192.31.196.255', '192.31.195.255', '192.31.197.0'],
  ['192.52.193.0/24 AMT', 'an AMT relay', '192.52.193.0', '192.52.193.255', '192.52.192.255', '192.52.194.0'],
  ['192.88.99.0/24 6to4 relay anycast', kReserved4, '192.88.99.0', '192.88.99.255', '192.88.98.255', '192.88.100.0'],
  ['192.168.0.0/16 private', 'a private', '192.168.0.0', '192.168.255.255', '192.167.255.255', '192.169.0.0'],
  ['192.175.48.0/24 AS112 direct delegation', 'an AS112 (DNS sink)', '192.175.48.0', '192.175.48.255', '192.175.47.255', '192.175.49.0'],
  ['198.18.0.0/15 benchmarking', kReserved4, '198.18.0.0', '198.19.255.255', '198.17.255.255', '198.20.0.0'],
  ['198.51.100.0/24 TEST-NET-2', kReserved4, '198.51.100.0', '198.51.100.255', '198.51.99.255', '198.51.101.0'],
  ['203.0.113.0/24 TEST-NET-3', kReserved4, '203.0.113.0', '203.0.113.255', '203.0.112.255', '203.0.114.0'],
  ['224.0.0.0/4 multicast', 'a multicast', '224.0.0.0', '239.255.255.255', '223.255.255.255', null],
  ['240.0.0.0/4 reserved', kReserved4, '240.0.0.0', '255.255.255.254', null, null],
  ['255.255.255.255/32 limited broadcast', 'a broadcast', '255.255.255.255', '255.255.255.255', null, null],
];

// IANA IPv6 Special-Purpose Address Registry, every entry that carries no IPv4 address (those are below),
// and what else is not global unicast.
const kIpv6: Entry[] = [
  ['::/128 unspecified', 'an unspecified', '::', '::', null, null],
  ['::1/128 loopback', 'a loopback', '::1', '::1', null, null],
  ['100::/64 discard-only', 'a discard-only', '100::', '100::ffff:ffff:ffff:ffff', null, null],
  ['100:0:0:1::/64 dummy prefix', kNonGlobal, '100:0:0:1::', '100::1:ffff:ffff:ffff:ffff', null, null],
  [
    '2001::/23 IETF protocol assignments (past Teredo)',
    kReserved6,
    '2001:1::',
    '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:200::',
  ],
  ['2001:1::1/128 PCP anycast', kReserved6, '2001:1::1', '2001:1::1', null, null],
  ['2001:1::2/128 TURN anycast', kReserved6, '2001:1::2', '2001:1::2', null, null],
  ['2001:1::3/128 DNS-SD SRP anycast', kReserved6, '2001:1::3', '2001:1::3', null, null],
  ['2001:2::/48 benchmarking', 'a benchmarking', '2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff', null, null],
  ['2001:3::/32 AMT', 'an AMT relay', '2001:3::', '2001:3:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['2001:4:112::/48 AS112-v6', 'an AS112 (DNS sink)', '2001:4:112::', '2001:4:112:ffff:ffff:ffff:ffff:ffff', null, null],
  ['2001:10::/28 ORCHID', 'an ORCHID (deprecated)', '2001:10::', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['2001:20::/28 ORCHIDv2', 'an ORCHIDv2', '2001:20::', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['2001:30::/28 drone remote ID', 'a drone remote ID (DET)', '2001:30::', '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  [
    '2001:db8::/32 documentation',
    kReserved6,
    '2001:db8::',
    '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db9::',
  ],
  [
    '2620:4f:8000::/48 AS112-v6',
    'an AS112 (DNS sink)',
    '2620:4f:8000::',
    '2620:4f:8000:ffff:ffff:ffff:ffff:ffff',
    '2620:4f:7fff:ffff:ffff:ffff:ffff:ffff',
    '2620:4f:8001::',
  ],
  [
    '3fff::/20 documentation',
    kReserved6,
    '3fff::',
    '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff',
    '3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    null,
  ],
  ['5f00::/16 SRv6 segment IDs', 'an SRv6 segment ID', '5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['fc00::/7 unique local', 'a private (unique local)', 'fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['fe80::/10 link-local', 'a link-local', 'fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['fec0::/10 site-local (deprecated)', 'a site-local (deprecated)', 'fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['ff00::/8 multicast', 'a multicast', 'ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null, null],
  ['::2 to ::ffff:ffff IPv4-compatible', 'an IPv4-compatible (deprecated)', '::808:808', '::101:101', null, null],
  ['outside 2000::/3', kNonGlobal, '::1:0:0:0', '1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null, '2000::'],
  ['outside 2000::/3, above it', kNonGlobal, '4000::', '5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '3fff:1000::', null],
];

for (const [family, entries] of [
  ['IPv4', kIpv4],
  ['IPv6', kIpv6],
] as const) {
  t.test(
    `every ${family} special-purpose range is refused from its first address to its last; its public neighbours are not`,
    async (t) => {
      for (const [range, words, first, last, before, after] of entries) {
        t.equal(specialAddress(first), `${words} address`, `${range}: ${first}`);
        t.equal(specialAddress(last), `${words} address`, `${range}: ${last}`);
        for (const neighbour of [before, after])
          if (neighbour !== null) t.equal(specialAddress(neighbour), null, `${range}: ${neighbour} is public`);
      }
    },
  );
}

t.test('public addresses may be sent to', async (t) => {
  for (const address of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2000::'])
    t.equal(specialAddress(address), null, address);
});

/** Each IPv6 form that carries `ipv4`, by the name the refusal gives it, with a public address where a second IPv4 goes. */
function carriers(ipv4: string): [form: string, address: string][] {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  const inverted = (n: number) => (~n & 0xffff).toString(16);
  return [
    ['an IPv4-mapped', `::ffff:${hi}:${lo}`],
    ['an IPv4-translated', `::ffff:0:${hi}:${lo}`],
    ['a NAT64', `64:ff9b::${hi}:${lo}`],
    ['a 6to4', `2002:${hi}:${lo}::1`],
    // Teredo's server with a public client (8.8.8.8, inverted), and its client behind a public server.
    ['a Teredo (server)', `2001:0:${hi}:${lo}:0:0:f7f7:f7f7`],
    ['a Teredo (client)', `2001:0:808:808:0:0:${inverted((a << 8) | b)}:${inverted((c << 8) | d)}`],
  ];
}

t.test('an IPv6 form that carries an IPv4 address is judged by the IPv4 address inside, for every IPv4 range', async (t) => {
  for (const [range, , , last] of kIpv4) {
    const why = specialAddress(last)!;
    for (const [form, address] of carriers(last))
      t.equal(specialAddress(address), `${form} form of ${last}, ${why}`, `${range}: ${address}`);
    // IPv4-compatible (::a.b.c.d): its inside named when it is special.
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    const compatible = `::${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    t.equal(specialAddress(compatible), `an IPv4-compatible form of ${last}, ${why}`, `${range}: ${compatible}`);
  }
  t.equal(specialAddress('::ffff:169.254.169.254'), 'an IPv4-mapped form of 169.254.169.254, a link-local (cloud metadata) address');
  t.equal(specialAddress('64:ff9b::127.0.0.1'), 'a NAT64 form of 127.0.0.1, a loopback address');
});

t.test('with a public IPv4 address inside, the translations and tunnels may be sent to; the deprecated forms may not', async (t) => {
  for (const [form, address] of carriers('8.8.8.8')) t.equal(specialAddress(address), null, `${form}: ${address}`);
  t.equal(specialAddress('::808:808'), 'an IPv4-compatible (deprecated) address');
  const localUse = 'a local-use NAT64 (64:ff9b:1::/48, whose IPv4 address sits where the network chose) address';
  for (const address of [
    '64:ff9b:1::',
    '64:ff9b:1::808:808',
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1:a9fe:a9:fe00::',
    '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
  ])
    t.equal(specialAddress(address), localUse, address);
  t.equal(specialAddress('64:ff9b:2::808:808'), `${kNonGlobal} address`, 'past the local-use prefix');
});

t.test('what is not an address is refused as unreadable', async (t) => {
  for (const text of ['', 'example.com', '1.2.3.4.5', '::g']) t.equal(specialAddress(text), 'an unreadable address', JSON.stringify(text));
});

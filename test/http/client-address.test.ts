// src/http/client-address.ts: which address the per-IP limits count a request by. Black-box, through
// a real server and its limits: test/api/trusted-proxies.test.ts.
import t from 'tap';
import { rmSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseAddress, parseRange, TrustedProxies, type ForwardedHeaders } from '../../src/http/client-address.js';
import { tempDataDir } from '../helpers/server.js';

/** A request with these header lines, in order, as uWS's forEach hands them over (names lower-cased). */
function headers(...lines: [string, string][]): ForwardedHeaders {
  return {
    forEach: (cb) => {
      for (const [name, value] of lines) cb(name, value);
    },
  };
}
const xff = (...values: string[]) => headers(['host', 'x'], ...values.map((v): [string, string] => ['x-forwarded-for', v]));

t.test('addresses: IPv4, IPv6 in every written form, IPv4-mapped; anything else is not one', async (t) => {
  const hex = (text: string) => Buffer.from(parseAddress(text) ?? []).toString('hex');
  t.equal(hex('127.0.0.1'), '00000000000000000000ffff7f000001', 'IPv4 is held as IPv4-mapped IPv6');
  t.equal(hex('::ffff:127.0.0.1'), hex('127.0.0.1'));
  t.equal(hex('0000:0000:0000:0000:0000:ffff:7f00:0001'), hex('127.0.0.1'), 'as uWS writes a v4 peer on a :: listener');
  t.equal(hex('::1'), '00000000000000000000000000000001');
  t.equal(hex('0000:0000:0000:0000:0000:0000:0000:0001'), hex('::1'));
  t.equal(hex('2001:DB8::8:800:200C:417A'), '20010db80000000000080800200c417a');
  t.equal(hex('1:2:3:4:5:6:7::'), '00010002000300040005000600070000');
  t.equal(hex('::'), '0'.repeat(32));
  for (const bad of [
    '',
    'unknown',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3.4:8080',
    '[::1]',
    '::1%eth0',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8::',
    '12345::',
    ':1::',
    '::1.2.3.4:5',
    '1.2.3.4::',
    ' 1.2.3.4',
    'g::',
  ]) {
    t.equal(parseAddress(bad), null, JSON.stringify(bad));
  }
});

t.test('ranges: an address or CIDR of either family; a typo is refused with the reason', async (t) => {
  t.match(parseRange('10.0.0.0/8'), { prefixBits: 104 }, 'an IPv4 prefix counts within the mapped form');
  t.match(parseRange('10.0.0.3'), { prefixBits: 128 });
  t.match(parseRange('fd00::/8'), { prefixBits: 8 });
  t.match(parseRange('0.0.0.0/0'), { prefixBits: 96 });
  t.match(parseRange('10.1.3.0/23'), /bits set past its \/23 prefix/);
  t.match(parseRange('10.1.2.0/23'), { prefixBits: 119 }, 'a prefix inside a byte');
  t.match(parseRange('10.0.0.1/8'), /bits set past/);
  t.match(parseRange('10.0.0.0/33'), /prefix length outside 0\.\.32/);
  t.match(parseRange('fd00::/129'), /outside 0\.\.128/);
  t.match(parseRange('10.0.0.0/'), /prefix length/);
  t.match(parseRange('10.0.0.0/08'), /prefix length/);
  t.match(parseRange('proxy.internal'), /is not an IPv4 or IPv6 address or CIDR range/);
});

t.test('the setting: comma-separated, blanks ignored, empty by default; a bad entry is a ConfigError', async (t) => {
  const base = { FLAGWIRE_DATA: tempDataDir() };
  t.teardown(() => rmSync(base.FLAGWIRE_DATA, { recursive: true, force: true }));
  t.same(loadConfig({}, base).trustedProxies, [], 'default: nobody is trusted');
  t.same(loadConfig({}, { ...base, FLAGWIRE_TRUSTED_PROXIES: ' 10.0.0.0/8, ::1 ,,' }).trustedProxies, ['10.0.0.0/8', '::1']);
  for (const [raw, reason] of [
    ['10.0.0.0/8, nginx', /"nginx" is not/],
    ['192.168.1.1/16', /bits set past/],
    ['::1/200', /prefix length/],
  ] as const) {
    let error: unknown = null;
    try {
      loadConfig({}, { ...base, FLAGWIRE_TRUSTED_PROXIES: raw });
    } catch (err) {
      error = err;
    }
    t.ok(error instanceof ConfigError, raw);
    t.match(error, { setting: 'FLAGWIRE_TRUSTED_PROXIES', message: reason });
  }
});

t.test('a peer that is not a trusted proxy is the client, whatever it sends', async (t) => {
  const proxies = new TrustedProxies(['10.0.0.0/8']);
  t.equal(proxies.clientAddress('127.0.0.1', xff('203.0.113.9')), '127.0.0.1');
  t.equal(proxies.clientAddress('11.0.0.1', xff('203.0.113.9')), '11.0.0.1', 'just outside the range');
  t.equal(proxies.clientAddress('0000:0000:0000:0000:0000:ffff:0b00:0001', xff('203.0.113.9')), '0000:0000:0000:0000:0000:ffff:0b00:0001');
  const narrow = new TrustedProxies(['10.1.2.0/23']);
  t.equal(narrow.clientAddress('10.1.3.255', xff('203.0.113.9')), '203.0.113.9', 'the last address of a range inside a byte');
  t.equal(narrow.clientAddress('10.1.4.0', xff('203.0.113.9')), '10.1.4.0', 'the next one is outside');
  t.equal(narrow.clientAddress('10.1.1.255', xff('203.0.113.9')), '10.1.1.255', 'and the one before');
  let read = false;
  proxies.clientAddress('127.0.0.1', {
    forEach: () => {
      read = true;
    },
  });
  t.notOk(read, 'its headers are not even read');
});

t.test('behind a trusted proxy: the right-most entry that is not a trusted proxy', async (t) => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '::1']);
  t.equal(proxies.clientAddress('10.0.0.3', xff('203.0.113.7')), '203.0.113.7');
  t.equal(
    proxies.clientAddress('0000:0000:0000:0000:0000:ffff:0a00:0003', xff('203.0.113.7')),
    '203.0.113.7',
    'a v4 proxy seen on a :: listener',
  );
  t.equal(proxies.clientAddress('0000:0000:0000:0000:0000:0000:0000:0001', xff('2001:db8::7')), '2001:db8::7', 'an IPv6 proxy and client');
  t.equal(proxies.clientAddress('10.0.0.3', xff('198.51.100.1, 203.0.113.7')), '203.0.113.7', 'what the client wrote itself is never used');
  t.equal(
    proxies.clientAddress('10.0.0.3', xff('198.51.100.1, 203.0.113.7, 10.0.0.2')),
    '203.0.113.7',
    'a chain of trusted proxies is skipped',
  );
  t.equal(proxies.clientAddress('10.0.0.3', xff('10.9.9.9,10.0.0.2')), '10.9.9.9', 'every entry trusted: the left-most');
  t.equal(proxies.clientAddress('10.0.0.3', xff()), '10.0.0.3', 'no header: the proxy itself (a health check)');
});

t.test('several X-Forwarded-For lines are one list, in order', async (t) => {
  const proxies = new TrustedProxies(['10.0.0.0/8']);
  t.equal(proxies.clientAddress('10.0.0.3', xff('198.51.100.1', '203.0.113.7')), '203.0.113.7', 'the proxy added its own line last');
  t.equal(proxies.clientAddress('10.0.0.3', xff('198.51.100.1, 203.0.113.7', '10.0.0.2')), '203.0.113.7');
  const mixed = headers(['x-forwarded-for', '198.51.100.1'], ['user-agent', 'x'], ['x-forwarded-for', '203.0.113.7']);
  t.equal(proxies.clientAddress('10.0.0.3', mixed), '203.0.113.7');
});

t.test("a malformed entry where the client should be counts the request as the proxy's", async (t) => {
  const proxies = new TrustedProxies(['10.0.0.0/8']);
  for (const value of [
    '203.0.113.7:5123',
    'unknown',
    '',
    '198.51.100.1, ',
    '198.51.100.1, garbage',
    '198.51.100.1,,10.0.0.2',
    '[2001:db8::7]',
  ]) {
    t.equal(proxies.clientAddress('10.0.0.3', xff(value)), '10.0.0.3', JSON.stringify(value));
  }
  t.equal(proxies.clientAddress('10.0.0.3', xff('garbage, 203.0.113.7')), '203.0.113.7', 'junk left of the client is never looked at');
});

// Node's own parser and matcher as the reference: net.isIP for what is an address, net.BlockList for
// what lies in a range (it also matches IPv4 rules against IPv4-mapped IPv6 addresses, and IPv6
// rules against IPv4 addresses, as ours does). Inputs: addresses written every way the syntax allows,
// then mutated by a character inserted, dropped or replaced.
const kGroup = fc.integer({ min: 0, max: 0xffff });
const kIpv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
const kIpv6 = fc
  .record({
    groups: fc.array(fc.oneof(kGroup, fc.constant(0)), { minLength: 8, maxLength: 8 }),
    pad: fc.boolean(),
    upper: fc.boolean(),
    v4Tail: fc.boolean(),
    gapAt: fc.nat(8),
    gapLength: fc.nat(8),
  })
  .map(({ groups, pad, upper, v4Tail, gapAt, gapLength }) => {
    let parts = groups.map((g) => g.toString(16).padStart(pad ? 4 : 1, '0'));
    if (v4Tail) parts = [...parts.slice(0, 6), `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`];
    const length = Math.min(gapLength, parts.length - Math.min(gapAt, parts.length));
    let text = length === 0 ? parts.join(':') : `${parts.slice(0, gapAt).join(':')}::${parts.slice(gapAt + length).join(':')}`;
    if (upper) text = text.toUpperCase();
    return text;
  });
const kAddress = fc.oneof(kIpv4, kIpv6);
const kMutated = fc
  .tuple(
    kAddress,
    fc.nat(40),
    fc.constantFrom('', '0', '9', 'f', 'G', ':', '.', '::', '/', ' ', '00'),
    fc.constantFrom('insert', 'drop', 'replace'),
  )
  .map(([text, at, c, how]) => {
    const i = at % (text.length + 1);
    if (how === 'insert') return text.slice(0, i) + c + text.slice(i);
    if (how === 'drop') return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + c + text.slice(i + 1);
  });

t.test('what is an address agrees with node:net on generated and mutated addresses', async (t) => {
  fc.assert(
    fc.property(fc.oneof(kAddress, kMutated), (text) => {
      return (parseAddress(text) !== null) === (isIP(text) !== 0);
    }),
    { numRuns: 20_000 },
  );
  t.pass('20,000 inputs');
});

t.test("range membership agrees with node:net's BlockList", async (t) => {
  const kMarker = '2001:db8:0:0:0:0:0:beef';
  const v4 = (b: number[]) => b.join('.');
  const v6 = (b: number[]) => Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16)).join(':');
  // A range from raw bytes (the bits past the prefix cleared), and peers near it: the same bytes with
  // one bit flipped (inside the range exactly when the bit lies past the prefix), or any address.
  const kCase = fc.record({
    ipv4: fc.boolean(),
    bytes: fc.array(fc.nat(255), { minLength: 16, maxLength: 16 }),
    prefixSeed: fc.nat(128),
    flip: fc.option(fc.nat(127)),
    mapped: fc.boolean(),
    other: fc.option(kAddress, { freq: 4 }),
  });
  fc.assert(
    fc.property(kCase, ({ ipv4, bytes, prefixSeed, flip, mapped, other }) => {
      const size = ipv4 ? 4 : 16;
      const prefix = prefixSeed % (8 * size + 1);
      const network = bytes.slice(0, size).map((byte, i) => byte & (0xff << (8 - Math.max(0, Math.min(8, prefix - 8 * i)))) & 0xff);
      const range = `${ipv4 ? v4(network) : v6(network)}/${prefix}`;
      let peer = other;
      if (peer === null) {
        const near = [...bytes.slice(0, size)];
        if (flip !== null) near[(flip % (8 * size)) >> 3]! ^= 0x80 >> ((flip % (8 * size)) & 7);
        peer = ipv4 ? (mapped ? `::ffff:${v4(near)}` : v4(near)) : v6(near);
      }
      const reference = new BlockList();
      reference.addSubnet(ipv4 ? v4(network) : v6(network), prefix, ipv4 ? 'ipv4' : 'ipv6');
      const trusted = new TrustedProxies([range]).clientAddress(peer, xff(kMarker)) === kMarker;
      return trusted === reference.check(peer, isIP(peer) === 4 ? 'ipv4' : 'ipv6');
    }),
    { numRuns: 20_000 },
  );
  t.pass('20,000 ranges and peers');
});

t.test("the last peer's verdict is remembered, and replaced when the peer changes", async (t) => {
  const proxies = new TrustedProxies(['10.0.0.3']);
  const peers = ['10.0.0.3', '10.0.0.4', '10.0.0.4', '10.0.0.3', '10.0.0.3', '203.0.113.9', '10.0.0.3'];
  t.same(
    peers.map((peer) => proxies.clientAddress(peer, xff('198.51.100.1'))),
    ['198.51.100.1', '10.0.0.4', '10.0.0.4', '198.51.100.1', '198.51.100.1', '203.0.113.9', '198.51.100.1'],
  );
});

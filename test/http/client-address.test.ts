// src/http/client-address.ts: which address the per-IP limits count a request by. Black-box, through
// a real server and its limits: test/api/trusted-proxies.test.ts.
import t from 'tap';
import { rmSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseAddress, parseRange, TrustedProxies, type ForwardedHeaders } from '../../src/http/client-address.js';
import { tempDataDir } from '../helpers/server.js';

/** A request with these header lines, in order, as uWS's forEach hands them over (names lower-cased). */
function headers(...lines: [string, string][]): ForwardedHeaders {
  return { forEach: (cb) => lines.forEach(([name, value]) => cb(name, value)) };
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
  for (const bad of ['', 'unknown', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.4:8080', '[::1]', '::1%eth0',
    '1::2::3', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8::', '12345::', ':1::', '::1.2.3.4:5', '1.2.3.4::', ' 1.2.3.4', 'g::']) {
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
  for (const [raw, reason] of [['10.0.0.0/8, nginx', /"nginx" is not/], ['192.168.1.1/16', /bits set past/], ['::1/200', /prefix length/]] as const) {
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
  proxies.clientAddress('127.0.0.1', { forEach: () => { read = true; } });
  t.notOk(read, 'its headers are not even read');
});

t.test('behind a trusted proxy: the right-most entry that is not a trusted proxy', async (t) => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '::1']);
  t.equal(proxies.clientAddress('10.0.0.3', xff('203.0.113.7')), '203.0.113.7');
  t.equal(proxies.clientAddress('0000:0000:0000:0000:0000:ffff:0a00:0003', xff('203.0.113.7')), '203.0.113.7', 'a v4 proxy seen on a :: listener');
  t.equal(proxies.clientAddress('0000:0000:0000:0000:0000:0000:0000:0001', xff('2001:db8::7')), '2001:db8::7', 'an IPv6 proxy and client');
  t.equal(proxies.clientAddress('10.0.0.3', xff('198.51.100.1, 203.0.113.7')), '203.0.113.7', 'what the client wrote itself is never used');
  t.equal(proxies.clientAddress('10.0.0.3', xff('198.51.100.1, 203.0.113.7, 10.0.0.2')), '203.0.113.7', 'a chain of trusted proxies is skipped');
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

t.test('a malformed entry where the client should be counts the request as the proxy\'s', async (t) => {
  const proxies = new TrustedProxies(['10.0.0.0/8']);
  for (const value of ['203.0.113.7:5123', 'unknown', '', '198.51.100.1, ', '198.51.100.1, garbage', '198.51.100.1,,10.0.0.2', '[2001:db8::7]']) {
    t.equal(proxies.clientAddress('10.0.0.3', xff(value)), '10.0.0.3', JSON.stringify(value));
  }
  t.equal(proxies.clientAddress('10.0.0.3', xff('garbage, 203.0.113.7')), '203.0.113.7', 'junk left of the client is never looked at');
});

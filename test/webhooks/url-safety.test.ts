// The webhook URL guard in process: a URL whose host is, or resolves to, a special-purpose address (an
// IPv6 form of a forbidden IPv4 address included) is refused with the address and its kind, unless
// FLAGWIRE_WEBHOOK_ALLOW names the host or a range holding the address; a public one is sent to the
// very address checked.
import t from 'tap';
import { UrlGuard } from '../../src/webhooks/url-safety.js';

const kNotSent = ': not sent (FLAGWIRE_WEBHOOK_ALLOW can let it through)';

t.test('a literal address is judged as written, IPv6 forms of a forbidden IPv4 address included', async (t) => {
  const guard = new UrlGuard([]);
  for (const [url, refused] of [
    [
      'http://[::ffff:169.254.169.254]/latest',
      '::ffff:a9fe:a9fe is an IPv4-mapped form of 169.254.169.254, a link-local (cloud metadata) address',
    ],
    ['http://[64:ff9b::7f00:1]:8080/', '64:ff9b::7f00:1 is a NAT64 form of 127.0.0.1, a loopback address'],
    ['https://[2002:a00:1::1]/', '2002:a00:1::1 is a 6to4 form of 10.0.0.1, a private address'],
    [
      'http://[2001:0:808:808::5601:5601]/',
      '2001:0:808:808::5601:5601 is a Teredo (client) form of 169.254.169.254, a link-local (cloud metadata) address',
    ],
    ['http://[::a9fe:a9fe]/', '::a9fe:a9fe is an IPv4-compatible form of 169.254.169.254, a link-local (cloud metadata) address'],
    ['http://198.18.0.1/', '198.18.0.1 is a reserved (IETF protocol, documentation, benchmarking or future use) address'],
    ['http://240.0.0.1/', '240.0.0.1 is a reserved (IETF protocol, documentation, benchmarking or future use) address'],
    // The URL parser reads other spellings of IPv4 as the address they mean.
    ['http://2130706433/', '127.0.0.1 is a loopback address'],
  ] as const)
    t.same(await guard.destination(url), { refused: `${refused}${kNotSent}` }, url);
  t.same(
    await guard.destination('http://[64:ff9b::808:808]/hook'),
    { address: '64:ff9b::808:808', family: 6 },
    'NAT64 of a public address',
  );
  t.same(await guard.destination('https://8.8.8.8/hook'), { address: '8.8.8.8', family: 4 });
});

t.test('a name is judged by every address it resolves to', async (t) => {
  const refused = await new UrlGuard([]).destination('http://localhost:9/hook');
  t.match(refused, { refused: /^localhost resolves to (127\.0\.0\.1|::1), a loopback address: not sent/ });
  t.match(
    await new UrlGuard(['localhost']).destination('http://localhost:9/hook'),
    { address: /^(127\.0\.0\.1|::1)$/ },
    'the host allowed',
  );
});

t.test('FLAGWIRE_WEBHOOK_ALLOW lets through the ranges it names, and only those', async (t) => {
  const guard = new UrlGuard(['64:ff9b::/96', '10.20.0.0/16']);
  t.same(await guard.destination('http://[64:ff9b::7f00:1]/'), { address: '64:ff9b::7f00:1', family: 6 });
  t.same(await guard.destination('http://10.20.1.2/'), { address: '10.20.1.2', family: 4 });
  t.same(await guard.destination('http://10.21.1.2/'), { refused: `10.21.1.2 is a private address${kNotSent}` });
  t.same(await guard.destination('http://[::ffff:7f00:1]/'), {
    refused: `::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address${kNotSent}`,
  });
});

// The web console's sign-in limits under concurrency (issue 23): a sign-in reserves its attempt before
// its password is checked, so however many arrive at once, at most the limit's remainder is checked per
// window, per address and per account, on one front-end thread or on three. With a limit of 4 and three
// failures counted, eight sign-ins sent at once (one with the right password) get at most one answer
// that checked a password (200 or 401); the rest are 429. Before the fix every one was checked and the
// right one signed in. Each request is on a connection of its own, so the acceptor spreads them over
// the threads; addresses come from X-Forwarded-For through a trusted proxy (this test's loopback).
import http from 'node:http';
import t from 'tap';
import type { TestContext } from '../helpers/cli.js';
import { demoPassword, kDemoOwner } from '../helpers/web-console.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const kWrong = 'not the password at all';

interface Answer {
  status: number;
  error: string;
  detail: string;
}

/** POST /console/api/sign-in on a connection of its own, from `address` (as the trusted proxy says). */
function signInFrom(server: TestServer, address: string, email: string, password: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify({ email, password });
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: '/console/api/sign-in',
        method: 'POST',
        agent: false,
        headers: { connection: 'close', origin: server.baseUrl, 'content-type': 'application/json', 'x-forwarded-for': address },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          const json = JSON.parse(text) as { error?: string; detail?: string };
          resolve({ status: res.statusCode!, error: json.error ?? '', detail: json.detail ?? '' });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Eight at once, the right password among them (fifth, so it is not simply the first to arrive). */
async function burst(eight: (i: number) => Promise<Answer>): Promise<Answer[]> {
  return Promise.all(Array.from({ length: 8 }, (_, i) => eight(i)));
}

function expectAtMostOneChecked(t: TestContext, answers: Answer[], which: RegExp): void {
  const statuses = answers.map((a) => a.status);
  const checked = answers.filter((a) => a.status === 200 || a.status === 401);
  t.ok(checked.length <= 1, `at most the one attempt left is checked (${statuses.join(' ')})`);
  t.equal(
    answers.filter((a) => a.status === 429).length,
    8 - checked.length,
    'every other one is refused 429 before its password is checked',
  );
  t.ok(
    answers.filter((a) => a.status === 429).every((a) => a.error === 'Too many failed authentication attempts' && which.test(a.detail)),
    "with the lockout's envelope",
  );
}

for (const threads of [1, 3]) {
  t.test(
    `${threads} front-end thread(s): at most the limit is checked per address and per account, however many arrive at once`,
    async (t) => {
      const server = await startTestServer({
        demo: true,
        env: {
          FLAGWIRE_HTTP_THREADS: String(threads),
          FLAGWIRE_EVAL_WORKERS: '1',
          FLAGWIRE_SIGN_IN_FAIL_LIMIT: '4',
          FLAGWIRE_TRUSTED_PROXIES: '127.0.0.1',
        },
      });
      t.teardown(() => server.stop());
      const password = demoPassword(server.output());

      // Per address: three failures from one address (three accounts), then eight accounts at once from it.
      const address = '198.51.100.20';
      for (let i = 0; i < 3; i++) t.equal((await signInFrom(server, address, `before${i}@x.test`, kWrong)).status, 401);
      const byAddress = await burst((i) =>
        i === 4 ? signInFrom(server, address, kDemoOwner, password) : signInFrom(server, address, `burst${i}@x.test`, kWrong),
      );
      expectAtMostOneChecked(t, byAddress, /from this address/);

      // Per account: three failures of the owner from three addresses, then eight at once from eight more.
      for (let i = 0; i < 3; i++) t.equal((await signInFrom(server, `203.0.113.${i + 1}`, kDemoOwner, kWrong)).status, 401);
      const byAccount = await burst((i) => signInFrom(server, `192.0.2.${i + 1}`, kDemoOwner, i === 4 ? password : kWrong));
      expectAtMostOneChecked(t, byAccount, /for this account/);
    },
  );
}

// Which page an address shows (src/web-console/browser/router.ts), in a DOM with the console API's
// answers held by the test: the address's parts reach the API as they were written (decoded once,
// encoded again), an unknown address and an unknown id are "Not found", and a navigation the user
// went on from is never drawn over the page they went on to, whichever answer comes first.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { route } from '../../../src/web-console/browser/router.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const page = () => document.getElementById('page')!;
const heading = () => page().querySelector('h1')?.textContent ?? null;

function mailAnswer(subject: string) {
  return {
    status: 200,
    body: { messages: [{ subject, to: 'ann@example.test', orgName: 'Acme', at: 1, sentAt: 1, failedAt: null, text: 'body' }] },
  };
}

/** Navigates as a hash change does: the address, then the router. */
function go(hash: string): Promise<void> {
  location.hash = hash;
  return route();
}

t.test("each address asks the API for its page's record, its ids as written", async (t) => {
  const cases: [string, string][] = [
    ['#/projects/a%2Fb%20c', '/console/api/projects/a%2Fb%20c'],
    ['#/projects/p1/tokens', '/console/api/projects/p1/tokens'],
    ['#/projects/p1/audit?action=flag.update', '/console/api/projects/p1/audit?action=flag.update'],
    ['#/flags/f%3C1%3E', '/console/api/flags/f%3C1%3E'],
    ['#/tokens/t1', '/console/api/tokens/t1/activity'],
    ['#/orgs/o%261/members', '/console/api/orgs/o%261/members'],
    ['#/mail', '/console/api/mail'],
    ['#/', '/console/api/home'],
  ];
  for (const [hash, url] of cases) {
    const held = holdRequests();
    const done = go(hash);
    t.same(
      held.map((r) => r.url),
      [url],
      hash,
    );
    held[0]!.answer({ status: 404, body: { error: 'Not found', detail: 'x' } });
    await done;
  }
});

t.test('an address no page has is Not found, without asking the API', async (t) => {
  const held = holdRequests();
  await go('#/nowhere/at/all');
  t.equal(held.length, 0);
  t.equal(heading(), 'Not found');
  t.match(page().textContent, 'No page of the console has this address.');
  t.equal(document.title, 'Not found · Flagwire console');
});

t.test("an id the API does not know is Not found with the API's detail, shown as text", async (t) => {
  const held = holdRequests();
  const done = go('#/flags/f1');
  held[0]!.answer({ status: 404, body: { error: 'Not found', detail: 'No flag <img src=x> with this id.' } });
  await done;
  t.equal(heading(), 'Not found');
  t.match(page().textContent, 'No flag <img src=x> with this id. Check the address');
  t.equal(page().querySelector('img'), null, 'the detail made no element');
});

t.test('another failure replaces the page before with what went wrong', async (t) => {
  let held = holdRequests();
  let done = go('#/mail');
  held[0]!.answer(mailAnswer('Hello'));
  await done;
  t.equal(heading(), 'Your mail');
  held = holdRequests();
  done = go('#/projects/p1');
  held[0]!.answer({ status: 500, body: { error: 'Internal error', detail: 'boom' } });
  await done;
  t.equal(heading(), 'This page could not be loaded');
  t.match(page().textContent, 'Internal error: boom');
});

t.test('a page the user went on from is not drawn when its answer comes after the next page', async (t) => {
  const held = holdRequests();
  const first = go('#/mail');
  const second = go('#/flags/f1');
  t.equal(held.length, 2);
  held[1]!.answer({ status: 404, body: { error: 'Not found', detail: 'No flag with this id.' } });
  await second;
  t.equal(heading(), 'Not found');
  held[0]!.answer(mailAnswer('Stale mail'));
  await first;
  await settle();
  t.equal(heading(), 'Not found', 'the page gone to is shown');
  t.notMatch(page().textContent, 'Stale mail');
  t.notMatch(page().textContent, 'could not be loaded', "the abandoned read's end is no failure shown");
});

t.test('a page the user went on from is not drawn when its answer comes first either', async (t) => {
  const held = holdRequests();
  const first = go('#/mail');
  const second = go('#/flags/f2');
  held[0]!.answer(mailAnswer('Stale mail'));
  await first;
  await settle();
  t.notMatch(page().textContent, 'Stale mail', 'nothing of the page left is drawn');
  held[1]!.answer({ status: 404, body: { error: 'Not found', detail: 'No flag with this id.' } });
  await second;
  t.equal(heading(), 'Not found');
});

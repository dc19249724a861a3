// A project's playground (src/web-console/browser/playground-page.ts), in a DOM with the API held by the
// test: a shared link's context is evaluated at once (its attributes every parameter that is not a field
// of its own), the context is posted as typed, and the address then holds the answer's query string in
// place (replaced, not pushed), so the link shows the same answers again.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { playgroundPage } from '../../../src/web-console/browser/playground-page.js';
import type { PlaygroundView, ProjectView } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const page = () => document.getElementById('page')!;

const kProject = {
  project: { id: 'p 1', name: 'Shop', kind: 'multi', environments: ['staging', 'production'] },
  can: { editFlags: true },
} as unknown as ProjectView;

function results(query: string, env: string | null): PlaygroundView {
  return {
    query,
    env,
    results: [
      {
        id: 'f1',
        name: 'Checkout',
        enabled: true,
        value: true,
        reason: 'TARGETING_MATCH',
        why: { by: 'static', percentage: 100 },
        because: '100%',
      },
      {
        id: 'f2',
        name: 'Search',
        enabled: null,
        reason: 'ERROR',
        errorCode: 'GENERAL',
        why: { by: 'plan', audienceId: 'a1' },
        because: 'plan',
      },
    ],
  };
}

t.test("a shared link's context is evaluated at once: fields as fields, every other parameter an attribute", async (t) => {
  const held = holdRequests();
  history.replaceState(null, '', '#/projects/p%201/playground?targetingKey=u1&env=production&plan=beta&country=NL');
  const done = playgroundPage('p 1', new URLSearchParams('targetingKey=u1&env=production&plan=beta&country=NL'));
  held[0]!.answer({ status: 200, body: kProject });
  await settle();
  t.same(
    held.slice(1).map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [
      [
        'POST',
        '/console/api/projects/p%201/playground',
        {
          targetingKey: 'u1',
          cohort: '',
          env: 'production',
          attributes: [
            { name: 'plan', value: 'beta' },
            { name: 'country', value: 'NL' },
          ],
        },
      ],
    ],
  );
  held[1]!.answer({ status: 200, body: results('targetingKey=u1&plan=beta&country=NL&env=production', 'production') });
  await done;
  t.equal(page().querySelector<HTMLSelectElement>('select[name="env"]')!.value, 'production');
  t.equal(
    page().querySelector('[role="status"]')!.textContent,
    '2 flags evaluated in production: 1 enabled, 1 not. Same as GET /v1/flags/{id}?targetingKey=u1&plan=beta&country=NL&env=production.',
  );
  const rows = Array.from(page().querySelectorAll('tbody tr')).map((tr) => Array.from(tr.children).map((td) => td.textContent));
  t.same(rows, [
    ['Checkout', 'on', 'true', 'TARGETING_MATCH', '100%'],
    ['Search', 'refused', "caller's default", 'ERROR (GENERAL)', 'plan'],
  ]);
});

t.test("evaluating puts the answer's query in the address in place (replaced, not pushed); the page is not read again", async (t) => {
  const held = holdRequests();
  history.replaceState(null, '', '#/projects/p%201/playground');
  const before = history.length;
  const done = playgroundPage('p 1', new URLSearchParams());
  held[0]!.answer({ status: 200, body: kProject });
  await done;
  t.equal(held.length, 1, 'no context: nothing evaluated yet');
  page().querySelector<HTMLInputElement>('input[name="targetingKey"]')!.value = 'u 2';
  page()
    .querySelector('form')!
    .dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  t.equal(JSON.parse(held[1]!.body!).targetingKey, 'u 2');
  held[1]!.answer({ status: 200, body: results('targetingKey=u+2&env=staging', 'staging') });
  await settle();
  t.equal(location.hash, '#/projects/p%201/playground?targetingKey=u+2&env=staging');
  t.equal(history.length, before, 'replaced, not pushed');
  t.equal(held.length, 2);
});

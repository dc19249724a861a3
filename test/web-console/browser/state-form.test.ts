// A flag state's form on the flag page (src/web-console/browser/flag-pages.ts, stateForm; issue 96, item
// 12), in a DOM with the API held by the test: a state in Unleash's model shows its percentage, cohorts
// and audience read-only (the model does not read them, and the API refuses a change to them), saying
// where the model says the same; its switch still saves, sending only `enabled`. A state without a model
// keeps the three editable.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { stateForm } from '../../../src/web-console/browser/flag-pages.js';
import type { FlagPageView, FlatState } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const kData = {
  flag: { id: 'f1', name: 'checkout' },
  can: { editFlags: true },
  project: { protectedEnvironments: [] },
  audiences: [{ id: 'aud_1', name: 'Beta testers' }],
} as unknown as FlagPageView;
const kState = { enabled: false, trafficPercentage: 30, cohorts: ['vip'], audienceId: 'aud_1' } as FlatState;

function draw(state: FlatState): HTMLFormElement {
  const form = stateForm(kData, 'production', state, async () => {});
  document.getElementById('page')!.replaceChildren(form);
  return form;
}

t.test("a state in Unleash's model: percentage, cohorts and audience read-only, saying where to change them", async (t) => {
  const form = draw({ ...kState, unleash: { strategies: [{ name: 'default' }] } } as FlatState);
  // Booleans, not the elements: tap would walk a whole DOM node to print one that failed.
  t.equal(form.querySelector('[name="trafficPercentage"]') === null, true, 'no percentage field');
  t.equal(form.querySelector('[name="audienceId"]') === null, true, 'no audience field');
  t.same(
    Array.from(form.querySelectorAll('input, select, textarea'), (e) => e.getAttribute('name')),
    ['enabled'],
    'only the switch is editable',
  );
  t.match(
    form.textContent,
    /Traffic percentage 30%, cohorts vip, audience Beta testers: read-only, as Unleash's strategies below decide instead\. Change a strategy's rollout, constraints or user ids there\./,
  );
  const held = holdRequests();
  form.querySelector<HTMLInputElement>('[name="enabled"]')!.checked = true;
  form.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  t.same(
    held.map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['PATCH', '/console/api/flags/f1?env=production', { enabled: true }]],
    'the switch alone is sent',
  );
  for (const r of held) r.answer({ status: 200, body: { changed: true } });
  await settle();
});

t.test('a state without a model keeps its percentage, cohorts and audience editable', async (t) => {
  const form = draw(kState);
  t.equal(form.querySelector('[name="trafficPercentage"]') !== null, true, 'a percentage field');
  t.equal(form.querySelector('[name="audienceId"]') !== null, true, 'an audience field');
  t.notMatch(form.textContent, /read-only/);
});

// A flag's scheduled changes (src/web-console/browser/schedule-section.ts), in a DOM with the API held by
// the test: the form sends nothing until it has a due time and a change (a field chosen, or other fields
// that are a JSON object), then posts the time as Unix ms (read as the browser's local time) and the
// change as a PATCH body of the fields chosen, in the chosen environment (its variants offered as the
// default); only pending changes offer Cancel, and only to editors.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { scheduleSection } from '../../../src/web-console/browser/schedule-section.js';
import type { FlagPageView } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const status = () => document.getElementById('status')!;
const kDue = Date.UTC(2026, 5, 1, 12);

function pageOf(opts: { envs?: Record<string, unknown>; editFlags?: boolean; schedules?: unknown[] } = {}): FlagPageView {
  return {
    flag: { id: 'f1', name: 'Checkout', environments: opts.envs },
    can: { editFlags: opts.editFlags ?? true },
    schedules: opts.schedules ?? [],
    audiences: [{ id: 'aud_1', name: 'Beta users' }],
  } as unknown as FlagPageView;
}

function draw(data: FlagPageView) {
  let reloads = 0;
  const section = scheduleSection(data, async () => {
    reloads++;
  });
  document.getElementById('page')!.replaceChildren(section);
  const input = (name: string) => section.querySelector<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(`[name="${name}"]`)!;
  const submit = () => section.querySelector('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
  return { section, input, submit, reloads: () => reloads };
}

t.test('no due time, no field chosen, or other fields that are not a JSON object: refused in the page; nothing is sent', async (t) => {
  const held = holdRequests();
  const { input, submit } = draw(pageOf());
  input('enabled').value = 'true';
  submit();
  await settle();
  t.equal(status().textContent, 'Choose when the change is due.');
  input('at').value = '2026-06-01T14:00';
  input('enabled').value = '';
  submit();
  await settle();
  t.equal(status().textContent, 'Choose at least one field to change; nothing was scheduled.');
  input('more').value = '{targeting: {}}';
  submit();
  await settle();
  t.match(status().textContent, /^The other fields are not JSON \(.+\); nothing was scheduled\.$/);
  input('more').value = '[1]';
  submit();
  await settle();
  t.equal(status().textContent, 'The other fields must be a JSON object, such as {"targeting": {}}; nothing was scheduled.');
  t.equal(held.length, 0);
});

t.test('the fields chosen are posted as the PATCH, with the time as Unix ms of the local time, in the chosen environment', async (t) => {
  const held = holdRequests();
  const envs = { staging: {}, 'prod/eu': { variants: { red: 'r', blue: 'b' } } };
  const { section, input, submit, reloads } = draw(pageOf({ envs }));
  const defaultShown = () => !input('defaultVariant').closest('label')!.hidden;
  t.notOk(defaultShown(), 'staging has no variants: no default variant to choose');
  input('at').value = '2026-06-01T14:00';
  input('env').value = 'prod/eu';
  input('env').dispatchEvent(new Event('change'));
  t.ok(defaultShown(), "prod/eu's variants offered");
  t.same(
    Array.from(input('defaultVariant').querySelectorAll('option')).map((o) => o.value),
    ['', 'red', 'blue'],
  );
  input('enabled').value = 'false';
  input('trafficPercentage').value = ' 25 ';
  input('audienceId').value = 'none';
  input('defaultVariant').value = 'blue';
  t.ok(section.querySelector('[aria-describedby]')!.getAttribute('aria-describedby'), 'the percentage says what it takes');
  input('more').value = '{"targeting": {"fractional": [["red", 1], ["blue", 1]]}}';
  submit();
  await settle();
  const at = new Date('2026-06-01T14:00').getTime();
  t.same(
    held.map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [
      [
        'POST',
        '/console/api/flags/f1/schedules?env=prod%2Feu',
        {
          at,
          patch: {
            targeting: {
              fractional: [
                ['red', 1],
                ['blue', 1],
              ],
            },
            enabled: false,
            trafficPercentage: 25,
            audienceId: null,
            defaultVariant: 'blue',
          },
        },
      ],
    ],
  );
  held[0]!.answer({ status: 201, body: {} });
  await settle();
  t.equal(reloads(), 1);
  t.match(status().textContent, /^Scheduled a change of Checkout for \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$/);
});

t.test('cohorts are sent only when chosen, as listed; a percentage that is not a number is sent as typed', async (t) => {
  const held = holdRequests();
  const { section, input, submit } = draw(pageOf());
  input('at').value = '2026-06-01T14:00';
  input('trafficPercentage').value = 'half';
  input('audienceId').value = 'aud_1';
  (input('setCohorts') as HTMLInputElement).checked = true;
  Array.from(section.querySelectorAll('button'))
    .find((b) => b.textContent === 'Add scheduled cohort')!
    .click();
  const box = section.querySelector<HTMLInputElement>('input[aria-label="Scheduled cohort 1"]')!;
  box.value = 'beta';
  box.dispatchEvent(new Event('input'));
  submit();
  await settle();
  t.same(JSON.parse(held[0]!.body!).patch, { trafficPercentage: 'half', audienceId: 'aud_1', cohorts: ['beta'] });
});

t.test('only a pending change offers Cancel, and only to editors; Cancel posts to the schedule', async (t) => {
  const schedules = [
    { id: 'sch_1', at: kDue, env: null, patch: { enabled: true }, status: 'pending', outcome: null },
    { id: 'sch_2', at: kDue, env: null, patch: { enabled: false }, status: 'applied', outcome: 'changed' },
  ];
  const viewer = draw(pageOf({ schedules, editFlags: false }));
  t.equal(viewer.section.querySelectorAll('button').length, 0);
  t.equal(viewer.section.querySelectorAll('form').length, 0);
  const held = holdRequests();
  const editor = draw(pageOf({ schedules }));
  const cancels = Array.from(editor.section.querySelectorAll<HTMLButtonElement>('tbody button'));
  t.same(
    cancels.map((b) => b.getAttribute('aria-label')),
    ['Cancel the change due 2026-06-01 12:00:00 UTC'],
  );
  cancels[0]!.click();
  await settle();
  t.same(
    held.map((r) => [r.method, r.url]),
    [['POST', '/console/api/schedules/sch_1/cancel']],
  );
  held[0]!.answer({ status: 200, body: {} });
  await settle();
  t.equal(editor.reloads(), 1);
  t.equal(status().textContent, 'Cancelled the change due 2026-06-01 12:00:00 UTC.');
});

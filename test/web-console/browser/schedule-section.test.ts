// A flag's scheduled changes (src/web-console/browser/schedule-section.ts), in a DOM with the API held by
// the test: the form sends nothing until it has a due time and a change that is JSON, then posts the
// time as Unix ms (read as the browser's local time) and the change as parsed, in the chosen
// environment; only pending changes offer Cancel, and only to editors.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { scheduleSection } from '../../../src/web-console/browser/schedule-section.js';
import type { FlagPageView } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const status = () => document.getElementById('status')!;
const kDue = Date.UTC(2026, 5, 1, 12);

function pageOf(opts: { envs?: string[]; editFlags?: boolean; schedules?: unknown[] } = {}): FlagPageView {
  const environments = opts.envs === undefined ? undefined : Object.fromEntries(opts.envs.map((e) => [e, {}]));
  return {
    flag: { id: 'f1', name: 'Checkout', environments },
    can: { editFlags: opts.editFlags ?? true },
    schedules: opts.schedules ?? [],
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

t.test('no due time, or a change that is not JSON, is refused in the page; nothing is sent', async (t) => {
  const held = holdRequests();
  const { input, submit } = draw(pageOf());
  input('patch').value = '{"enabled": true}';
  submit();
  await settle();
  t.equal(status().textContent, 'Choose when the change is due.');
  input('at').value = '2026-06-01T14:00';
  input('patch').value = '{enabled: true}';
  submit();
  await settle();
  t.match(status().textContent, /^The change is not JSON \(.+\); nothing was scheduled\.$/);
  t.equal(held.length, 0);
});

t.test('a valid change is posted as Unix ms of the local time and the parsed PATCH, in the chosen environment', async (t) => {
  const held = holdRequests();
  const { input, submit, reloads } = draw(pageOf({ envs: ['staging', 'prod/eu'] }));
  input('at').value = '2026-06-01T14:00';
  (input('env') as HTMLSelectElement).value = 'prod/eu';
  input('patch').value = '{"enabled": true, "trafficPercentage": 100}';
  submit();
  await settle();
  const at = new Date('2026-06-01T14:00').getTime();
  t.same(
    held.map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['POST', '/console/api/flags/f1/schedules?env=prod%2Feu', { at, patch: { enabled: true, trafficPercentage: 100 } }]],
  );
  held[0]!.answer({ status: 201, body: {} });
  await settle();
  t.equal(reloads(), 1);
  t.match(status().textContent, /^Scheduled a change of Checkout for \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$/);
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

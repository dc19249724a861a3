// A flag's progressive rollouts on the flag page (src/web-console/browser/rollout-section.ts), in a DOM
// with the API held by the test: per environment, the last rollout as a timeline (each step's hold as
// the steps are written, the current step marked, the next one's due time, or why it waits), the
// earlier five newest first, the actions the server offers and only those, a rollback only after it
// is confirmed, and the start form only to editors and only while no rollout is running or paused.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { rolloutSection } from '../../../src/web-console/browser/rollout-section.js';
import type { FlagPageView, RolloutView } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const kHour = 3_600_000;
const status = () => document.getElementById('status')!;

function rollout(over: Partial<RolloutView>): RolloutView {
  return {
    id: 'rol_1',
    flagId: 'f1',
    env: null,
    steps: [
      { percentage: 10, holdMs: kHour },
      { percentage: 50, holdMs: 90 * 60_000 },
      { percentage: 75, holdMs: 45_000 },
      { percentage: 100 },
    ],
    initialPercentage: 0,
    initialTargeting: null,
    current: 1,
    appliedAt: [Date.UTC(2026, 0, 1, 9), Date.UTC(2026, 0, 1, 10)],
    nextAt: Date.UTC(2026, 0, 1, 11, 30),
    status: 'running',
    pausedReason: null,
    guard: null,
    guardNextAt: null,
    guardReading: null,
    createdAt: Date.UTC(2026, 0, 1, 9),
    updatedAt: Date.UTC(2026, 0, 1, 10),
    createdBy: 'u1',
    createdByName: 'Ann',
    actions: ['pause', 'skip', 'rollback'],
    stepLabels: ['10:1h', '50:90m', '75:45s', '100'],
    guardLine: null,
    ...over,
  } as RolloutView;
}

/** The flag page's answer as far as the section reads it: the flag (flat or in environments), the rollouts, may edit. */
function pageOf(rollouts: RolloutView[], opts: { envs?: string[]; editFlags?: boolean } = {}): FlagPageView {
  const environments = opts.envs === undefined ? undefined : Object.fromEntries(opts.envs.map((e) => [e, {}]));
  return {
    flag: { id: 'f1', name: 'Checkout', environments },
    can: { editFlags: opts.editFlags ?? true },
    rollouts,
  } as unknown as FlagPageView;
}

function draw(data: FlagPageView) {
  let reloads = 0;
  const section = rolloutSection(data, async () => {
    reloads++;
  });
  document.getElementById('page')!.replaceChildren(section);
  const steps = () => Array.from(section.querySelectorAll('ol > li')).map((li) => li.textContent);
  const buttons = () => Array.from(section.querySelectorAll('button')).map((b) => b.textContent);
  const button = (text: string) => Array.from(section.querySelectorAll('button')).find((b) => b.textContent === text)!;
  return { section, steps, buttons, button, reloads: () => reloads };
}

t.test("a running rollout's steps: holds as written, the taken ones applied, the current marked, the next due", async (t) => {
  const { section, steps } = draw(pageOf([rollout({})]));
  t.same(steps(), [
    'Step 1: 10:1h · held 1h · applied 2026-01-01 09:00:00 UTC',
    'Step 2: 50:90m · held 90m · applied 2026-01-01 10:00:00 UTC current',
    'Step 3: 75:45s · held 45s · due 2026-01-01 11:30:00 UTC',
    'Step 4: 100 · held for good',
  ]);
  const current = section.querySelectorAll('[aria-current="step"]');
  t.equal(current.length, 1);
  t.match(current[0]!.textContent, /^Step 2:/);
});

t.test('a paused rollout says why, and its next step waits for a resume', async (t) => {
  const { section, steps } = draw(
    pageOf([rollout({ status: 'paused', nextAt: null, pausedReason: 'paused by Ann', actions: ['resume'] })]),
  );
  t.match(section.textContent, 'Why paused: paused by Ann');
  t.equal(steps()[2], 'Step 3: 75:45s · held 45s · waits until the rollout is resumed');
});

t.test('a rolled-back rollout marks no step current and says what it went back to', async (t) => {
  const back = { status: 'rolled-back' as const, nextAt: null, actions: [], initialPercentage: 5 };
  const byPercentage = draw(pageOf([rollout(back)]));
  t.equal(byPercentage.section.querySelectorAll('[aria-current]').length, 0);
  t.match(byPercentage.section.textContent, 'Rolled back 2026-01-01 10:00:00 UTC to 5% (the percentage before its first step).');
  const byWeights = draw(pageOf([rollout({ ...back, initialTargeting: { fractional: [['on', 10]] } })]));
  t.match(byWeights.section.textContent, 'to the targeting it had before its first step.');
});

t.test('each environment of a group flag shows its own rollouts: the last as a timeline, up to five earlier newest first', async (t) => {
  const done = (id: string, env: string) => rollout({ id, env, status: 'completed', current: 3, nextAt: null, actions: [] });
  const production = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id) => done(`rol_${id}`, 'production'));
  const { section } = draw(pageOf([...production, rollout({ id: 'rol_s', env: 'staging' })], { envs: ['staging', 'production'] }));
  const parts = Array.from(section.querySelectorAll('h3')).map((h) => h.textContent);
  t.same(parts, ['In staging', 'In production']);
  const timelines = Array.from(section.querySelectorAll('.timeline > p:first-child > strong')).map((s) => s.textContent);
  t.same(timelines, ['Rollout rol_s', 'Rollout rol_g']);
  const earlier = Array.from(section.querySelectorAll('.earlier li')).map((li) => li.textContent!.split(' · ')[0]);
  t.same(earlier, ['rol_f', 'rol_e', 'rol_d', 'rol_c', 'rol_b'], 'newest first, five at most, the last not repeated');
});

t.test('the buttons are the actions the server offers for the rollout, no others', async (t) => {
  t.same(draw(pageOf([rollout({})])).buttons(), ['Pause', 'Skip to the next step', 'Roll back']);
  t.same(draw(pageOf([rollout({ status: 'paused', actions: ['resume', 'skip', 'rollback'] })])).buttons(), [
    'Resume',
    'Skip to the next step',
    'Roll back',
  ]);
  t.same(draw(pageOf([rollout({ actions: [] })], { editFlags: false })).buttons(), []);
});

t.test('a rollback is sent only once confirmed; then the page reloads and says where the flag is', async (t) => {
  const held = holdRequests();
  const { button, reloads } = draw(pageOf([rollout({ initialPercentage: 5 })]));
  const dialogButton = (text: string) =>
    Array.from(document.querySelectorAll<HTMLButtonElement>('dialog button')).find((b) => b.textContent === text)!;
  button('Roll back').click();
  await settle();
  t.match(
    document.querySelector('dialog')!.textContent,
    'Checkout goes back to 5% (the percentage before its first step) and the rollout ends.',
  );
  dialogButton('Cancel').click();
  await settle();
  t.equal(held.length, 0, 'cancelled: nothing sent');
  button('Roll back').click();
  await settle();
  dialogButton('Roll back').click();
  await settle();
  t.same(
    held.map((r) => [r.method, r.url]),
    [['POST', '/console/api/rollouts/rol_1/rollback']],
  );
  held[0]!.answer({ status: 200, body: rollout({ status: 'rolled-back' }) });
  await settle();
  t.equal(reloads(), 1);
  t.equal(status().textContent, 'Rollout rol_1 rolled back: Checkout is back at 5% (the percentage before its first step).');
});

t.test('pause is sent at once and the status line says the step it holds', async (t) => {
  const held = holdRequests();
  const { button } = draw(pageOf([rollout({})]));
  button('Pause').click();
  await settle();
  t.same(
    held.map((r) => [r.method, r.url]),
    [['POST', '/console/api/rollouts/rol_1/pause']],
  );
  held[0]!.answer({ status: 200, body: rollout({ status: 'paused' }) });
  await settle();
  t.equal(status().textContent, 'Rollout rol_1 paused: paused at step 2 (50:90m).');
});

t.test('the start form: only to editors, only while no rollout is active', async (t) => {
  t.equal(draw(pageOf([])).section.querySelectorAll('form').length, 1, 'no rollout yet: offered');
  t.equal(draw(pageOf([], { editFlags: false })).section.querySelectorAll('form').length, 0, 'not to a viewer');
  const active = draw(pageOf([rollout({ status: 'paused' })]));
  t.equal(active.section.querySelectorAll('form').length, 0, 'not while one is paused');
  t.match(active.section.textContent, 'A new rollout can start once this one completes or is rolled back.');
  t.equal(draw(pageOf([rollout({ status: 'completed', actions: [] })])).section.querySelectorAll('form').length, 1, 'again once done');
});

/** The start form's table: each row's fields by their labels, its buttons, and the submit. */
function startForm(data: FlagPageView) {
  const drawn = draw(data);
  const { section } = drawn;
  const labelled = <E extends Element>(label: string) => section.querySelector<E>(`[aria-label="${label}"]`)!;
  const type = (label: string, value: string) => {
    const box = labelled<HTMLInputElement>(label);
    box.value = value;
    box.dispatchEvent(new Event('input'));
  };
  const rows = () =>
    Array.from(section.querySelectorAll('tbody tr')).map((tr) =>
      Array.from(tr.querySelectorAll('input, select'))
        .map((f) => (f as HTMLInputElement).value)
        .join(' '),
    );
  const submit = () => section.querySelector('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
  return { ...drawn, labelled, type, rows, submit };
}

t.test('the steps table: rows added, moved and removed, the last held for good; sent as the API body', async (t) => {
  const held = holdRequests();
  const form = startForm(pageOf([], { envs: ['prod/eu'] }));
  t.same(form.rows(), ['10 1 h', '100'], 'two steps to start from');
  t.match(form.section.querySelector('tbody tr:last-child')!.textContent, 'held for good');
  t.equal(
    form.labelled('Step 1 percentage in prod/eu').getAttribute('aria-describedby'),
    form.section.querySelector('p.muted[id]')!.id,
    'a percentage says what it takes',
  );
  form.button('Add step in prod/eu').click();
  form.type('Step 3 percentage in prod/eu', '50');
  t.same(form.rows(), ['10 1 h', '100  h', '50'], 'a step added last; the one before now has a hold');
  form.labelled<HTMLButtonElement>('Move step 3 up in prod/eu').click();
  t.same(form.rows(), ['10 1 h', '50  h', '100']);
  t.equal(document.activeElement?.getAttribute('aria-label'), 'Move step 2 up in prod/eu', 'focus follows the row moved');
  form.type('Step 2 held for in prod/eu', '90');
  form.labelled<HTMLSelectElement>('Step 2 hold unit in prod/eu').value = 'm';
  form.labelled('Step 2 hold unit in prod/eu').dispatchEvent(new Event('change'));
  form.button('Add step in prod/eu').click();
  form.labelled<HTMLButtonElement>('Remove step 4 in prod/eu').click();
  t.same(form.rows(), ['10 1 h', '50 90 m', '100']);
  form.submit();
  await settle();
  t.same(
    held.map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [
      [
        'POST',
        '/console/api/flags/f1/rollouts?env=prod%2Feu',
        {
          steps: [{ trafficPercentage: 10, holdMs: kHour }, { trafficPercentage: 50, holdMs: 90 * 60_000 }, { trafficPercentage: 100 }],
        },
      ],
    ],
  );
  held[0]!.answer({ status: 201, body: rollout({ id: 'rol_9', env: 'prod/eu' }) });
  await settle();
  t.equal(form.reloads(), 1);
  t.equal(status().textContent, 'Started rollout rol_9 of Checkout in prod/eu: its first step now.');
});

t.test("a typed flag's steps may set its variants' weights; a guard is sent as the API's", async (t) => {
  const held = holdRequests();
  const data = pageOf([]);
  (data.flag as { variants?: unknown }).variants = { on: true, off: false };
  const form = startForm(data);
  const kind = form.section.querySelector<HTMLSelectElement>('select[name="kind"]')!;
  kind.value = 'weights';
  kind.dispatchEvent(new Event('change'));
  t.same(
    Array.from(form.section.querySelectorAll('thead th')).map((th) => th.textContent),
    ['Step', 'Weight of on', 'Weight of off', 'Held for', 'Actions'],
  );
  form.type('Step 1 weight of on', '10');
  form.type('Step 1 weight of off', '90');
  form.type('Step 2 weight of on', '100');
  form.type('Step 2 weight of off', '0');
  const source = form.section.querySelector<HTMLSelectElement>('select[name="guardSource"]')!;
  const details = form.section.querySelector<HTMLElement>('input[name="guardExpression"]')!.closest('div[hidden], div')!;
  t.ok(form.section.querySelector('input[name="guardExpression"]')!.closest('[hidden]'), 'no guard: its fields hidden');
  source.value = 'prometheus';
  source.dispatchEvent(new Event('change'));
  t.notOk(details.closest('[hidden]'), 'a guard: its fields shown');
  form.section.querySelector<HTMLInputElement>('input[name="guardExpression"]')!.value = 'max(checkout_error_ratio)';
  form.section.querySelector<HTMLInputElement>('input[name="guardMax"]')!.value = '0.05';
  form.section.querySelector<HTMLInputElement>('input[name="guardEvery"]')!.value = '10';
  form.section.querySelector<HTMLSelectElement>('select[name="guardOnBreach"]')!.value = 'rollback';
  form.submit();
  await settle();
  t.same(JSON.parse(held[0]!.body!), {
    steps: [{ variantWeights: { on: 10, off: 90 }, holdMs: kHour }, { variantWeights: { on: 100, off: 0 } }],
    guard: { prometheus: 'max(checkout_error_ratio)', max: 0.05, intervalMs: 10_000, onBreach: 'rollback' },
  });
});

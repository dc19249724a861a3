// A flag's progressive rollouts on the flag page (docs/release-plans.md): for the flag, or for each
// environment of a group flag, its last rollout as a timeline (every step with its percentage and hold,
// when each step taken was applied, the current one marked, when the next is due), the actions the
// server offers for its status, and the earlier ones a line each. A form starts one: its steps as a table
// and its guard as fields, sent as the Management API's body, which the server checks as the API's.
import { askToConfirm } from './confirm-dialog.js';
import { api, dataTable, field, h, onSubmit, say, sayError } from './dom.js';
import { formatTime } from '../../words/time.js';
import { type GuardFields, kTimeUnitNames, rolloutRequest, type StepRow, type TimeUnit } from './rollout-steps.js';
import { emptyState } from './shell.js';
import type { FlagPageView, RolloutAction, RolloutBody, RolloutView } from './views.js';

/** How many earlier rollouts a timeline lists under it. */
const kEarlierShown = 5;
let hintIds = 0;

export function rolloutSection(data: FlagPageView, reload: () => Promise<void>): HTMLElement {
  const { flag } = data;
  const envs = flag.environments ? Object.keys(flag.environments) : [null];
  return h(
    'section',
    {},
    h('h2', {}, 'Rollout'),
    envs.map((env) => rolloutPart(data, env, reload)),
  );
}

/** The flag's (env null) or one environment's rollouts: the last as a timeline, the earlier below, the form. */
function rolloutPart(data: FlagPageView, env: string | null, reload: () => Promise<void>): HTMLElement {
  const plans = data.rollouts.filter((p) => p.env === env);
  const last = plans.at(-1);
  const earlier = plans.slice(-1 - kEarlierShown, -1).reverse();
  // One rollout running or paused per flag (environment): the writer refuses a second.
  const active = last !== undefined && (last.status === 'running' || last.status === 'paused');
  const where = env === null ? '' : ` in ${env}`;
  return h(
    'div',
    {},
    env === null ? null : h('h3', {}, `In ${env}`),
    last === undefined
      ? emptyState(`No rollout${where} yet.${data.can.editFlags ? ' Start one with the form below: the traffic rises step by step.' : ''}`)
      : timeline(data, last, where, reload),
    earlier.length === 0
      ? null
      : [
          h('p', { class: 'muted' }, `Earlier rollouts${where}, newest first:`),
          h(
            'ul',
            { class: 'earlier' },
            earlier.map((p) => h('li', {}, `${p.id} · ${p.stepLabels.join(' → ')} · ${p.status} · ${startedText(p)}`)),
          ),
        ],
    !data.can.editFlags
      ? null
      : active
        ? h('p', { class: 'muted' }, `A new rollout${where} can start once this one completes or is rolled back.`)
        : startForm(data, env, reload),
  );
}

function timeline(data: FlagPageView, plan: RolloutView, where: string, reload: () => Promise<void>): HTMLElement {
  return h(
    'div',
    { class: 'timeline' },
    rolloutHead(plan),
    h(
      'ol',
      { 'aria-label': `Steps of rollout ${plan.id}` },
      plan.steps.map((_, i) => stepItem(plan, i)),
    ),
    plan.actions.length === 0
      ? null
      : h(
          'div',
          { class: 'row' },
          plan.actions.map((a) => actionButton(data, plan, a, where, reload)),
        ),
  );
}

/**
 * The lines about the whole rollout, above its steps: which it is and who started it, its status, why
 * it is paused or where it rolled back to, and its guard with the guard's last reading.
 */
function rolloutHead(plan: RolloutView): HTMLElement[] {
  const lines = [
    h('p', {}, h('strong', {}, `Rollout ${plan.id}`), ` · ${startedText(plan)}`),
    h('p', {}, 'Status: ', h('strong', {}, plan.status)),
  ];
  if (plan.status === 'paused' && plan.pausedReason !== null) lines.push(h('p', { class: 'warning' }, `Why paused: ${plan.pausedReason}`));
  if (plan.status === 'rolled-back') {
    lines.push(h('p', {}, `Rolled back ${formatTime(plan.updatedAt)} to ${rolledBackTo(plan)}.`));
    if (plan.pausedReason !== null) lines.push(h('p', { class: 'warning' }, `Why: ${plan.pausedReason}`));
  }
  if (plan.guardLine !== null) lines.push(h('p', { class: plan.guardReading?.breached ? 'warning' : '' }, `Guard: ${plan.guardLine}`));
  return lines;
}

/** What a rollback restores: the percentage before the first step, or (by variant weights) the targeting. */
function rolledBackTo(plan: RolloutView): string {
  return plan.initialTargeting === null
    ? `${plan.initialPercentage}% (the percentage before its first step)`
    : 'the targeting it had before its first step';
}

/** One step: its percentage and hold, when it was applied (a step taken), current, or when it is due (the next). */
function stepItem(plan: RolloutView, i: number): HTMLElement {
  const step = plan.steps[i]!;
  const taken = i <= plan.current;
  // A rolled-back rollout holds no step: the flag is back at the percentage before the first.
  const current = i === plan.current && plan.status !== 'rolled-back';
  const next = i === plan.current + 1;
  const at = plan.appliedAt?.[i] ?? null;
  const parts = [`Step ${i + 1}: ${plan.stepLabels[i]}`, step.holdMs === undefined ? 'held for good' : `held ${holdText(step.holdMs)}`];
  if (taken) parts.push(at === null ? 'applied' : `applied ${formatTime(at)}`);
  if (next && plan.status === 'running' && plan.nextAt !== null) parts.push(`due ${formatTime(plan.nextAt)}`);
  if (next && plan.status === 'paused') parts.push('waits until the rollout is resumed');
  return h(
    'li',
    { class: current ? 'current' : taken ? 'taken' : null, 'aria-current': current ? 'step' : null },
    parts.join(' · '),
    current ? [' ', h('span', { class: 'pill active' }, 'current')] : null,
  );
}

const kActionText: Readonly<Record<RolloutAction, { label: string; done: string }>> = {
  pause: { label: 'Pause', done: 'paused' },
  resume: { label: 'Resume', done: 'resumed' },
  skip: { label: 'Skip to the next step', done: 'moved to its next step' },
  rollback: { label: 'Roll back', done: 'rolled back' },
};

function actionButton(
  data: FlagPageView,
  plan: RolloutView,
  action: RolloutAction,
  where: string,
  reload: () => Promise<void>,
): HTMLButtonElement {
  const text = kActionText[action];
  return h(
    'button',
    {
      type: 'button',
      class: action === 'rollback' ? 'danger' : null,
      onclick: async () => {
        if (
          action === 'rollback' &&
          !(await askToConfirm({
            title: `Roll back rollout ${plan.id}?`,
            text: `${data.flag.name}${where} goes back to ${rolledBackTo(plan)} and the rollout ends.`,
            confirm: 'Roll back',
            danger: true,
          }))
        )
          return;
        api<RolloutBody>('POST', `rollouts/${plan.id}/${action}`)
          .then(async (after) => {
            await reload();
            say(
              after.status === 'rolled-back'
                ? `Rollout ${plan.id} rolled back: ${data.flag.name}${where} is back at ${rolledBackTo(plan)}.`
                : `Rollout ${plan.id} ${text.done}: ${after.status} at step ${after.current + 1} (${plan.stepLabels[after.current]}).`,
            );
          })
          .catch(sayError);
      },
    },
    `${text.label}${where}`,
  );
}

/**
 * The form that starts a rollout: its steps as a table (a percentage, or a weight per variant of a typed
 * flag, and a hold; rows added, removed and moved), its guard, sent as the API's body (rollout-steps.ts).
 */
function startForm(data: FlagPageView, env: string | null, reload: () => Promise<void>): HTMLFormElement {
  const { flag } = data;
  const where = env === null ? '' : ` in ${env}`;
  const state = env === null ? flag : flag.environments?.[env];
  const variants = state?.variants ? Object.keys(state.variants) : null;
  const rows: StepRow[] = [
    { percentage: '10', weights: {}, hold: { amount: '1', unit: 'h' } },
    { percentage: '100', weights: {}, hold: { amount: '', unit: 'h' } },
  ];
  // A flag with typed variants may step their weights instead of its percentage (docs/release-plans.md).
  const kind =
    variants === null
      ? null
      : h(
          'select',
          { name: 'kind' },
          h('option', { value: 'percentage' }, 'The traffic percentage'),
          h('option', { value: 'weights' }, "The variants' weights"),
        );
  const byWeights = () => kind?.value === 'weights';
  const steps = stepsTable(rows, () => (byWeights() ? variants : null), where);
  kind?.addEventListener('change', () => steps.render(null));
  const guard = guardFields(where);
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
        const body = rolloutRequest(rows, byWeights() ? variants : null, guard.fields());
        const plan = await api<RolloutBody>('POST', `flags/${flag.id}/rollouts${query}`, body);
        await reload();
        say(`Started rollout ${plan.id} of ${flag.name}${where}: its first step now.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, `Start a rollout${where}`),
      kind === null ? null : field(`Each step sets${where}`, kind),
      steps.element,
      guard.element,
      h('p', {}, h('button', { type: 'submit' }, env === null ? 'Start rollout' : `Start rollout in ${env}`)),
    ),
  );
}

/**
 * The steps as a table, editing `rows` in place: a row per step with its percentage (or a weight per
 * variant of `variants()`), its hold (the last: held for good), and buttons that move it up or down or
 * remove it; a button adds a step. Focus follows the row moved, removed or added.
 */
function stepsTable(
  rows: StepRow[],
  variants: () => readonly string[] | null,
  where: string,
): { element: HTMLElement; render(focus: string | null): void } {
  const hintId = `rollout-hint-${++hintIds}`;
  const body = h('tbody');
  const head = h('tr');
  const text = (value: string, label: string, write: (v: string) => void, describedBy: string | null = null) => {
    const box = h('input', { type: 'text', inputmode: 'numeric', size: 6, value, 'aria-label': label, 'aria-describedby': describedBy });
    box.addEventListener('input', () => write(box.value));
    return box;
  };
  const button = (label: string, name: string, disabled: boolean, act: () => string | null) =>
    h(
      'button',
      { type: 'button', class: 'secondary', 'aria-label': name, 'data-focus': name, disabled, onclick: () => render(act()) },
      label,
    );
  const render = (focus: string | null) => {
    const names = variants();
    head.replaceChildren(
      h('th', { scope: 'col' }, 'Step'),
      ...(names === null ? [h('th', { scope: 'col' }, 'Percentage')] : names.map((v) => h('th', { scope: 'col' }, `Weight of ${v}`))),
      h('th', { scope: 'col' }, 'Held for'),
      h('th', { scope: 'col' }, 'Actions'),
    );
    body.replaceChildren(
      ...rows.map((row, i) => {
        const n = i + 1;
        const last = i === rows.length - 1;
        const unit = h(
          'select',
          { 'aria-label': `Step ${n} hold unit${where}` },
          Object.entries(kTimeUnitNames).map(([u, name]) => h('option', { value: u }, name)),
        );
        unit.value = row.hold.unit;
        unit.addEventListener('change', () => (row.hold.unit = unit.value as TimeUnit));
        return h(
          'tr',
          {},
          h('th', { scope: 'row' }, `Step ${n}`),
          names === null
            ? h(
                'td',
                {},
                text(row.percentage, `Step ${n} percentage${where}`, (v) => (row.percentage = v), hintId),
              )
            : names.map((v) =>
                h(
                  'td',
                  {},
                  text(row.weights[v] ?? '', `Step ${n} weight of ${v}${where}`, (w) => (row.weights[v] = w)),
                ),
              ),
          h(
            'td',
            {},
            last ? 'held for good' : [text(row.hold.amount, `Step ${n} held for${where}`, (v) => (row.hold.amount = v)), ' ', unit],
          ),
          h(
            'td',
            { class: 'row-actions' },
            button('Up', `Move step ${n} up${where}`, i === 0, () => {
              rows.splice(i - 1, 0, ...rows.splice(i, 1));
              return `Move step ${n - 1} up${where}`;
            }),
            button('Down', `Move step ${n} down${where}`, last, () => {
              rows.splice(i + 1, 0, ...rows.splice(i, 1));
              return `Move step ${n + 1} down${where}`;
            }),
            button('Remove', `Remove step ${n}${where}`, rows.length === 1, () => {
              rows.splice(i, 1);
              return `Remove step ${Math.min(n, rows.length)}${where}`;
            }),
          ),
        );
      }),
    );
    if (focus !== null) {
      const target = Array.from(body.querySelectorAll('button')).find((b) => b.dataset.focus === focus);
      // A button just disabled (the row moved to the top or the bottom) cannot hold focus: its row's first field does.
      (target?.disabled ? target.closest('tr')?.querySelector('input') : target)?.focus();
    }
  };
  render(null);
  const table = dataTable(`Steps${where}`, [], body);
  table.querySelector('thead')!.replaceChildren(head);
  const add = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        rows.push({ percentage: '', weights: {}, hold: { amount: '', unit: 'h' } });
        render(null);
        body.lastElementChild?.querySelector('input')?.focus();
      },
    },
    `Add step${where}`,
  );
  return {
    element: h(
      'div',
      {},
      table,
      h(
        'p',
        { class: 'muted', id: hintId },
        `A percentage is a whole number, 0 to 100, each no lower than the one before. Every step but the last is held for its time before the next; the first is applied at once.`,
      ),
      add,
    ),
    render,
  };
}

/** The guard's fields: none, a PromQL expression or a Flagwire metric, its bounds, how often it is read, what a breach does. */
function guardFields(where: string): { element: HTMLElement; fields(): GuardFields } {
  const hintId = `guard-hint-${++hintIds}`;
  const source = h(
    'select',
    { name: 'guardSource' },
    h('option', { value: 'none' }, 'No guard'),
    h('option', { value: 'prometheus' }, 'A Prometheus expression (PromQL)'),
    h('option', { value: 'flagwire' }, "A metric of this server's /metrics"),
  );
  const expression = h('input', { type: 'text', name: 'guardExpression', size: 40, 'aria-describedby': hintId });
  const min = h('input', { type: 'text', name: 'guardMin', inputmode: 'decimal', size: 8 });
  const max = h('input', { type: 'text', name: 'guardMax', inputmode: 'decimal', size: 8 });
  const every = h('input', { type: 'text', name: 'guardEvery', inputmode: 'numeric', size: 5 });
  const unit = h(
    'select',
    { name: 'guardEveryUnit' },
    Object.entries(kTimeUnitNames).map(([u, name]) => h('option', { value: u }, name)),
  );
  unit.value = 's';
  const onBreach = h(
    'select',
    { name: 'guardOnBreach' },
    h('option', { value: 'pause' }, 'Pause the rollout'),
    h('option', { value: 'rollback' }, 'Roll it back'),
  );
  const details = h(
    'div',
    { hidden: true },
    h('div', { class: 'row' }, field('Expression or metric', expression)),
    h(
      'div',
      { class: 'row' },
      field('Breach below (min)', min),
      field('Breach above (max)', max),
      field('Read every (30 seconds if blank)', every),
      field('Unit', unit),
      field('On a breach', onBreach),
    ),
    h(
      'p',
      { class: 'muted', id: hintId },
      'PromQL such as sum(rate(http_requests_total{code=~"5.."}[5m])) / sum(rate(http_requests_total[5m])), or a metric such as flagwire_http_requests_total{status="500"} (a counter is read as its rate per second). Give min, max or both.',
    ),
  );
  source.addEventListener('change', () => {
    details.hidden = source.value === 'none';
  });
  return {
    element: h('fieldset', {}, h('legend', {}, `Guard${where}`), field('Guarded by', source), details),
    fields: () => ({
      source: source.value as GuardFields['source'],
      expression: expression.value,
      min: min.value,
      max: max.value,
      interval: { amount: every.value, unit: unit.value as TimeUnit },
      onBreach: onBreach.value as GuardFields['onBreach'],
    }),
  };
}

function startedText(plan: RolloutView): string {
  return `started ${formatTime(plan.createdAt)} by ${plan.createdByName}`;
}

/** A hold as the steps are written: the largest of d, h, m, s that measures it whole (90m, not 1.5h). */
function holdText(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms / 1000}s`;
}

// A flag's progressive rollouts on the flag page (docs/release-plans.md): for the flag, or for each
// environment of a group flag, its last rollout as a timeline (every step with its percentage and hold,
// when each step taken was applied, the current one marked, when the next is due), the actions the
// server offers for its status, and the earlier ones a line each. A form starts one, its steps written
// as the CLI's --steps (`10:1h,50:1h,100`), which the server reads with the CLI's own parser.
import { askToConfirm } from './confirm-dialog.js';
import { api, field, formatTime, h, onSubmit, say, sayError } from './dom.js';
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

function startForm(data: FlagPageView, env: string | null, reload: () => Promise<void>): HTMLFormElement {
  const { flag } = data;
  const where = env === null ? '' : ` in ${env}`;
  const hintId = `rollout-steps-${++hintIds}`;
  const steps = h('input', {
    type: 'text',
    name: 'steps',
    required: true,
    placeholder: '10:1h,50:1h,100',
    'aria-describedby': hintId,
  });
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
        const plan = await api<RolloutBody>('POST', `flags/${flag.id}/rollouts${query}`, { steps: steps.value });
        await reload();
        say(`Started rollout ${plan.id} of ${flag.name}${where}: its first step now.`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, `Start a rollout${where}`),
      h(
        'div',
        { class: 'row' },
        field(env === null ? 'Steps' : `Steps in ${env}`, steps),
        h('button', { type: 'submit' }, env === null ? 'Start rollout' : `Start rollout in ${env}`),
      ),
      h(
        'p',
        { class: 'muted', id: hintId },
        'Percentages in order, each but the last held for a duration (N s, m, h or d) before the next: 10:1h,50:1h,100 is 10% now, 50% an hour later, 100% an hour after that.',
      ),
    ),
  );
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

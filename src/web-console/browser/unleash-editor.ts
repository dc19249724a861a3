// An Unleash-model state on the flag page (issue 60, item 5): its strategies in words
// (unleash-sentences.ts) and, for an editor, a form that edits a copy of the model: strategies added,
// removed and reordered, their parameters, constraints (every operator of the client specification),
// segments and variants, and the feature's variants. Saving sends the whole model in the flag's PATCH
// (the API replaces the model whole); the server checks it (src/unleash/rules/model-problems.ts) and a
// refusal's every problem is shown beside the part it names, nothing saved; a model changed since the
// page was drawn is not overwritten (the save reads it again first). Segment definitions,
// variant overrides and dependencies are kept as they are: the API edits them.
import type { UnleashConstraint, UnleashModel, UnleashStrategy, UnleashStrategyVariant } from '../../model/unleash-model.js';
import { ApiError, api, field, h, onSubmit, say } from './dom.js';
import { changeFlag } from './flag-change.js';
import { savedWithUndo } from './flag-undo.js';
import { confirmProtected } from './shell.js';
import {
  kListOperators,
  kOperatorWords,
  kStrategyParameters,
  kStrategyTitles,
  modelDescription,
  type StrategyName,
} from './unleash-sentences.js';
import type { FlagPageView, FlatState } from './views.js';

/** What a parameter is called on the page, and what it takes. */
const kParameterLabels: Readonly<Record<string, string>> = {
  rollout: 'Rollout %',
  percentage: 'Percentage',
  stickiness: 'Stickiness',
  groupId: 'Group id',
  userIds: 'User ids (comma-separated)',
  IPs: 'IP addresses or ranges (comma-separated)',
};

const kPayloadTypes = ['string', 'json', 'csv', 'number'] as const;

/** A new strategy's parameters, or a strategy's after its kind changed: what it reads, its own values kept. */
function parametersFor(name: StrategyName, old: UnleashStrategy['parameters'], flagName: string): Record<string, string | number> {
  const defaults: Record<string, string> = {
    rollout: '100',
    percentage: '100',
    stickiness: 'default',
    groupId: flagName,
    userIds: '',
    IPs: '',
  };
  const known = new Set(Object.values(kStrategyParameters).flat());
  const out: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(old ?? {})) if (!known.has(key)) out[key] = value;
  for (const key of kStrategyParameters[name]) out[key] = old?.[key] ?? defaults[key] ?? '';
  return out;
}

/** A weight typed: what does not read as a number is NaN, which JSON sends as null: the server's schema then names the variant. */
const weightOf = (raw: string): number => Number(raw.trim() === '' ? Number.NaN : raw);

/** A refusal's problems of the model (`unleash.strategies[0].constraints[1]: ...`), each with its path in the model. */
export function modelProblemsOf(detail: string): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  for (const part of detail.split('; ')) {
    const m = /^"?unleash((?:[.[][^":]*)?)"?: (.*)$/s.exec(part);
    if (m) out.push({ path: m[1]!.replace(/^\./, ''), message: m[2]! });
  }
  return out;
}

/** Whether a problem at `path` belongs to the part of the form at `at` (the part itself or something in it). */
const within = (path: string, at: string) => at === '' || path === at || path.startsWith(`${at}.`) || path.startsWith(`${at}[`);

/** A select's choices from a table of the model's names and their words: the words, the name beside them. */
const namedChoices = (table: Readonly<Record<string, string>>): [string, string][] =>
  Object.entries(table).map(([name, words]) => [name, `${words} (${name})`]);

let errorIds = 0;

export function unleashSection(data: FlagPageView, env: string | null, state: FlatState, reload: () => Promise<void>): HTMLElement | null {
  const stored = state.unleash;
  if (stored === undefined) return null;
  const where = env === null ? '' : ` in ${env}`;
  return h(
    'section',
    { 'aria-label': `Unleash strategies${where}` },
    h('h3', {}, `Unleash strategies${where}`),
    h(
      'p',
      { class: 'muted' },
      "This state is in Unleash's model: while it is on, the first strategy that lets a user in decides (none: the flag is off for them). Its traffic percentage, cohorts and audience are kept but not read.",
    ),
    modelDescription(stored, where),
    data.can.editFlags ? h('details', {}, h('summary', {}, `Edit strategies${where}`), editorForm(data, env, stored, reload)) : null,
  );
}

function editorForm(data: FlagPageView, env: string | null, stored: UnleashModel, reload: () => Promise<void>): HTMLFormElement {
  const { flag } = data;
  const where = env === null ? '' : ` in ${env}`;
  const model: UnleashModel = structuredClone(stored);
  const body = h('div', {});

  /** A text box writing into the model as it is typed; `name` is its accessible name, `label` the words shown. */
  const box = (label: string, name: string, value: string | number | undefined, write: (v: string) => void, key: string) => {
    const input = h('input', { type: 'text', value: value === undefined ? '' : String(value), 'aria-label': name, 'data-key': key });
    input.addEventListener('input', () => write(input.value));
    return field(label, input);
  };
  const button = (label: string, name: string, key: string, action: () => void, focusAfter: string | null = key) =>
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-label': name,
        'data-key': key,
        onclick: () => {
          action();
          draw(focusAfter);
        },
      },
      label,
    );
  const select = (label: string, name: string, options: [string, string][], value: string, write: (v: string) => void, key: string) => {
    const el = h(
      'select',
      { 'aria-label': name, 'data-key': key },
      options.map(([v, words]) => h('option', { value: v, selected: v === value }, words)),
    );
    el.addEventListener('change', () => {
      write(el.value);
      draw(key);
    });
    return field(label, el);
  };
  const check = (label: string, name: string, checked: boolean, write: (v: boolean) => void, key: string) => {
    const el = h('input', { type: 'checkbox', checked, 'aria-label': name, 'data-key': key });
    el.addEventListener('change', () => write(el.checked));
    return field(label, el);
  };

  const constraintRow = (s: number, constraints: UnleashConstraint[], c: number) => {
    const constraint = constraints[c]!;
    const n = `Strategy ${s + 1} constraint ${c + 1}`;
    const key = `s${s}c${c}`;
    const list = kListOperators.has(constraint.operator);
    const operands = list
      ? (() => {
          const area = h(
            'textarea',
            { rows: 2, 'aria-label': `${n} values, one per line${where}`, 'data-key': `${key}v` },
            (constraint.values ?? []).join('\n'),
          );
          area.addEventListener('input', () => {
            constraint.values = area.value.split('\n').filter((v) => v !== '');
          });
          return field('Values, one per line', area);
        })()
      : box('Value', `${n} value${where}`, constraint.value, (v) => (constraint.value = v), `${key}v`);
    return h(
      'li',
      { class: 'rule-condition', 'data-path': `strategies[${s}].constraints[${c}]` },
      box('Context field', `${n} context field${where}`, constraint.contextName, (v) => (constraint.contextName = v), `${key}f`),
      select(
        'Operator',
        `${n} operator${where}`,
        namedChoices(kOperatorWords),
        constraint.operator,
        (op) => {
          // The operands move between `value` and `values` when the operator takes the other kind.
          if (kListOperators.has(op) && !list) {
            constraint.values = constraint.value === undefined || constraint.value === '' ? [] : [constraint.value];
            delete constraint.value;
          } else if (!kListOperators.has(op) && list) {
            constraint.value = constraint.values?.[0] ?? '';
            delete constraint.values;
          }
          constraint.operator = op;
        },
        `${key}o`,
      ),
      operands,
      check('Inverted', `${n} inverted${where}`, constraint.inverted === true, (v) => (constraint.inverted = v), `${key}i`),
      check(
        'Ignore case',
        `${n} ignore case${where}`,
        constraint.caseInsensitive === true,
        (v) => (constraint.caseInsensitive = v),
        `${key}ci`,
      ),
      button('Remove', `Remove ${n.toLowerCase()}${where}`, `${key}r`, () => constraints.splice(c, 1), `s${s}addc`),
    );
  };

  const variantRows = (variants: UnleashStrategyVariant[], path: string, n: string, key: string) =>
    h(
      'ul',
      { class: 'list-items', 'data-path': path },
      variants.map((v, i) => {
        const vn = `${n} variant ${i + 1}`;
        const vk = `${key}v${i}`;
        return h(
          'li',
          { class: 'rule-condition', 'data-path': `${path}[${i}]` },
          box('Name', `${vn} name${where}`, v.name, (x) => (v.name = x), `${vk}n`),
          box('Weight', `${vn} weight${where}`, v.weight, (x) => (v.weight = weightOf(x)), `${vk}w`),
          box(
            'Stickiness',
            `${vn} stickiness${where}`,
            v.stickiness,
            (x) => {
              if (x === '') delete v.stickiness;
              else v.stickiness = x;
            },
            `${vk}s`,
          ),
          select(
            'Payload',
            `${vn} payload type${where}`,
            [['', 'none'], ...kPayloadTypes.map((t): [string, string] => [t, t])],
            v.payload?.type ?? '',
            (t) => {
              if (t === '') delete v.payload;
              else v.payload = { type: t as (typeof kPayloadTypes)[number], value: v.payload?.value ?? '' };
            },
            `${vk}pt`,
          ),
          v.payload === undefined
            ? null
            : box('Payload value', `${vn} payload value${where}`, v.payload.value, (x) => (v.payload!.value = x), `${vk}pv`),
          button('Remove', `Remove ${vn.toLowerCase()}${where}`, `${vk}r`, () => variants.splice(i, 1), `${key}addv`),
        );
      }),
    );
  /** `variants`: the list as it is (absent: none yet); `create`: the list to add to, made when first needed. */
  const variantsPart = (
    variants: UnleashStrategyVariant[] | undefined,
    create: () => UnleashStrategyVariant[],
    path: string,
    n: string,
    key: string,
    legend: string,
  ) => {
    const total = (variants ?? []).reduce((sum, v) => sum + (Number.isFinite(v.weight) ? v.weight : 0), 0);
    return h(
      'fieldset',
      { 'data-path': path },
      h('legend', {}, legend),
      variants === undefined || variants.length === 0
        ? h('p', { class: 'muted' }, 'No variants.')
        : [h('p', { class: 'muted' }, `Weights total ${total}.`), variantRows(variants, path, n, key)],
      button('Add variant', `Add variant to ${n.toLowerCase()}${where}`, `${key}addv`, () => {
        const list = create();
        list.push({ name: `variant-${list.length + 1}`, weight: 0, stickiness: 'default' });
      }),
    );
  };

  const strategyPart = (strategy: UnleashStrategy, s: number) => {
    const n = `Strategy ${s + 1}`;
    const key = `s${s}`;
    const strategies = model.strategies;
    const parameters = strategy.parameters ?? {};
    const known = kStrategyParameters[strategy.name as StrategyName] ?? [];
    const constraints = strategy.constraints ?? [];
    const segments = model.segments ?? [];
    const move = (to: number) => () => {
      strategies.splice(s, 1);
      strategies.splice(to, 0, strategy);
    };
    return h(
      'fieldset',
      { 'data-path': `strategies[${s}]` },
      h('legend', {}, `${n} of ${strategies.length}`),
      h(
        'div',
        { class: 'row' },
        select(
          'Strategy',
          `${n} strategy${where}`,
          namedChoices(kStrategyTitles),
          strategy.name,
          (name) => {
            strategy.parameters = parametersFor(name as StrategyName, strategy.parameters, flag.name);
            strategy.name = name;
          },
          `${key}k`,
        ),
        known.map((p) =>
          h(
            'span',
            { 'data-path': `strategies[${s}].parameters.${p}` },
            box(
              kParameterLabels[p] ?? p,
              `${n} ${(kParameterLabels[p] ?? p).toLowerCase()}${where}`,
              parameters[p],
              (v) => {
                strategy.parameters ??= {};
                strategy.parameters[p] = v;
              },
              `${key}p${p}`,
            ),
          ),
        ),
      ),
      h('p', {}, `Constraints of ${n.toLowerCase()} (all must hold):`),
      h(
        'ul',
        { class: 'list-items' },
        constraints.length === 0 ? h('li', { class: 'muted' }, 'None: every user the strategy lets in.') : null,
        constraints.map((_, c) => constraintRow(s, constraints, c)),
      ),
      button('Add constraint', `Add constraint to ${n.toLowerCase()}${where}`, `${key}addc`, () => {
        strategy.constraints ??= [];
        strategy.constraints.push({ contextName: 'userId', operator: 'IN', values: [] });
      }),
      segments.length === 0
        ? null
        : h(
            'div',
            { 'data-path': `strategies[${s}].segments` },
            'Segments: ',
            segments.map((segment) =>
              check(
                segment.name ?? `#${segment.id}`,
                `${n} segment ${segment.name ?? segment.id}${where}`,
                (strategy.segments ?? []).includes(segment.id),
                (on) => {
                  const chosen = new Set(strategy.segments ?? []);
                  if (on) chosen.add(segment.id);
                  else chosen.delete(segment.id);
                  strategy.segments = segments.map((x) => x.id).filter((id) => chosen.has(id));
                },
                `${key}g${segment.id}`,
              ),
            ),
          ),
      variantsPart(
        strategy.variants,
        () => (strategy.variants ??= []),
        `strategies[${s}].variants`,
        n,
        key,
        `Variants of ${n.toLowerCase()}`,
      ),
      h(
        'div',
        { class: 'row' },
        s === 0 ? null : button('Move up', `Move up ${n.toLowerCase()}${where}`, `${key}up`, move(s - 1), `s${s - 1}up`),
        s === strategies.length - 1
          ? null
          : button('Move down', `Move down ${n.toLowerCase()}${where}`, `${key}down`, move(s + 1), `s${s + 1}down`),
        button('Remove strategy', `Remove ${n.toLowerCase()}${where}`, `${key}remove`, () => strategies.splice(s, 1), 'addstrategy'),
      ),
    );
  };

  /** Draws the copy again (a part added, removed, moved, or of another kind), focus kept on the control `focus` names. */
  function draw(focus: string | null = null): void {
    body.replaceChildren(
      ...model.strategies.map(strategyPart),
      button('Add strategy', `Add strategy${where}`, 'addstrategy', () =>
        model.strategies.push({ name: 'flexibleRollout', parameters: parametersFor('flexibleRollout', {}, flag.name), constraints: [] }),
      ),
      variantsPart(
        model.variants,
        () => (model.variants ??= []),
        'variants',
        'Feature',
        'f',
        `Feature variants${where} (when the strategy that let a user in has none)`,
      ),
    );
    if (focus !== null) body.querySelector<HTMLElement>(`[data-key="${focus}"]`)?.focus();
  }
  draw();

  /** Each problem beside the part it names (the innermost), its controls marked invalid and described by it. */
  const showProblems = (problems: { path: string; message: string }[]) => {
    for (const old of Array.from(body.querySelectorAll('.field-error'))) old.remove();
    for (const el of Array.from(body.querySelectorAll('[aria-invalid]'))) {
      el.removeAttribute('aria-invalid');
      el.removeAttribute('aria-describedby');
    }
    for (const problem of problems) {
      const parts = Array.from(body.querySelectorAll<HTMLElement>('[data-path]')).filter((el) => within(problem.path, el.dataset.path!));
      const at = parts.sort((a, b) => b.dataset.path!.length - a.dataset.path!.length)[0] ?? body;
      const id = `unleash-problem-${++errorIds}`;
      at.append(h('p', { class: 'error field-error', id }, problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`));
      for (const control of Array.from(at.querySelectorAll('input, select, textarea')).slice(0, 1)) {
        control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', id);
      }
    }
  };

  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        // The copy holds what was stored and only what was edited: parts are made when first added to.
        if (JSON.stringify(model) === JSON.stringify(stored))
          return say(`Nothing changed: ${flag.name} already had these strategies${where}.`);
        if (!(await confirmProtected(data.project, env, `Save the Unleash strategies${where} of ${flag.name}`))) return;
        // The model is sent whole: a model changed since the page was drawn (by someone else, or another
        // tab) would be overwritten unseen, so it is read again first, to say which part changed. What
        // changes between this read and the PATCH is refused by the PATCH's If-Match (flag-change.ts).
        const now = (await api<Pick<FlagPageView, 'flag'>>('GET', `flags/${flag.id}`)).flag;
        const current = env === null ? now.unleash : now.environments?.[env]?.unleash;
        if (JSON.stringify(current) !== JSON.stringify(stored))
          return say(
            `Not saved: the Unleash strategies${where} of ${flag.name} were changed since this page was drawn. Reload the page to see them, then make your change again.`,
            'error',
          );
        const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
        try {
          if ((await changeFlag(data, 'PATCH', `flags/${flag.id}${query}`, { unleash: model }, reload)) === null) return;
        } catch (err) {
          if (err instanceof ApiError && err.status === 400) showProblems(modelProblemsOf(err.detail));
          throw err;
        }
        await reload();
        savedWithUndo(`Saved Unleash strategies${where} of ${flag.name}.`, flag, env, { unleash: stored }, reload);
      }),
    },
    h(
      'p',
      { class: 'muted' },
      'Strategies are tried in order. Segment definitions, variant overrides and dependencies are kept as they are (the Management API edits them).',
    ),
    body,
    h('button', { type: 'submit' }, `Save strategies${where}`),
  );
}

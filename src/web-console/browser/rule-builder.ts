// The flag page's rule builder (issue 47): a flagd targeting rule as branches of conditions on context
// attributes, each serving a variant or a weighted split, then what everyone else gets. It edits the same
// rule as the JSON view beside it (the form's `targeting` text box): every edit here writes the JSON there
// (rule-model.ts modelToRule), and typing there shows the rule here when the builder can
// (ruleToModel), or the sentence saying why not. The builder's checks (modelProblems) are shown as the
// rule is edited and stop a save; the server then checks the rule as it always did.
import { h } from './dom.js';
import {
  type Bucket,
  type Compare,
  type CompareOp,
  kCompareOps,
  kOpLabels,
  kSemVerOps,
  modelProblems,
  modelToRule,
  type Outcome,
  type RuleModel,
  type RuleNode,
  ruleToModel,
  type Scalar,
  type SemVerOp,
  splitPercentages,
} from './rule-model.js';

export interface RuleBuilder {
  readonly element: HTMLElement;
  /** The builder's checks on the rule it shows; empty when it shows none (the JSON view's rule goes to the server as typed). */
  problems(): string[];
  /** Draws the builder again (the variants' names changed). */
  refresh(): void;
}

type ValueType = 'text' | 'number' | 'boolean';

const typeOf = (v: Scalar): ValueType => (typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'text');
/** A typed value as the type chosen: a number that is not one stays NaN, which the builder's checks name. */
const asType = (text: string, type: ValueType): Scalar =>
  type === 'number' ? (text.trim() === '' ? Number.NaN : Number(text)) : type === 'boolean' ? text === 'true' : text;
const shown = (v: Scalar): string => (typeof v === 'number' && Number.isNaN(v) ? '' : String(v));

/** A new condition with `op`, keeping the attribute and what of the value still fits. */
function withOp(old: Compare, op: CompareOp): Compare {
  const { attribute } = old;
  const text = Array.isArray(old.value) ? String(old.value[0] ?? '') : shown(old.value);
  switch (op) {
    case '==':
    case '!=':
      return { kind: 'compare', attribute, op, value: Array.isArray(old.value) ? (old.value[0] ?? '') : old.value };
    case 'in':
      return { kind: 'compare', attribute, op, value: Array.isArray(old.value) ? old.value : [old.value] };
    case 'starts_with':
    case 'ends_with':
      return { kind: 'compare', attribute, op, value: text };
    case 'sem_ver':
      return { kind: 'compare', attribute, op, semVer: '>=', value: text };
    default:
      return { kind: 'compare', attribute, op, value: asType(text, 'number') as number };
  }
}

const newCompare = (): Compare => ({ kind: 'compare', attribute: '', op: '==', value: '' });

/** The condition kinds a condition's operator list offers: the comparisons, then a shared fragment. */
const kFragmentOp = 'fragment';

/**
 * The builder of `json` (the form's rule text box), `where` naming the state (" in production") in every
 * control's name, `variants` the variant names as the form has them now, `fragments` the names of the
 * project's shared fragments (a condition may be one: `{"$ref": NAME}`).
 */
export function ruleBuilder(
  json: HTMLTextAreaElement,
  where: string,
  variants: () => string[],
  fragments: readonly string[] = [],
): RuleBuilder {
  let model: RuleModel | null = null;
  const body = h('div', { class: 'rule-builder-body' });
  const checks = h('div', { class: 'muted', role: 'status' });
  const element = h(
    'fieldset',
    { class: 'rule-builder' },
    h('legend', {}, `Rule builder${where}`),
    h(
      'p',
      { class: 'muted' },
      'Branches are tried in order: the first whose conditions hold serves its variant or split; otherwise the last line applies. The JSON view beside it is the same rule.',
    ),
    body,
    checks,
  );

  /** Writes the model into the JSON view and shows the checks. */
  const write = () => {
    if (model === null) return;
    const rule = modelToRule(model);
    json.value = Object.keys(rule).length === 0 ? '' : JSON.stringify(rule, null, 2);
    showChecks();
  };
  const showChecks = () => {
    const problems = model === null ? [] : modelProblems(model, variants(), fragments);
    checks.className = problems.length === 0 ? 'muted' : 'error';
    checks.replaceChildren(
      problems.length === 0
        ? model === null
          ? ''
          : 'The builder finds nothing wrong with this rule.'
        : h(
            'ul',
            {},
            problems.map((p) => h('li', {}, p)),
          ),
    );
  };
  /** A structural edit: the model changed shape, so it is drawn again, focus on the first control named in `focus` that is there. */
  const changed = (focus: string | readonly string[] | null) => {
    write();
    render(focus);
  };

  const label = (text: string) => `${text}${where}`;
  const control = <E extends HTMLElement>(el: E, name: string): E => {
    el.setAttribute('aria-label', label(name));
    el.dataset.key = name;
    return el;
  };
  const textBox = (value: string, name: string, onInput: (v: string) => void, type = 'text') => {
    const box = control(h('input', { type, value }), name);
    box.addEventListener('input', () => {
      onInput(box.value);
      write();
    });
    return box;
  };
  const choice = (
    options: readonly (readonly [string, string])[],
    value: string,
    name: string,
    onChange: (v: string) => void,
    focusAfter = name,
  ) => {
    const select = control(
      h(
        'select',
        {},
        options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
      ),
      name,
    );
    select.addEventListener('change', () => {
      onChange(select.value);
      changed(focusAfter);
    });
    return select;
  };
  const button = (text: string, name: string, onClick: () => void) => {
    const b = control(h('button', { type: 'button', class: 'secondary' }, text), name);
    b.addEventListener('click', onClick);
    return b;
  };

  /** The variant names to choose from: the form's, and the one chosen when it is none of them (the checks name it). */
  const variantOptions = (chosen: string): [string, string][] => {
    const names = variants();
    return [...(names.includes(chosen) ? [] : [chosen]), ...names].map((n) => [n, n]);
  };

  const valueControls = (c: Compare, place: string): HTMLElement[] => {
    const set = (value: Compare['value']) => {
      (c as { value: Compare['value'] }).value = value;
    };
    switch (c.op) {
      case '==':
      case '!=': {
        const type = typeOf(c.value);
        const typeChoice = choice(
          [
            ['text', 'text'],
            ['number', 'number'],
            ['boolean', 'true/false'],
          ],
          type,
          `${place} value type`,
          (t) => set(t === 'boolean' ? true : asType(shown(c.value), t as ValueType)),
        );
        const value =
          type === 'boolean'
            ? choice(
                [
                  ['true', 'true'],
                  ['false', 'false'],
                ],
                String(c.value),
                `${place} value`,
                (v) => set(v === 'true'),
              )
            : textBox(shown(c.value), `${place} value`, (v) => set(asType(v, type)));
        return [value, typeChoice];
      }
      case 'in': {
        const type = typeOf(c.value[0] ?? '');
        const list = control(
          h('textarea', { rows: Math.max(2, c.value.length) }, c.value.map(shown).join('\n')),
          `${place} values, one a line`,
        );
        list.addEventListener('input', () => {
          set(
            list.value
              .split('\n')
              .filter((line) => line !== '')
              .map((line) => asType(line, type)),
          );
          write();
        });
        const typeChoice = choice(
          [
            ['text', 'text'],
            ['number', 'numbers'],
          ],
          type,
          `${place} values type`,
          (t) => set(c.value.map((v) => asType(shown(v), t as ValueType))),
        );
        return [list, typeChoice];
      }
      case 'sem_ver':
        return [
          choice(
            kSemVerOps.map((op) => [op, op]),
            c.semVer,
            `${place} version comparison`,
            (op) => {
              (c as { semVer: SemVerOp }).semVer = op as SemVerOp;
            },
          ),
          textBox(c.value, `${place} version`, (v) => set(v)),
        ];
      case 'starts_with':
      case 'ends_with':
        return [textBox(c.value, `${place} value`, (v) => set(v))];
      default:
        return [textBox(shown(c.value), `${place} number`, (v) => set(asType(v, 'number')))];
    }
  };

  /**
   * One node of a branch's conditions at `place` ("Branch 1 condition 1.2"); `replace` puts another node
   * in its place, `remove` takes it out of its group and names the control to focus then (null: the
   * branch's top, removed with the branch).
   */
  const nodeView = (node: RuleNode, place: string, replace: (n: RuleNode) => void, remove: (() => string) | null): HTMLElement => {
    const removeButton = remove === null ? null : button('Remove', `Remove ${place}`, () => changed(remove()));
    if (node.kind === 'not') {
      return h(
        'div',
        { class: 'rule-not' },
        h('span', {}, 'not: '),
        button('Remove not', `Remove not from ${place}`, () => {
          replace(node.item);
          changed(`Negate ${place}`);
        }),
        removeButton,
        nodeView(
          node.item,
          place,
          (n) => {
            node.item = n;
          },
          null,
        ),
      );
    }
    const negate = button('Negate', `Negate ${place}`, () => {
      replace({ kind: 'not', item: node, bare: false });
      changed(`Remove not from ${place}`);
    });
    // The operator list: the comparisons, and "matches shared fragment" when the project has any (or the
    // condition is one already). Choosing a comparison on a fragment condition starts a new comparison.
    const operators = (current: string) =>
      choice(
        [
          ...kCompareOps.map((op): [string, string] => [op, kOpLabels[op]]),
          ...(fragments.length > 0 || node.kind === 'fragment' ? [[kFragmentOp, 'matches shared fragment'] as [string, string]] : []),
        ],
        current,
        `${place} operator`,
        (op) => {
          if (op === kFragmentOp) replace({ kind: 'fragment', name: fragments[0] ?? '' });
          else replace(withOp(node.kind === 'compare' ? node : newCompare(), op as CompareOp));
        },
      );
    if (node.kind === 'fragment') {
      const names = [...(fragments.includes(node.name) ? [] : [node.name]), ...fragments];
      const pick = choice(
        names.map((n): [string, string] => [n, n === '' ? '(none)' : n]),
        node.name,
        `${place} shared fragment`,
        (name) => {
          node.name = name;
        },
      );
      return h('div', { class: 'rule-condition' }, operators(kFragmentOp), pick, negate, removeButton);
    }
    if (node.kind === 'compare') {
      const ops = operators(node.op);
      const attribute = textBox(node.attribute, `${place} attribute`, (v) => {
        node.attribute = v;
      });
      return h('div', { class: 'rule-condition' }, attribute, ops, ...valueControls(node, place), negate, removeButton);
    }
    const items = node.items.map((item, i) =>
      h(
        'li',
        {},
        nodeView(
          item,
          `${place}.${i + 1}`,
          (n) => {
            node.items[i] = n;
          },
          () => {
            node.items.splice(i, 1);
            return `Add condition to ${place}`;
          },
        ),
      ),
    );
    const add = (what: RuleNode, focus: string) => () => {
      node.items.push(what);
      changed(focus);
    };
    const next = `${place}.${node.items.length + 1}`;
    return h(
      'div',
      { class: 'rule-group' },
      choice(
        [
          ['all', 'all of these hold'],
          ['any', 'any of these holds'],
        ],
        node.kind,
        `${place} group`,
        (kind) => replace({ kind: kind as 'all' | 'any', items: node.items }),
      ),
      negate,
      removeButton,
      h('ol', {}, items),
      button('Add condition', `Add condition to ${place}`, add(newCompare(), `${next} attribute`)),
      ' ',
      button('Add group', `Add group to ${place}`, add({ kind: 'any', items: [newCompare()] }, `${next}.1 attribute`)),
    );
  };

  const outcomeView = (outcome: Outcome | null, place: string, set: (o: Outcome) => void): HTMLElement => {
    const kind = outcome === null || outcome.kind === 'default' ? 'default' : outcome.kind === 'split' ? 'split' : `v:${outcome.name}`;
    const names = variants();
    const serve = choice(
      [...(outcome?.kind === 'variant' && !names.includes(outcome.name) ? [outcome.name] : []), ...names]
        .map((n): [string, string] => [`v:${n}`, `variant ${n}`])
        .concat([
          ['split', 'a split of variants'],
          ['default', 'the default variant'],
        ]),
      kind,
      `${place} serves`,
      (v) => {
        if (v === 'default') set({ kind: 'default' });
        else if (v === 'split') set({ kind: 'split', by: null, buckets: names.slice(0, 2).map((variant) => ({ variant, weight: 50 })) });
        else set({ kind: 'variant', name: v.slice(2) });
      },
    );
    if (outcome?.kind !== 'split') return h('div', { class: 'rule-serve' }, h('span', {}, 'serve '), serve);
    const split = outcome;
    const percentages = splitPercentages(split.buckets);
    const percentText = (i: number) => `${percentages[i]}%`;
    const shareText: HTMLElement[] = [];
    const updatePercentages = () => {
      const now = splitPercentages(split.buckets);
      shareText.forEach((el, i) => {
        el.textContent = `${now[i]}%`;
      });
    };
    const shares = split.buckets.map((bucket: Bucket, i) => {
      const share = `${place} share ${i + 1}`;
      const text = h('span', { class: 'rule-percent' }, percentText(i));
      shareText.push(text);
      const weight = textBox(
        bucket.weight === null ? '' : String(bucket.weight),
        `${share} weight`,
        (v) => {
          bucket.weight = v.trim() === '' ? null : Number(v);
          updatePercentages();
        },
        'text',
      );
      weight.setAttribute('inputmode', 'numeric');
      return h(
        'li',
        {},
        choice(variantOptions(bucket.variant), bucket.variant, `${share} variant`, (v) => {
          bucket.variant = v;
        }),
        weight,
        text,
        button('Remove', `Remove ${share}`, () => {
          split.buckets.splice(i, 1);
          changed(`Add share to ${place}`);
        }),
      );
    });
    const byAttribute = split.by !== null;
    return h(
      'div',
      { class: 'rule-serve' },
      h('span', {}, 'serve '),
      serve,
      h('span', {}, ' bucketed by '),
      choice(
        [
          ['key', 'the flag and targeting key (default)'],
          ['attribute', 'an attribute'],
        ],
        byAttribute ? 'attribute' : 'key',
        `${place} buckets by`,
        (v) => {
          split.by = v === 'attribute' ? '' : null;
        },
      ),
      byAttribute
        ? textBox(split.by ?? '', `${place} bucketing attribute`, (v) => {
            split.by = v;
          })
        : null,
      h(
        'p',
        { class: 'muted' },
        'Each share is a whole-number weight, shown as its percentage of the total (weights of 100 in all read as percentages).',
      ),
      h('ol', { class: 'rule-shares' }, shares),
      button('Add share', `Add share to ${place}`, () => {
        split.buckets.push({ variant: names[0] ?? '', weight: 0 });
        changed(`${place} share ${split.buckets.length} weight`);
      }),
    );
  };

  const render = (focus: string | readonly string[] | null = null) => {
    if (model === null) return;
    const m = model;
    const branches = m.branches.map((branch, i) => {
      const place = `Branch ${i + 1}`;
      const move = (to: number) => () => {
        const [moved] = m.branches.splice(i, 1);
        m.branches.splice(to, 0, moved!);
        // Focus stays on the button pressed, or on the other one where the branch reached an end.
        const [pressed, other] = to < i ? ['up', 'down'] : ['down', 'up'];
        changed([`Move ${pressed} Branch ${to + 1}`, `Move ${other} Branch ${to + 1}`]);
      };
      return h(
        'li',
        { class: 'rule-branch' },
        h(
          'fieldset',
          {},
          h('legend', {}, `${place}: if`),
          nodeView(
            branch.when,
            `${place} condition 1`,
            (n) => {
              branch.when = n;
            },
            null,
          ),
          branch.when.kind === 'all' || branch.when.kind === 'any'
            ? null
            : button('Add condition', `Add condition to ${place}`, () => {
                branch.when = { kind: 'all', items: [branch.when, newCompare()] };
                changed(`${place} condition 1.2 attribute`);
              }),
          outcomeView(branch.serve, place, (o) => {
            branch.serve = o;
          }),
          h(
            'div',
            { class: 'row' },
            i > 0 ? button('Move up', `Move up ${place}`, move(i - 1)) : null,
            i < m.branches.length - 1 ? button('Move down', `Move down ${place}`, move(i + 1)) : null,
            button('Remove branch', `Remove ${place}`, () => {
              m.branches.splice(i, 1);
              changed('Add branch');
            }),
          ),
        ),
      );
    });
    body.replaceChildren(
      m.branches.length === 0
        ? h('p', {}, 'No branch yet: everyone the state lets in gets what the last line says.')
        : h('ol', { class: 'rule-branches' }, branches),
      button('Add branch', 'Add branch', () => {
        m.branches.push({ when: newCompare(), serve: { kind: 'variant', name: variants()[0] ?? '' } });
        // Written out (`null`, the default variant), so the chain ends in an else: the playground then names the branch that held.
        if (m.otherwise === null) m.otherwise = { kind: 'default' };
        changed(`Branch ${m.branches.length} condition 1 attribute`);
      }),
      h(
        'fieldset',
        {},
        h('legend', {}, m.branches.length === 0 ? 'Everyone' : 'Otherwise'),
        outcomeView(m.otherwise, 'Otherwise', (o) => {
          m.otherwise = o;
        }),
      ),
    );
    const keyed = [...body.querySelectorAll<HTMLElement>('[data-key]')];
    for (const key of focus === null ? [] : typeof focus === 'string' ? [focus] : focus) {
      const target = keyed.find((el) => el.dataset.key === key);
      if (target !== undefined) {
        target.focus();
        break;
      }
    }
    showChecks();
  };

  /** Shows the JSON view's rule, or why the builder cannot. */
  const read = () => {
    const text = json.value.trim();
    let rule: unknown = {};
    if (text !== '') {
      try {
        rule = JSON.parse(text);
      } catch (err) {
        model = null;
        body.replaceChildren(
          h('p', {}, `The JSON view holds no JSON yet (${(err as Error).message}); the builder shows the rule once it does.`),
        );
        showChecks();
        return;
      }
    }
    const result = ruleToModel(rule);
    if (result.ok) {
      model = result.model;
      render();
    } else {
      model = null;
      body.replaceChildren(h('p', {}, result.why));
      showChecks();
    }
  };
  json.addEventListener('input', read);
  read();
  return {
    element,
    problems: () => (model === null ? [] : modelProblems(model, variants(), fragments)),
    refresh: () => render(),
  };
}

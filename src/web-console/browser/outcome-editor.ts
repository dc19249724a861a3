// What a branch of the rule builder serves, or everyone else (rule-builder.ts): a variant, the flag's
// default variant, or a weighted split of variants with its bucketing and each share's percentage.
import { h } from './dom.js';
import { button, choice, type RuleEditing, textBox } from './rule-controls.js';
import { type Bucket, type Outcome, splitPercentages } from './rule-model.js';

/**
 * The editor of `outcome` at `place` ("Branch 1", "Otherwise"; null: left out of the rule, shown as the
 * default variant); `set` puts another outcome in its place.
 */
export function outcomeEditor(ed: RuleEditing, outcome: Outcome | null, place: string, set: (o: Outcome) => void): HTMLElement {
  const kind = outcome === null || outcome.kind === 'default' ? 'default' : outcome.kind === 'split' ? 'split' : `v:${outcome.name}`;
  const names = ed.variants();
  const serve = choice(
    ed,
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
  // A weight typed changes every share's percentage, written into these in place: drawing the split
  // again would take the focus from the box being typed in.
  const shareText: HTMLElement[] = [];
  const updatePercentages = () => {
    const now = splitPercentages(split.buckets);
    shareText.forEach((el, i) => {
      el.textContent = `${now[i]}%`;
    });
  };
  const shares = split.buckets.map((bucket: Bucket, i) => {
    const share = `${place} share ${i + 1}`;
    const text = h('span', { class: 'rule-percent' }, `${percentages[i]}%`);
    shareText.push(text);
    const weight = textBox(ed, bucket.weight === null ? '' : String(bucket.weight), `${share} weight`, (v) => {
      bucket.weight = v.trim() === '' ? null : Number(v);
      updatePercentages();
    });
    weight.setAttribute('inputmode', 'numeric');
    return h(
      'li',
      {},
      choice(ed, variantOptions(names, bucket.variant), bucket.variant, `${share} variant`, (v) => {
        bucket.variant = v;
      }),
      weight,
      text,
      button(ed, 'Remove', `Remove ${share}`, () => {
        split.buckets.splice(i, 1);
        ed.reshaped(`Add share to ${place}`);
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
      ed,
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
      ? textBox(ed, split.by ?? '', `${place} bucketing attribute`, (v) => {
          split.by = v;
        })
      : null,
    h(
      'p',
      { class: 'muted' },
      'Each share is a whole-number weight, shown as its percentage of the total (weights of 100 in all read as percentages).',
    ),
    h('ol', { class: 'rule-shares' }, shares),
    button(ed, 'Add share', `Add share to ${place}`, () => {
      split.buckets.push({ variant: names[0] ?? '', weight: 0 });
      ed.reshaped(`${place} share ${split.buckets.length} weight`);
    }),
  );
}

/** The variant names to choose from: the form's, and the one chosen when it is none of them (the checks name it). */
function variantOptions(names: readonly string[], chosen: string): [string, string][] {
  return [...(names.includes(chosen) ? [] : [chosen]), ...names].map((n) => [n, n]);
}

// A flag state's typed variants on the flag page (issue 25): the variant table (a name and a JSON value
// per row), the default variant, and the targeting rule (flagd's JsonLogic, as JSON). Before anything
// is sent, every value and the rule must be JSON, and the rule an object: the status line says which
// one is not, and where. The server then checks the whole as a flagd definition (PATCH's rules) and
// refuses with the place (`targeting.if[0]: unknown operator "foo"`): nothing invalid is ever saved.
import { savedWithUndo } from './flag-undo.js';
import { dataTable, field, h, onSubmit, say } from './dom.js';
import { changeFlag } from './flag-change.js';
import { ruleBuilder } from './rule-builder.js';
import type { FlagPageView, FlatState } from './views.js';

interface Row {
  name: HTMLInputElement;
  value: HTMLInputElement;
}

/** JSON text, or why it is not: JSON.parse's own words. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
}

export function variantsForm(data: FlagPageView, env: string | null, state: FlatState, reload: () => Promise<void>): HTMLFormElement {
  const { flag, can } = data;
  const where = env === null ? '' : ` in ${env}`;
  const rows: Row[] = [];
  const table = h('tbody');
  const render = () => {
    table.replaceChildren(
      ...rows.map((row, i) =>
        h(
          'tr',
          {},
          h('td', {}, row.name),
          h('td', {}, row.value),
          h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Remove variant ${i + 1}${where}`,
                onclick: () => {
                  rows.splice(i, 1);
                  render();
                  builder.refresh();
                },
              },
              'Remove',
            ),
          ),
        ),
      ),
    );
    rows.forEach((row, i) => {
      row.name.setAttribute('aria-label', `Variant ${i + 1} name${where}`);
      row.value.setAttribute('aria-label', `Variant ${i + 1} value${where}`);
    });
  };
  const addRow = (name: string, value: string) => {
    const row = { name: h('input', { type: 'text', value: name }), value: h('input', { type: 'text', value }) };
    // The builder's variant choices follow the names as they are typed.
    row.name.addEventListener('input', () => builder.refresh());
    rows.push(row);
    render();
  };
  for (const [name, value] of Object.entries(state.variants ?? {})) addRow(name, JSON.stringify(value));
  const fallback = h('input', { type: 'text', name: 'defaultVariant', value: state.defaultVariant ?? '' });
  const rule = h(
    'textarea',
    { name: 'targeting', rows: 6 },
    state.targeting === undefined || Object.keys(state.targeting).length === 0 ? '' : JSON.stringify(state.targeting, null, 2),
  );
  const builder = ruleBuilder(rule, where, () => rows.map((row) => row.name.value).filter((name) => name !== ''), data.fragments);
  const label = `Variants and rule${where}`;
  return h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const entries: [string, unknown][] = [];
        for (const [i, row] of rows.entries()) {
          const name = row.name.value;
          if (entries.some(([other]) => other === name))
            return say(`Two variants are named "${name}": each needs its own name; nothing was saved.`, 'error');
          const parsed = parseJson(row.value.value);
          if (!parsed.ok)
            return say(
              `Variant ${i + 1}'s value is not JSON (${parsed.why}): write a string in quotes, a number, true or false, or an object.`,
              'error',
            );
          entries.push([name, parsed.value]);
        }
        // fromEntries defines every name as data, "__proto__" too (which the server then refuses by name).
        const variants = Object.fromEntries(entries);
        // No variants: a boolean flag again; a default or a rule cannot go with that.
        const patch: Record<string, unknown> = { variants };
        if (rows.length > 0) {
          patch.defaultVariant = fallback.value === '' ? null : fallback.value;
          const text = rule.value.trim();
          const parsed = text === '' ? { ok: true as const, value: {} } : parseJson(text);
          if (!parsed.ok) return say(`The rule is not JSON (${parsed.why}); nothing was saved.`, 'error');
          const problems = builder.problems();
          if (problems.length > 0) return say(`${problems.join(' ')} Nothing was saved.`, 'error');
          if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value))
            return say('The rule must be a JSON object such as {"if": [...]}; nothing was saved.', 'error');
          patch.targeting = parsed.value;
        }
        const query = env === null ? '' : `?env=${encodeURIComponent(env)}`;
        const result = await changeFlag<{ changed: boolean }>(data, 'PATCH', `flags/${flag.id}${query}`, patch, reload);
        if (result === null) return;
        await reload();
        if (!result.changed) return say(`Nothing changed: ${flag.name} already had these variants.`);
        // No variants before: Undo makes the state boolean again, as a save with no variants does.
        const previous =
          state.variants === undefined
            ? { variants: {} }
            : { variants: state.variants, defaultVariant: state.defaultVariant ?? null, targeting: state.targeting ?? {} };
        savedWithUndo(`Saved variants and rule${where} of ${flag.name}.`, flag, env, previous, reload);
      }),
    },
    h(
      'fieldset',
      { disabled: !can.editFlags },
      h('legend', {}, label),
      h(
        'p',
        { class: 'muted' },
        'Values are JSON ("#f00", 10, true, {"rows": 5}), all of one type. The rule is a flagd targeting rule (JsonLogic with fractional, sem_ver, starts_with, ends_with) naming a variant; empty: the default variant for everyone the state lets in. No variants: a boolean flag.',
      ),
      dataTable(`Variants${where}`, ['Variant', 'Value (JSON)', 'Actions'], table),
      h('button', { type: 'button', class: 'secondary', onclick: () => addRow('', '') }, `Add variant${where}`),
      field(`Default variant${where} (empty: none)`, fallback),
      h('div', { class: 'rule-views' }, builder.element, field(`Targeting rule${where} (JSON)`, rule, 'block')),
      can.editFlags ? h('button', { type: 'submit' }, `Save variants${where}`) : null,
    ),
  );
}

// The playground beside a flag state's rule (issue 47): a context typed as JSON or as attribute rows, and
// what this flag gives for it with the rule as it stands in the page (saved or not), live, with the branch
// that held. It asks the project's playground (src/web-console/api/playground.ts), which answers as the
// Evaluation API would, the rule sent tried in place of the saved one: requests wait until typing (in the
// context or the rule) pauses (kDebounceMs), and an answer older than the latest asked is dropped.
import { api, errorText, h, pairsEditor } from './dom.js';
import type { FlagPageView, PlaygroundView } from './views.js';

const kDebounceMs = 300;
/** Context names that are fields of the playground's request, not attributes (the Evaluation API's own). */
const kFields = ['targetingKey', 'cohort'] as const;

type Context = { ok: true; fields: Record<string, string>; attributes: { name: string; value: string }[] } | { ok: false; why: string };

/**
 * The context as the playground takes it: the JSON object's names, then the rows (a row wins over the
 * JSON's name). Values are what the Evaluation API reads, text: a number or true/false as its JSON text.
 */
function readContext(text: string, rows: { name: string; value: string }[]): Context {
  let object: unknown = {};
  if (text.trim() !== '') {
    try {
      object = JSON.parse(text);
    } catch (err) {
      return { ok: false, why: `The context is not JSON (${(err as Error).message}).` };
    }
  }
  if (object === null || typeof object !== 'object' || Array.isArray(object))
    return { ok: false, why: 'The context must be a JSON object such as {"email": "ada@example.com"}.' };
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(object)) {
    if (value !== null && typeof value === 'object')
      return {
        ok: false,
        why: `"${name}" is ${Array.isArray(value) ? 'a list' : 'an object'}: the Evaluation API reads each attribute as text.`,
      };
    values.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  for (const row of rows) values.set(row.name, row.value);
  const fields: Record<string, string> = {};
  const attributes: { name: string; value: string }[] = [];
  for (const [name, value] of values) {
    if ((kFields as readonly string[]).includes(name)) fields[name] = value;
    else attributes.push({ name, value });
  }
  return { ok: true, fields, attributes };
}

/**
 * The context last typed beside each state (`flagId env`), so the page drawn again after a save (which
 * replaces every element) still tries it: a save is when the answer is worth seeing again.
 */
const kTyped = new Map<string, { json: string; rows: [string, string][] }>();

/** The rule in `rules` (the state's variants form) as JSON: its JSON view's text, '' being no rule. */
function readRule(rules: HTMLFormElement): { ok: true; rule: unknown } | { ok: false; why: string } {
  const text = rules.querySelector<HTMLTextAreaElement>('textarea[name="targeting"]')?.value.trim() ?? '';
  try {
    return { ok: true, rule: text === '' ? {} : JSON.parse(text) };
  } catch (err) {
    return { ok: false, why: `The rule is not JSON yet (${(err as Error).message}).` };
  }
}

/** The playground of `env`'s state, trying the rule of `rules` (its variants form) as it is edited. */
export function rulePlayground(data: FlagPageView, env: string | null, rules: HTMLFormElement): HTMLFormElement {
  const { flag, project } = data;
  const where = env === null ? '' : ` in ${env}`;
  const key = `${flag.id} ${env ?? ''}`;
  const typed = kTyped.get(key) ?? { json: '{"targetingKey": "user-1"}', rows: [] };
  const json = h('textarea', { rows: 3 }, typed.json);
  const rows = pairsEditor(`Context attributes${where}`, `Context attribute${where}`, typed.rows);
  const answer = h('div', { role: 'status', class: 'playground-answer' });
  let asked = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const evaluate = async () => {
    kTyped.set(key, { json: json.value, rows: rows.pairs().map(({ name, value }) => [name, value]) });
    const context = readContext(json.value, rows.pairs());
    const rule = readRule(rules);
    const n = ++asked;
    if (!context.ok || !rule.ok) {
      answer.replaceChildren(h('p', { class: 'error' }, context.ok ? (rule as { why: string }).why : context.why));
      return;
    }
    try {
      const view = await api<PlaygroundView>('POST', `projects/${encodeURIComponent(project.id)}/playground`, {
        ...context.fields,
        ...(env === null ? {} : { env }),
        attributes: context.attributes,
        rule: { flagId: flag.id, targeting: rule.rule },
      });
      if (n !== asked) return;
      const result = view.results.find((r) => r.id === flag.id);
      if (result === undefined) return answer.replaceChildren(h('p', {}, 'This flag is gone: reload the page.'));
      const value =
        result.value === undefined
          ? "the caller's default value"
          : `${result.variant === undefined ? '' : `variant "${result.variant}", `}${JSON.stringify(result.value)}`;
      answer.replaceChildren(
        h(
          'p',
          {},
          h('strong', {}, `${value}`),
          ` (${result.errorCode === undefined ? result.reason : `${result.reason}, ${result.errorCode}`})`,
        ),
        h('p', {}, `Why: ${result.because}.`),
      );
    } catch (err) {
      if (n === asked) answer.replaceChildren(h('p', { class: 'error' }, errorText(err)));
    }
  };
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void evaluate(), kDebounceMs);
  };
  // The rows' boxes and their Add and Remove buttons are inside rows.element: one listener each catches them all.
  json.addEventListener('input', soon);
  rows.element.addEventListener('input', soon);
  // The rule's form: typing in the JSON view or the builder, a choice made, a button pressed (add, remove, move).
  for (const target of [rows.element, rules]) {
    target.addEventListener('click', (event) => {
      if ((event.target as HTMLElement).closest('button') !== null) soon();
    });
  }
  rules.addEventListener('input', soon);
  rules.addEventListener('change', soon);
  const form = h(
    'form',
    // role=search: a context to try, not data to save, so leaving the page with it typed asks nothing (unsaved-edits.ts).
    { role: 'search', 'aria-label': `Try the rule${where}`, onsubmit: (event: Event) => event.preventDefault() },
    h(
      'fieldset',
      {},
      h('legend', {}, `Try the rule${where}`),
      h(
        'p',
        { class: 'muted' },
        'Type a context: this flag is evaluated for it as the Evaluation API would, with the rule as it stands above (saved or not), and the answer says which branch held. Nothing is saved or counted as used.',
      ),
      h('label', { class: 'block' }, `Context as JSON${where} `, json),
      rows.element,
      answer,
    ),
  );
  soon();
  return form;
}

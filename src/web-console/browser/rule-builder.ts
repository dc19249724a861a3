// The flag page's rule builder (issue 47): a flagd targeting rule as branches of conditions on context
// attributes, each serving a variant or a weighted split, then what everyone else gets. It edits the same
// rule as the JSON view beside it (the form's `targeting` text box): every edit here writes the JSON there
// (rule-model.ts modelToRule), and typing there shows the rule here when the builder can
// (ruleToModel), or the sentence saying why not. The builder's checks (modelProblems) are shown as the
// rule is edited and stop a save; the server then checks the rule as it always did.
import { h } from './dom.js';
import { branchList } from './branch-list.js';
import { type Focus, focusKeyed, type RuleEditing } from './rule-controls.js';
import { modelProblems, modelToRule, type RuleModel, ruleToModel } from './rule-model.js';

export interface RuleBuilder {
  readonly element: HTMLElement;
  /** The builder's checks on the rule it shows; empty when it shows none (the JSON view's rule goes to the server as typed). */
  problems(): string[];
  /** Draws the builder again (the variants' names changed). */
  refresh(): void;
}

/**
 * The builder of `json` (the form's rule text box), `where` naming the state (" in production") in every
 * control's name, `variants` the variant names as the form has them now, `fragments` the names of the
 * project's shared fragments (a condition may be one: `{"$ref": NAME}`). It keeps the model and the JSON
 * view in step; its parts (branch-list.ts and what it draws) edit the model and tell it through `ed`.
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
  const ed: RuleEditing = {
    where,
    variants,
    fragments,
    edited: write,
    reshaped: (focus) => {
      write();
      render(focus);
    },
  };

  const render = (focus: Focus = null) => {
    if (model === null) return;
    body.replaceChildren(...branchList(ed, model));
    focusKeyed(body, focus);
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

// The rule builder and the playground beside the rule (src/web-console/browser/rule-builder.ts,
// rule-playground.ts), in a DOM with the API held by the test: the builder and the JSON view edit one
// rule (an edit in either shows in the other; a rule the builder cannot show, or text that is not JSON,
// leaves a sentence in its place), a structural edit keeps the focus on the control used, the builder's
// checks stop a save with nothing sent; the playground sends the rule as it stands with the context, asks
// once typing in either pauses, drops an answer older than the latest asked, and keeps the context typed
// for the page drawn again after a save.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { ruleBuilder } from '../../../src/web-console/browser/rule-builder.js';
import { rulePlayground } from '../../../src/web-console/browser/rule-playground.js';
import { variantsForm } from '../../../src/web-console/browser/variant-editor.js';
import type { FlagPageView, FlatState, PlaygroundView } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const page = () => document.getElementById('page')!;
const byLabel = <E extends HTMLElement>(label: string) => page().querySelector<E>(`[aria-label="${label}"]`)!;
const type = (el: HTMLInputElement | HTMLTextAreaElement, value: string) => {
  el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
};
const choose = (el: HTMLSelectElement, value: string) => {
  el.value = value;
  el.dispatchEvent(new Event('change', { bubbles: true }));
};

function drawBuilder(rule: unknown) {
  const json = document.createElement('textarea');
  json.value = JSON.stringify(rule);
  const builder = ruleBuilder(json, '', () => ['red', 'green']);
  page().replaceChildren(builder.element, json);
  return { json, builder };
}

t.test('the builder and the JSON view edit one rule', async (t) => {
  const { json, builder } = drawBuilder({ if: [{ '==': [{ var: 'plan' }, 'gold'] }, 'green', null] });
  t.equal(byLabel<HTMLInputElement>('Branch 1 condition 1 attribute').value, 'plan');
  type(byLabel('Branch 1 condition 1 attribute'), 'tier');
  t.same(
    JSON.parse(json.value),
    { if: [{ '==': [{ var: 'tier' }, 'gold'] }, 'green', null] },
    'a typed attribute is in the JSON view at once',
  );
  choose(byLabel('Branch 1 condition 1 operator'), 'in');
  t.same(
    JSON.parse(json.value),
    { if: [{ in: [{ var: 'tier' }, ['gold']] }, 'green', null] },
    'the value kept as the one item of the list',
  );
  t.equal(document.activeElement, byLabel('Branch 1 condition 1 operator'), 'the redrawn operator has the focus');
  byLabel<HTMLButtonElement>('Add branch').click();
  t.equal(document.activeElement, byLabel('Branch 2 condition 1 attribute'), 'a new branch: focus on its condition');
  t.same(builder.problems(), ['Branch 2, condition 1: name the attribute to compare.'], 'the checks name the empty attribute');
  t.match(page().querySelector('[role="status"]')!.textContent, 'Branch 2, condition 1: name the attribute to compare.');
  byLabel<HTMLButtonElement>('Add condition to Branch 2').click();
  t.equal(document.activeElement, byLabel('Branch 2 condition 1.2 attribute'), 'a condition added: focus on it');
  byLabel<HTMLButtonElement>('Remove Branch 2 condition 1.2').click();
  t.equal(document.activeElement, byLabel('Add condition to Branch 2 condition 1'), 'a condition removed: focus on its group');
  byLabel<HTMLButtonElement>('Move up Branch 2').click();
  t.equal(document.activeElement, byLabel('Move down Branch 1'), 'moved to the top: focus on the button that is left');
  t.same(JSON.parse(json.value).if[0], { and: [{ '==': [{ var: '' }, ''] }] }, 'the moved branch is first');

  type(json, '{"if": [{"===": [{"var": "plan"}, "gold"]}, "green"]}');
  t.match(page().textContent, 'The builder cannot show this rule (the operator "==="); edit it as JSON.');
  t.same(builder.problems(), [], 'no checks for a rule it does not show: the server checks it');
  type(json, '{"if": [');
  t.match(page().textContent, /The JSON view holds no JSON yet \(.+\); the builder shows the rule once it does\./);
  type(json, '');
  t.match(page().textContent, 'No branch yet');
  t.equal(json.value, '', 'shown without rewriting it');
});

t.test("the builder's checks stop a save: nothing is sent and the status line says why", async (t) => {
  const held = holdRequests();
  const state = {
    variants: { red: 1, green: 2 },
    defaultVariant: 'red',
    targeting: { if: [{ '<': [{ var: 'age' }, 18] }, 'green'] },
  } as unknown as FlatState;
  const data = { flag: { id: 'f1', name: 'Checkout' }, can: { editFlags: true } } as unknown as FlagPageView;
  const form = variantsForm(data, null, state, async () => {});
  page().replaceChildren(form);
  type(byLabel('Branch 1 condition 1 number'), 'eighteen');
  form.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  t.equal(held.length, 0);
  t.equal(document.getElementById('status')!.textContent, 'Branch 1, condition 1: write the value as a number. Nothing was saved.');
  type(byLabel('Branch 1 condition 1 number'), '21');
  form.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  t.equal(held.length, 1);
  t.same(JSON.parse(held[0]!.body!).targeting, { if: [{ '<': [{ var: 'age' }, 21] }, 'green'] });
});

const kData = { flag: { id: 'f1', name: 'Checkout' }, project: { id: 'p1' }, can: { editFlags: true } } as unknown as FlagPageView;

function answerFor(variant: string): PlaygroundView {
  return {
    query: '',
    env: 'production',
    results: [
      {
        id: 'f1',
        name: 'Checkout',
        enabled: true,
        value: variant,
        variant,
        reason: 'TARGETING_MATCH',
        why: { by: 'static', percentage: 100 },
        because: `picked ${variant}`,
      },
    ],
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The state's variants form as far as the playground reads it: its rule's JSON view. */
function rulesForm(rule: string): { form: HTMLFormElement; box: HTMLTextAreaElement } {
  const form = document.createElement('form');
  const box = document.createElement('textarea');
  box.name = 'targeting';
  box.value = rule;
  form.append(box);
  return { form, box };
}
const kRule = { if: [{ '<': [{ var: 'age' }, 18] }, 'green'] };

t.test('the playground asks once typing pauses, drops an older answer, and keeps the context for the next drawing', async (t) => {
  const held = holdRequests();
  const rules = rulesForm(JSON.stringify(kRule));
  const form = rulePlayground(kData, 'production', rules.form);
  page().replaceChildren(rules.form, form);
  const json = form.querySelector('textarea')!;
  type(json, '{"targetingKey": "u1", "age": 1');
  type(json, '{"targetingKey": "u1", "age": 12');
  type(json, '{"targetingKey": "u1", "age": 12, "beta": true}');
  await wait(600);
  t.equal(held.length, 1, 'one request for the typing, none for the first drawing superseded by it');
  t.equal(held[0]!.url, '/console/api/projects/p1/playground');
  t.same(JSON.parse(held[0]!.body!), {
    targetingKey: 'u1',
    env: 'production',
    attributes: [
      { name: 'age', value: '12' },
      { name: 'beta', value: 'true' },
    ],
    rule: { flagId: 'f1', targeting: kRule },
  });
  type(json, '{"targetingKey": "u2"}');
  await wait(600);
  t.equal(held.length, 2);
  held[1]!.answer({ status: 200, body: answerFor('green') });
  await settle();
  held[0]!.answer({ status: 200, body: answerFor('red') });
  await settle();
  const said = form.querySelector('[role="status"]')!.textContent!;
  t.match(said, 'variant "green"', 'the latest answer is shown');
  t.notMatch(said, 'red', 'the older answer, come late, is dropped');
  type(rules.box, '');
  await wait(600);
  t.equal(held.length, 3, 'an edit of the rule asks again');
  t.same(JSON.parse(held[2]!.body!).rule, { flagId: 'f1', targeting: {} }, 'the rule as it stands: none');
  type(rules.box, '{"if": [');
  await wait(600);
  t.match(form.querySelector('[role="status"]')!.textContent, /^The rule is not JSON yet \(.+\)\.$/);
  type(rules.box, JSON.stringify(kRule));
  type(json, '{"age": [1]}');
  await wait(600);
  t.equal(form.querySelector('[role="status"]')!.textContent, '"age" is a list: the Evaluation API reads each attribute as text.');
  t.equal(held.length, 3, 'nothing asked for a rule or a context it cannot send');

  const again = rulePlayground(kData, 'production', rules.form);
  t.equal(again.querySelector('textarea')!.value, '{"age": [1]}', 'the page drawn again still holds the context typed');
  t.equal(
    rulePlayground(kData, 'staging', rules.form).querySelector('textarea')!.value,
    '{"targetingKey": "user-1"}',
    'each state its own',
  );
  await wait(600);
});

// An Unleash-model state on the flag page (src/web-console/browser/unleash-sentences.ts and
// unleash-editor.ts), in a DOM with the API held by the test: every operator of the schema said in words
// and offered by the editor, each with the operands the server's check expects (a list or one value);
// a save reads the flag again, sends the model whole, and a refusal's problems land beside the parts
// they name.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { kUnleashOperators, type UnleashModel } from '../../../src/model/unleash-model.js';
import { modelProblems } from '../../../src/unleash/rules/model-problems.js';
import { modelProblemsOf, unleashSection } from '../../../src/web-console/browser/unleash-editor.js';
import { constraintSentence } from '../../../src/web-console/browser/unleash-sentences.js';
import type { FlagPageView, FlatState } from '../../../src/web-console/browser/views.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const kSentences: Record<string, string> = {
  IN: 'f is one of "a" or "b"',
  NOT_IN: 'f is none of "a" or "b"',
  STR_CONTAINS: 'f contains "a" or "b"',
  STR_STARTS_WITH: 'f starts with "a" or "b"',
  STR_ENDS_WITH: 'f ends with "a" or "b"',
  NUM_EQ: 'f is the number "1"',
  NUM_GT: 'f is a number greater than "1"',
  NUM_GTE: 'f is a number at least "1"',
  NUM_LT: 'f is a number less than "1"',
  NUM_LTE: 'f is a number at most "1"',
  DATE_AFTER: 'f is a date after "1"',
  DATE_BEFORE: 'f is a date before "1"',
  SEMVER_EQ: 'f is the version "1"',
  SEMVER_GT: 'f is a version after "1"',
  SEMVER_LT: 'f is a version before "1"',
  SEMVER_GTE: 'f is a version at or after "1"',
  SEMVER_LTE: 'f is a version at or before "1"',
  REGEX: 'f matches the regular expression "1"',
  IN_CIDR: 'f is an address in "a" or "b"',
};

/** Whether the server's check takes `values` (a list) for the operator: a lone `value` is then refused. */
const serverTakesList = (operator: string) =>
  modelProblems({ strategies: [{ name: 'default', constraints: [{ contextName: 'f', operator, value: '1' }] }] }).some((p) =>
    p.includes('takes a list of operands'),
  );

t.test('every operator of the schema in words, inverted and ignoring case said too', async (t) => {
  t.same(Object.keys(kSentences).sort(), [...kUnleashOperators].sort(), 'the table covers the schema');
  for (const operator of kUnleashOperators) {
    const list = serverTakesList(operator);
    const c = list ? { contextName: 'f', operator, values: ['a', 'b'] } : { contextName: 'f', operator, value: '1' };
    t.equal(constraintSentence(c), kSentences[operator], operator);
  }
  t.equal(
    constraintSentence({ contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@x.org'], inverted: true, caseInsensitive: true }),
    'not: email ends with "@x.org" (ignoring case)',
  );
});

const kModel: UnleashModel = {
  strategies: [
    {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'g' },
      constraints: [{ contextName: 'appVersion', operator: 'SEMVER_GT', value: '2.0.0' }],
    },
  ],
};

function draw(model: UnleashModel = kModel) {
  const data = { flag: { id: 'f1', name: 'checkout' }, can: { editFlags: true }, project: { protectedEnvironments: [] } };
  const section = unleashSection(data as unknown as FlagPageView, 'production', { unleash: model } as FlatState, async () => {})!;
  document.getElementById('page')!.replaceChildren(section);
  const control = <E extends HTMLElement>(label: string) => section.querySelector<E>(`[aria-label="${label}"]`)!;
  const form = section.querySelector('form')!;
  return { section, control, submit: () => form.dispatchEvent(new Event('submit', { cancelable: true })) };
}

t.test("the editor offers every operator, each with the operands the server's check reads", async (t) => {
  const { control } = draw();
  const operator = () => control<HTMLSelectElement>('Strategy 1 constraint 1 operator in production');
  t.same(
    Array.from(operator().options).map((o) => o.value),
    [...kUnleashOperators],
  );
  for (const op of kUnleashOperators) {
    operator().value = op;
    operator().dispatchEvent(new Event('change'));
    const list = control('Strategy 1 constraint 1 values, one per line in production') !== null;
    t.equal(list, serverTakesList(op), `${op}: ${list ? 'a list' : 'one value'}`);
  }
});

t.test("a save reads the flag again, sends the model whole, and the refusal's problems land beside their parts", async (t) => {
  const held = holdRequests();
  const { section, control, submit } = draw();
  const rollout = control<HTMLInputElement>('Strategy 1 rollout % in production');
  rollout.value = '150';
  rollout.dispatchEvent(new Event('input'));
  submit();
  await settle();
  t.equal(held.length, 1);
  t.match(held[0], { method: 'GET', url: '/console/api/flags/f1' });
  held[0]!.answer({ status: 200, body: { flag: { id: 'f1', environments: { production: { unleash: kModel } } } } });
  await settle();
  t.equal(held.length, 2);
  t.match(held[1], { method: 'PATCH', url: '/console/api/flags/f1?env=production' });
  const sent = JSON.parse(held[1]!.body!) as { unleash: UnleashModel };
  t.same(sent.unleash.strategies[0]!.parameters, { rollout: '150', stickiness: 'default', groupId: 'g' });
  t.same(sent.unleash.strategies[0]!.constraints, kModel.strategies[0]!.constraints, 'the rest as stored');
  const detail =
    '"unleash.strategies[0].parameters.rollout": a percentage from 0 to 100 is required; "unleash.strategies[0].constraints[0]": "x" is not a semantic version';
  held[1]!.answer({ status: 400, body: { error: 'Invalid request', detail } });
  await settle();
  const at = (path: string) => section.querySelector(`[data-path="${path}"] > .field-error`)?.textContent;
  t.equal(at('strategies[0].parameters.rollout'), 'strategies[0].parameters.rollout: a percentage from 0 to 100 is required');
  t.equal(at('strategies[0].constraints[0]'), 'strategies[0].constraints[0]: "x" is not a semantic version');
  t.equal(rollout.getAttribute('aria-invalid'), 'true');
  t.equal(document.getElementById(rollout.getAttribute('aria-describedby')!)?.className, 'error field-error');
  t.match(document.getElementById('status')!.textContent, /^Invalid request: "unleash.strategies\[0\]/);
});

t.test("a refusal's parts: quoted or not, and a problem of the whole model", async (t) => {
  t.same(modelProblemsOf('unleash.strategies[1].segments: no segment of the model has the id 7; "name": taken'), [
    { path: 'strategies[1].segments', message: 'no segment of the model has the id 7' },
  ]);
  t.same(modelProblemsOf("unleash: a state with Unleash's model has no experiment"), [
    { path: '', message: "a state with Unleash's model has no experiment" },
  ]);
});

t.test('a model changed since the page was drawn is not overwritten: nothing is sent', async (t) => {
  const held = holdRequests();
  const { control, submit } = draw();
  const rollout = control<HTMLInputElement>('Strategy 1 rollout % in production');
  rollout.value = '10';
  rollout.dispatchEvent(new Event('input'));
  submit();
  await settle();
  held[0]!.answer({ status: 200, body: { flag: { id: 'f1', environments: { production: { unleash: { strategies: [] } } } } } });
  await settle();
  t.equal(held.length, 1, 'no PATCH');
  t.match(document.getElementById('status')!.textContent, /^Not saved: the Unleash strategies in production of checkout were changed/);
});

t.test('the save names the version the page read; a flag changed in between is refused, and the page drawn again', async (t) => {
  const held = holdRequests();
  let reloads = 0;
  const data = {
    flag: { id: 'f1', name: 'checkout' },
    etag: '"flag-00000000000000aa"',
    can: { editFlags: true },
    project: { protectedEnvironments: [] },
  };
  const section = unleashSection(data as unknown as FlagPageView, 'production', { unleash: kModel } as FlatState, async () => {
    reloads++;
  })!;
  document.getElementById('page')!.replaceChildren(section);
  const rollout = section.querySelector<HTMLInputElement>('[aria-label="Strategy 1 rollout % in production"]')!;
  rollout.value = '20';
  rollout.dispatchEvent(new Event('input'));
  section.querySelector('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  held[0]!.answer({ status: 200, body: { flag: { id: 'f1', environments: { production: { unleash: kModel } } } } });
  await settle();
  t.match(held[1], { method: 'PATCH', headers: { 'If-Match': '"flag-00000000000000aa"' } }, 'If-Match: the version the page read');
  held[1]!.answer({ status: 412, body: { error: 'Precondition failed', detail: 'changed' } });
  await settle();
  t.equal(reloads, 1, 'the page is drawn again with the flag as it is now');
  t.match(
    document.getElementById('status')!.textContent,
    /^checkout was changed by someone else since this page showed it, so nothing was saved\./,
  );
});

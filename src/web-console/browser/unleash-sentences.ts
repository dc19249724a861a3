// An Unleash-model state said in words on the flag page (issue 60, item 5): each strategy with its
// parameters, constraints as sentences (operator, values, inverted, case-insensitive), segments by name,
// variants with their share, stickiness and payload; the feature's variants and dependencies. The words
// are the console's; the model's own names (flexibleRollout, SEMVER_GT) stay beside them, as Unleash's
// documentation and an importer's user know them.
import type {
  kUnleashStrategies,
  UnleashConstraint,
  UnleashDependency,
  UnleashModel,
  UnleashOperator,
  UnleashStrategy,
  UnleashStrategyVariant,
} from '../../model/unleash-model.js';
import { h } from './dom.js';

export type StrategyName = (typeof kUnleashStrategies)[number];

/**
 * Every operator of the client specification with what it says between the field and its operands.
 * A Record of the schema's type: an operator the schema gains and this table lacks fails the build.
 */
export const kOperatorWords: Readonly<Record<UnleashOperator, string>> = {
  IN: 'is one of',
  NOT_IN: 'is none of',
  STR_CONTAINS: 'contains',
  STR_STARTS_WITH: 'starts with',
  STR_ENDS_WITH: 'ends with',
  NUM_EQ: 'is the number',
  NUM_GT: 'is a number greater than',
  NUM_GTE: 'is a number at least',
  NUM_LT: 'is a number less than',
  NUM_LTE: 'is a number at most',
  DATE_AFTER: 'is a date after',
  DATE_BEFORE: 'is a date before',
  SEMVER_EQ: 'is the version',
  SEMVER_GT: 'is a version after',
  SEMVER_LT: 'is a version before',
  SEMVER_GTE: 'is a version at or after',
  SEMVER_LTE: 'is a version at or before',
  REGEX: 'matches the regular expression',
  IN_CIDR: 'is an address in',
};

/**
 * The operators whose operands are a list (`values`); the others take one (`value`), as
 * src/unleash/rules/model-problems.ts reads them. A copy: a browser loads only this folder's modules
 * (src/web-console/assets.ts), and test/web-console/browser/unleash-editor.test.ts pins it to the server's check.
 */
export const kListOperators: ReadonlySet<string> = new Set(['IN', 'NOT_IN', 'STR_CONTAINS', 'STR_STARTS_WITH', 'STR_ENDS_WITH', 'IN_CIDR']);

/** The strategies Flagwire evaluates, by what they do (a Record of the schema's list, as kOperatorWords). */
export const kStrategyTitles: Readonly<Record<StrategyName, string>> = {
  default: 'Everyone',
  flexibleRollout: 'Gradual rollout',
  userWithId: 'Users by id',
  remoteAddress: 'IP addresses',
  gradualRolloutUserId: 'Gradual rollout by user id',
  gradualRolloutSessionId: 'Gradual rollout by session id',
  gradualRolloutRandom: 'Random rollout',
};

/** The parameters each strategy reads, in the order the page shows and edits them. */
export const kStrategyParameters: Readonly<Record<StrategyName, readonly string[]>> = {
  default: [],
  flexibleRollout: ['rollout', 'stickiness', 'groupId'],
  userWithId: ['userIds'],
  remoteAddress: ['IPs'],
  gradualRolloutUserId: ['percentage', 'groupId'],
  gradualRolloutSessionId: ['percentage', 'groupId'],
  gradualRolloutRandom: ['percentage'],
};

const quoted = (values: readonly string[]): string => {
  const q = values.map((v) => JSON.stringify(v));
  return q.length <= 1 ? (q[0] ?? 'nothing') : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
};

/** `appVersion is a version after "2.0.0"`, `not: country is one of "NO" or "SE"`, `... (ignoring case)`. */
export function constraintSentence(c: UnleashConstraint): string {
  const words = (kOperatorWords as Record<string, string>)[c.operator] ?? c.operator;
  const operands = kListOperators.has(c.operator) ? quoted(c.values ?? []) : JSON.stringify(c.value ?? '');
  return `${c.inverted === true ? 'not: ' : ''}${c.contextName} ${words} ${operands}${c.caseInsensitive === true ? ' (ignoring case)' : ''}`;
}

const text = (value: string | number | undefined): string => (value === undefined ? '' : String(value));

/** What a strategy's parameters say: `50% of users, sticky on default, group "checkout"`. */
export function parametersSentence(strategy: UnleashStrategy): string {
  const p = strategy.parameters ?? {};
  const group = p.groupId === undefined || p.groupId === '' ? '' : `, group ${JSON.stringify(text(p.groupId))}`;
  const list = (value: string | number | undefined) =>
    text(value)
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '')
      .join(', ');
  const known = kStrategyParameters[strategy.name as StrategyName] ?? [];
  const others = Object.entries(p)
    .filter(([name]) => !known.includes(name))
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
  const own = (() => {
    switch (strategy.name) {
      case 'default':
        return 'every user';
      case 'flexibleRollout':
        return `${text(p.rollout)}% of users, sticky on ${text(p.stickiness) || 'default'}${group}`;
      case 'gradualRolloutUserId':
        return `${text(p.percentage)}% of users by user id${group}`;
      case 'gradualRolloutSessionId':
        return `${text(p.percentage)}% of sessions${group}`;
      case 'gradualRolloutRandom':
        return `${text(p.percentage)}% of evaluations, at random`;
      case 'userWithId':
        return `the users ${list(p.userIds)}`;
      case 'remoteAddress':
        return `the addresses ${list(p.IPs)}`;
      default:
        return '';
    }
  })();
  return [own, ...others].filter((s) => s !== '').join('; ');
}

/** `blue: weight 1000 of 1000 (100%), sticky on default, payload string "b"`. */
export function variantSentence(v: UnleashStrategyVariant, total: number): string {
  const share = total > 0 ? ` (${Math.round((v.weight / total) * 1000) / 10}%)` : '';
  const sticky = v.stickiness === undefined ? '' : `, sticky on ${v.stickiness}`;
  const payload = v.payload === undefined ? '' : `, payload ${v.payload.type} ${JSON.stringify(v.payload.value)}`;
  return `${v.name}: weight ${v.weight} of ${total}${share}${sticky}${payload}`;
}

function variantsList(label: string, variants: readonly UnleashStrategyVariant[] | undefined): HTMLElement | null {
  if (variants === undefined || variants.length === 0) return null;
  const total = variants.reduce((sum, v) => sum + v.weight, 0);
  return h(
    'div',
    {},
    label,
    h(
      'ul',
      {},
      variants.map((v) => h('li', {}, variantSentence(v, total))),
    ),
  );
}

export function dependencySentence(d: UnleashDependency): string {
  if (d.enabled === false) return `${d.feature} is off`;
  return d.variants === undefined || d.variants.length === 0
    ? `${d.feature} is on`
    : `${d.feature} is on with variant ${quoted(d.variants)}`;
}

/** The model in words: the strategies in order (the first that lets a user in decides), then the feature's variants and dependencies. */
export function modelDescription(model: UnleashModel, where: string): HTMLElement {
  const segments = new Map((model.segments ?? []).map((s) => [s.id, s]));
  const strategy = (s: UnleashStrategy, i: number) => {
    const title = (kStrategyTitles as Record<string, string>)[s.name] ?? s.name;
    const parameters = parametersSentence(s);
    const constraints = s.constraints ?? [];
    return h(
      'li',
      { class: 'rule' },
      h('h4', {}, `Strategy ${i + 1}${where}: ${title} `, h('code', {}, s.name)),
      parameters === '' ? null : h('p', {}, `Lets in ${parameters}.`),
      constraints.length === 0
        ? null
        : h(
            'div',
            {},
            'When all of:',
            h(
              'ul',
              {},
              constraints.map((c) => h('li', {}, constraintSentence(c))),
            ),
          ),
      (s.segments ?? []).map((id) => {
        const segment = segments.get(id);
        const name = segment?.name ?? `#${id}`;
        const rules = (segment?.constraints ?? []).map(constraintSentence);
        return h('p', {}, `And in segment ${name}${rules.length === 0 ? '' : `: ${rules.join('; and ')}`}.`);
      }),
      variantsList('Variants:', s.variants),
    );
  };
  const dependencies = model.dependencies ?? [];
  return h(
    'div',
    { class: 'unleash-model' },
    model.strategies.length === 0
      ? h('p', {}, 'No strategies: everyone gets the flag while it is on.')
      : h('ol', { class: 'unleash-strategies' }, model.strategies.map(strategy)),
    variantsList(`Feature variants${where}:`, model.variants),
    dependencies.length === 0 ? null : h('p', {}, `Only while ${dependencies.map(dependencySentence).join(' and ')}.`),
  );
}

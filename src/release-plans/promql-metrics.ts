// What a PromQL guard may ask of the operator's Prometheus (issue 42, item 6). Any write token can start
// a guarded rollout, and every reading is shown to read tokens and the console, so an expression that
// named any series would let a project read any number the operator's Prometheus holds. The operator
// names the metrics guards may read (FLAGWIRE_PROMETHEUS_METRICS: names, or prefixes ending in `*`);
// an expression is allowed when every metric it selects is on that list. A selector without a metric
// name (`{job="x"}`) or one matching on `__name__` could select anything, so it is refused.
//
// This is not a PromQL parser: it walks the expression's tokens and takes each bare identifier that is
// not a function, an aggregation, a keyword or a label list as a metric name. Prometheus parses the
// expression itself when asked; anything this reads wrongly is at worst refused, never let through,
// because every identifier it cannot place is treated as a metric name.

/** PromQL words that are not metric names where they stand bare (binary operators, modifiers, literals). */
const kKeywords = new Set([
  'and',
  'or',
  'unless',
  'atan2',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);
/** Aggregation operators: `sum by (job) (x)` puts its grouping between the name and its parenthesis. */
const kAggregations = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
/** Keywords followed by a parenthesised list of label names, not expressions. */
const kLabelListKeywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const kIdentifierStart = /[a-zA-Z_:]/;
const kIdentifierPart = /[a-zA-Z0-9_:]/;

export type MetricNames = { names: string[] } | { problem: string };

/** The metric names an expression selects, or why it cannot be said. */
export function promqlMetricNames(expression: string): MetricNames {
  const names = new Set<string>();
  const text = expression;
  let at = 0;
  // After a label-list keyword, the next parenthesised group holds label names.
  let labelListNext = false;
  // After `offset` or `@`, a duration or time follows, not a metric.
  const skipString = (quote: string) => {
    at++;
    while (at < text.length && text[at] !== quote) at += text[at] === '\\' && quote !== '`' ? 2 : 1;
    at++;
  };
  const skipGroup = (open: string, close: string): string | null => {
    const start = at;
    let depth = 0;
    while (at < text.length) {
      const c = text[at]!;
      if (c === '"' || c === "'" || c === '`') {
        skipString(c);
        continue;
      }
      if (c === open) depth++;
      else if (c === close && --depth === 0) {
        at++;
        return text.slice(start + 1, at - 1);
      }
      at++;
    }
    return null;
  };
  while (at < text.length) {
    const c = text[at]!;
    if (c === '#') {
      while (at < text.length && text[at] !== '\n') at++;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      skipString(c);
      continue;
    }
    if (c === '{') {
      // A selector's matchers; standing alone (no metric name before it) it could select any series.
      return { problem: 'every selector must name its metric (a selector of labels alone, {…}, could read any series)' };
    }
    if (c === '[') {
      if (skipGroup('[', ']') === null) return { problem: 'an unclosed [' };
      continue;
    }
    if (c === '(' && labelListNext) {
      labelListNext = false;
      if (skipGroup('(', ')') === null) return { problem: 'an unclosed (' };
      continue;
    }
    if (/[0-9.]/.test(c)) {
      // A number or a duration (5m, 1h30m, 1e3, 0x1f): its letters are not a name.
      while (at < text.length && /[0-9a-zA-Z_.]/.test(text[at]!)) at++;
      continue;
    }
    if (kIdentifierStart.test(c)) {
      const start = at;
      while (at < text.length && kIdentifierPart.test(text[at]!)) at++;
      const word = text.slice(start, at);
      let next = at;
      while (next < text.length && /\s/.test(text[next]!)) next++;
      const lower = word.toLowerCase();
      if (kLabelListKeywords.has(lower)) {
        labelListNext = true;
        continue;
      }
      if (kKeywords.has(lower)) continue;
      // A function or an aggregation: `rate(`, `sum(`, or `sum by (x) (`.
      if (text[next] === '(') continue;
      if (kAggregations.has(lower) && /^(by|without)\b/i.test(text.slice(next))) continue;
      if (text[next] === '{') {
        at = next;
        const matchers = skipGroup('{', '}');
        if (matchers === null) return { problem: 'an unclosed {' };
        if (/(^|[\s,{])__name__\s*(=|!=|=~|!~)/.test(matchers))
          return { problem: `${word}{…} must not match on __name__: name the metric itself` };
      }
      names.add(word);
      continue;
    }
    at++;
  }
  if (names.size === 0) return { problem: 'the expression reads no metric' };
  return { names: [...names] };
}

/** The operator's list of metrics guards may read: exact names, or prefixes written `prefix*`; `*` alone allows every metric. */
export class MetricAllowList {
  private readonly exact = new Set<string>();
  private readonly prefixes: string[] = [];

  constructor(readonly patterns: readonly string[]) {
    for (const pattern of patterns) {
      if (pattern.endsWith('*')) this.prefixes.push(pattern.slice(0, -1));
      else this.exact.add(pattern);
    }
  }

  allows(name: string): boolean {
    return this.exact.has(name) || this.prefixes.some((prefix) => name.startsWith(prefix));
  }

  /** Why a guard may not ask this expression of Prometheus; null: it may. */
  problem(expression: string): string | null {
    if (this.patterns.length === 0)
      return "this server's operator allows no Prometheus metrics in guards (FLAGWIRE_PROMETHEUS_METRICS names them)";
    const found = promqlMetricNames(expression);
    if ('problem' in found) return found.problem;
    const refused = found.names.filter((name) => !this.allows(name));
    if (refused.length === 0) return null;
    return `${refused.join(', ')} ${refused.length === 1 ? 'is' : 'are'} not among the metrics this server's guards may read (FLAGWIRE_PROMETHEUS_METRICS: ${this.patterns.join(', ')})`;
  }
}

// A guard on Flagwire's own metrics names them as PromQL's instant selectors do, with exact matches only:
// `name` or `name{label="value",...}`. What it selects is summed over the series of GET /metrics' text
// (the Prometheus text format) whose labels include every label named.

export interface Selector {
  name: string;
  labels: [string, string][];
}

/** What a selector finds in a metrics text: the sum of the matching samples, and whether they count up. */
export interface Selected {
  /** Series matched; 0: the metric is not there (yet). */
  series: number;
  sum: number;
  counter: boolean;
}

const kName = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const kLabelName = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const kMaxLabels = 16;

/** The selector, or what is wrong with it. */
export function parseSelector(text: string): Selector | string {
  const name = kName.exec(text)?.[0];
  if (name === undefined) return `"${text}" must start with a metric name, e.g. flagwire_http_requests_total{status="500"}`;
  const rest = text.slice(name.length).trim();
  if (rest === '') return { name, labels: [] };
  if (!rest.startsWith('{') || !rest.endsWith('}')) return `after ${name}, only {label="value",...} may follow`;
  const labels = parseLabels(rest.slice(1, -1));
  if (labels === null) return `the labels of ${name} must be label="value" pairs, separated by commas (exact matches only)`;
  if (labels.length > kMaxLabels) return `at most ${kMaxLabels} labels`;
  return { name, labels };
}

/** `a="x",b="y"` as pairs (escapes \\, \" and \n as the text format writes them); null when malformed. */
function parseLabels(text: string): [string, string][] | null {
  const labels: [string, string][] = [];
  let at = 0;
  const skipSpace = () => {
    while (text[at] === ' ') at++;
  };
  skipSpace();
  while (at < text.length) {
    const label = kLabelName.exec(text.slice(at))?.[0];
    if (label === undefined) return null;
    at += label.length;
    skipSpace();
    if (text[at] !== '=' || text[at + 1] !== '"') return null;
    at += 2;
    let value = '';
    for (; at < text.length && text[at] !== '"'; at++) {
      if (text[at] === '\\') {
        at++;
        value += text[at] === 'n' ? '\n' : (text[at] ?? '');
      } else value += text[at];
    }
    if (text[at] !== '"') return null;
    at++;
    labels.push([label, value]);
    skipSpace();
    if (text[at] === ',') at++;
    else if (at < text.length) return null;
    skipSpace();
  }
  return labels;
}

/** The samples of `selector` in a metrics text, summed. A histogram's _count, _sum and _bucket count up. */
export function selectSamples(exposition: string, selector: Selector): Selected {
  let series = 0;
  let sum = 0;
  let type: string | undefined;
  for (const line of exposition.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [family, kind] = line.slice(7).split(' ');
      if (
        family !== undefined &&
        (family === selector.name ||
          selector.name === `${family}_count` ||
          selector.name === `${family}_sum` ||
          selector.name === `${family}_bucket`)
      )
        type = kind;
      continue;
    }
    if (line === '' || line.startsWith('#') || !line.startsWith(selector.name)) continue;
    const after = line[selector.name.length];
    if (after !== '{' && after !== ' ') continue;
    const close = after === '{' ? line.lastIndexOf('}') : selector.name.length;
    const labels = after === '{' ? parseLabels(line.slice(selector.name.length + 1, close)) : [];
    if (labels === null || !selector.labels.every(([k, v]) => labels.some(([lk, lv]) => lk === k && lv === v))) continue;
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(' ')[0],
    );
    if (Number.isNaN(value)) continue;
    series++;
    sum += value;
  }
  return { series, sum, counter: type === 'counter' || type === 'histogram' || type === 'summary' };
}

// A flag's evaluations per hour as a small bar chart (the flag list's Evaluations column). An SVG built
// in the page: nothing fetched, nothing inline for the Content-Security-Policy to refuse (its bars are
// coloured by the style sheet). Screen readers get its sum in words (role=img with a label).
const kSvg = 'http://www.w3.org/2000/svg';
const kBar = 4;
const kGap = 1;
const kHeight = 20;

/** An SVG element with its attributes (the experiment charts draw with it too). */
export function svg<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(kSvg, name);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

/** `counts`: evaluations per hour, oldest first, the last the current hour; `environment`: the one they were made in (null: every one). */
export function hourlyChart(counts: readonly number[], environment: string | null = null): SVGSVGElement {
  const total = counts.reduce((a, b) => a + b, 0);
  const peak = Math.max(...counts, 0);
  const where = environment === null ? '' : ` in ${environment}`;
  const label = `Evaluations${where} per hour over the last ${counts.length} hours: ${total.toLocaleString('en')} in all, at most ${peak.toLocaleString('en')} in an hour`;
  const width = counts.length * (kBar + kGap) - kGap;
  const chart = svg('svg', {
    class: 'hourly',
    role: 'img',
    'aria-label': label,
    width,
    height: kHeight,
    viewBox: `0 0 ${width} ${kHeight}`,
  });
  const title = svg('title', {});
  title.textContent = label;
  chart.append(title);
  counts.forEach((count, i) => {
    // An hour with any evaluation shows at least one pixel: a quiet hour is not an empty one.
    const height = count === 0 ? 0 : Math.max(1, Math.round((count / peak) * kHeight));
    chart.append(svg('rect', { x: i * (kBar + kGap), y: kHeight - height, width: kBar, height }));
  });
  return chart;
}

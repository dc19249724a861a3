// An experiment's intervals drawn (the results page, docs/web-console.md: Experiments): one interval on
// an axis through 0, and one treatment's intervals over time. SVGs built in the page, coloured by the
// style sheet (nothing inline for the Content-Security-Policy to refuse); each is role=img with its
// numbers in words as its label, and the page writes the same numbers as text beside it.
import { svg } from './usage-chart.js';

/** An interval as the API gives it: a bound null where nothing bounds it yet. */
export interface Interval {
  estimate: number;
  lower: number | null;
  upper: number | null;
}

/** How far the axis reaches either side of 0: past every finite number of `intervals`, by a tenth. */
export function axisReach(intervals: readonly Interval[]): number {
  const finite = intervals.flatMap((i) => [i.estimate, i.lower, i.upper]).filter((x): x is number => x !== null && Number.isFinite(x));
  const reach = Math.max(...finite.map(Math.abs), 0);
  return reach === 0 ? 1 : reach * 1.1;
}

const kBarWidth = 240;
const kBarHeight = 28;

/** One interval on an axis from -reach to +reach, 0 marked; an unbounded side runs to the edge as an arrow. */
export function intervalBar(interval: Interval, reach: number, label: string): SVGSVGElement {
  const x = (v: number) => ((Math.max(-reach, Math.min(reach, v)) + reach) / (2 * reach)) * kBarWidth;
  const mid = kBarHeight / 2;
  const chart = svg('svg', { class: 'interval', role: 'img', 'aria-label': label, viewBox: `0 0 ${kBarWidth} ${kBarHeight}` });
  const title = svg('title', {});
  title.textContent = label;
  const lower = interval.lower ?? -reach;
  const upper = interval.upper ?? reach;
  chart.append(
    title,
    svg('line', { class: 'zero', x1: x(0), x2: x(0), y1: 2, y2: kBarHeight - 2 }),
    svg('line', { class: 'span', x1: x(lower), x2: x(upper), y1: mid, y2: mid }),
    interval.lower === null
      ? arrow(x(lower), mid, -1)
      : svg('line', { class: 'span', x1: x(lower), x2: x(lower), y1: mid - 6, y2: mid + 6 }),
    interval.upper === null
      ? arrow(x(upper), mid, 1)
      : svg('line', { class: 'span', x1: x(upper), x2: x(upper), y1: mid - 6, y2: mid + 6 }),
    svg('circle', { class: 'estimate', cx: x(interval.estimate), cy: mid, r: 4 }),
  );
  return chart;
}

function arrow(x: number, y: number, side: 1 | -1): SVGPolygonElement {
  return svg('polygon', { class: 'estimate', points: `${x},${y} ${x - side * 7},${y - 5} ${x - side * 7},${y + 5}` });
}

const kPlotWidth = 480;
const kPlotHeight = 160;
const kPad = 12;

/** One treatment's intervals at each point in time, oldest first: a vertical bar each, its estimate a dot, 0 a line. */
export function intervalPlot(points: readonly (Interval & { at: number })[], label: string): SVGSVGElement {
  const reach = axisReach(points);
  const y = (v: number) => kPad + ((reach - Math.max(-reach, Math.min(reach, v))) / (2 * reach)) * (kPlotHeight - 2 * kPad);
  const step = points.length > 1 ? (kPlotWidth - 2 * kPad) / (points.length - 1) : 0;
  const x = (i: number) => (points.length > 1 ? kPad + i * step : kPlotWidth / 2);
  const chart = svg('svg', { class: 'interval-plot', role: 'img', 'aria-label': label, viewBox: `0 0 ${kPlotWidth} ${kPlotHeight}` });
  const title = svg('title', {});
  title.textContent = label;
  chart.append(title, svg('line', { class: 'zero', x1: 0, x2: kPlotWidth, y1: y(0), y2: y(0) }));
  points.forEach((p, i) => {
    chart.append(
      svg('line', { class: 'span', x1: x(i), x2: x(i), y1: y(p.upper ?? reach), y2: y(p.lower ?? -reach) }),
      svg('circle', { class: 'estimate', cx: x(i), cy: y(p.estimate), r: 3 }),
    );
  });
  return chart;
}

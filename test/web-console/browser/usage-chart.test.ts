// A flag's evaluations per hour as a bar chart (src/web-console/browser/usage-chart.ts), in a DOM: one bar
// per hour scaled to the busiest, a quiet hour at least one pixel, an empty one none, and the sum in words.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { hourlyChart } from '../../../src/web-console/browser/usage-chart.js';

const bars = (chart: SVGSVGElement) =>
  Array.from(chart.querySelectorAll('rect')).map((r) => ({
    x: r.getAttribute('x'),
    y: r.getAttribute('y'),
    height: r.getAttribute('height'),
  }));

t.test('one bar per hour, scaled to the busiest hour; a quiet hour shows one pixel, an hour with none no bar', async (t) => {
  const chart = hourlyChart([0, 5, 1_000_000, 500_000]);
  t.equal(chart.namespaceURI, 'http://www.w3.org/2000/svg');
  t.same(bars(chart), [
    { x: '0', y: '20', height: '0' },
    { x: '5', y: '19', height: '1' },
    { x: '10', y: '0', height: '20' },
    { x: '15', y: '10', height: '10' },
  ]);
  t.equal(chart.getAttribute('width'), '19', 'four bars of 4 with a gap of 1 between');
  t.equal(chart.getAttribute('viewBox'), '0 0 19 20');
});

t.test('screen readers get the sum and the peak in words, as the label and the title', async (t) => {
  const chart = hourlyChart([0, 5, 1_000_000, 500_000]);
  const words = 'Evaluations per hour over the last 4 hours: 1,500,005 in all, at most 1,000,000 in an hour';
  t.equal(chart.getAttribute('role'), 'img');
  t.equal(chart.getAttribute('aria-label'), words);
  t.equal(chart.querySelector('title')?.textContent, words);
});

t.test('hours with no evaluation at all: no bar, no NaN', async (t) => {
  const chart = hourlyChart([0, 0, 0]);
  t.same(
    bars(chart).map((b) => b.height),
    ['0', '0', '0'],
  );
  t.match(chart.getAttribute('aria-label'), '0 in all, at most 0 in an hour');
});

t.test("an environment's chart names it", async (t) => {
  t.equal(
    hourlyChart([2, 0, 1], 'production').getAttribute('aria-label'),
    'Evaluations in production per hour over the last 3 hours: 3 in all, at most 2 in an hour',
  );
});

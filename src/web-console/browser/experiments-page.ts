// A project environment's experiments (docs/web-console.md: Experiments): the list, a form to make one
// on a flag (its arms the flag's variants, equally weighted), Start and Stop; and an experiment's results
// read at a glance: the verdict sentences first, the sample-ratio check, per metric and treatment the
// estimate with its always-valid interval drawn and in words, CUPED's reduction and the chance to beat
// control, then the primary metric's interval over time. Every number is the Management API's own
// results (the console's route takes the same look), so the page and the API say the same.
import { api, dataTable, field, h, onSubmit, onThisPage, say, sayError, timeElement } from './dom.js';
import { axisReach, type Interval, intervalBar, intervalPlot } from './experiment-charts.js';
import { crumbs, emptyState, projectTabs, show, toForm } from './shell.js';
import type { ExperimentResultsPageView, ExperimentsView, Project } from './views.js';

type Experiment = ExperimentsView['experiments'][number];
type Results = ExperimentResultsPageView['results'];
type Comparison = Results['comparisons'][number];

const kPercent = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const kFigures = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });
const kCount = new Intl.NumberFormat('en-US');

/** The address of a project environment's experiments page, or of one experiment's results. */
function experimentsHref(projectId: string, env: string | null, key: string | null = null): string {
  const path = `#/projects/${encodeURIComponent(projectId)}/experiments${key === null ? '' : `/${encodeURIComponent(key)}`}`;
  return env === null ? path : `${path}?env=${encodeURIComponent(env)}`;
}

function apiPath(projectId: string, env: string | null, rest = ''): string {
  const path = `projects/${encodeURIComponent(projectId)}/experiments${rest}`;
  return env === null ? path : `${path}?env=${encodeURIComponent(env)}`;
}

/** A multi-environment project's environments as links, the one shown marked. */
function envLinks(project: Project, env: string | null): HTMLElement | null {
  if (project.kind !== 'multi') return null;
  return h(
    'nav',
    { 'aria-label': 'Environment', class: 'tabs' },
    'Environment: ',
    project.environments.map((e) =>
      h('a', { href: experimentsHref(project.id, e), 'aria-current': e === env ? 'page' : null }, e === env ? h('strong', {}, e) : e),
    ),
  );
}

export async function experimentsPage(projectId: string, params: URLSearchParams): Promise<void> {
  const data = await api<ExperimentsView>('GET', apiPath(projectId, params.get('env')));
  const { project, can, env } = data;
  const reload = onThisPage(() => experimentsPage(projectId, params));
  const create = can.editFlags && data.flags.length > 0 ? createForm(data, reload) : null;
  const where = env === null ? '' : ` in ${env}`;
  show(
    `Experiments of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Experiments of ${project.name}`),
    projectTabs(project),
    envLinks(project, env),
    h(
      'p',
      {},
      "An experiment compares a flag's variants on the events your application tracks. Started, the flag's answers say inExperiment and the exposures and tracked events your SDK sends are counted; its results stay valid however often you look.",
    ),
    can.editFlags ? null : h('p', { class: 'muted' }, 'Making, starting and stopping experiments needs the Editor, Admin or Owner role.'),
    data.experiments.length > 0
      ? experimentsTable(data, reload)
      : create === null
        ? emptyState(`No experiments${where} yet. An Editor, Admin or Owner can make one on a flag.`)
        : emptyState(`No experiments${where} yet. Make one with the New experiment form.`, toForm('Make an experiment', create)),
    create,
  );
}

function experimentsTable(data: ExperimentsView, reload: () => Promise<void>): HTMLElement {
  const flagName = (id: string) => data.flags.find((f) => f.id === id)?.name ?? id;
  const change = (e: Experiment, action: 'start' | 'stop') =>
    h(
      'button',
      {
        type: 'button',
        class: action === 'stop' ? 'secondary' : null,
        'aria-label': `${action === 'start' ? 'Start' : 'Stop'} experiment ${e.key}`,
        onclick: () => {
          api('POST', apiPath(data.project.id, data.env, `/${encodeURIComponent(e.key)}/${action}`))
            .then(() => reload())
            .then(() => say(`Experiment ${e.key} ${action === 'start' ? 'started' : 'stopped'}.`))
            .catch(sayError);
        },
      },
      action === 'start' ? 'Start' : 'Stop',
    );
  return dataTable(
    'Experiments',
    ['Experiment', 'Flag', 'Status', 'Primary metric', 'Planned subjects', 'Started', ...(data.can.editFlags ? ['Actions'] : [])],
    h(
      'tbody',
      {},
      data.experiments.map((e) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: experimentsHref(data.project.id, data.env, e.key) }, e.key)),
          h('td', {}, flagName(e.flagId)),
          h('td', {}, statusPill(e)),
          h('td', {}, e.primaryMetric),
          h('td', {}, kCount.format(e.plannedSubjects)),
          h('td', {}, e.startedAt === null ? 'not yet' : timeElement(e.startedAt)),
          data.can.editFlags ? h('td', { class: 'row-actions' }, change(e, e.status === 'running' ? 'stop' : 'start')) : null,
        ),
      ),
    ),
  );
}

function statusPill(e: Pick<Experiment, 'status'>): HTMLElement {
  const kind = e.status === 'running' ? 'on' : e.status === 'stopped' ? 'off' : 'pending';
  return h('span', { class: `pill ${kind}` }, e.status);
}

/** The metrics a form's lines name (`purchase conversion`, `revenue mean`), or the line that is not one. */
function metricsOf(text: string): { metric: string; kind: string }[] | string {
  const metrics: { metric: string; kind: string }[] = [];
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '') continue;
    const [metric, kind = 'conversion', ...rest] = line.split(/\s+/);
    if (rest.length > 0 || (kind !== 'conversion' && kind !== 'mean'))
      return `"${line}" is not a metric: write its event's key, then conversion or mean.`;
    metrics.push({ metric: metric!, kind });
  }
  return metrics;
}

function createForm(data: ExperimentsView, reload: () => Promise<void>): HTMLElement {
  const key = h('input', { type: 'text', name: 'key', required: true, size: 24, placeholder: 'checkout-2026' });
  const flag = h(
    'select',
    { name: 'flag' },
    data.flags.map((f) => h('option', { value: f.id }, `${f.name} (${f.variants.join(', ')})`)),
  );
  const control = h('select', { name: 'control' });
  const fillControl = () => {
    const variants = data.flags.find((f) => f.id === flag.value)?.variants ?? [];
    control.replaceChildren(...variants.map((v) => h('option', { value: v }, v)));
    // A boolean flag's control is its `off`: the change tested is turning it on.
    if (variants.includes('off')) control.value = 'off';
  };
  flag.addEventListener('change', fillControl);
  fillControl();
  const primary = h('input', { type: 'text', name: 'primary', required: true, size: 20, placeholder: 'purchase' });
  const primaryKind = h(
    'select',
    { name: 'primaryKind' },
    h('option', { value: 'conversion' }, 'conversion (did the subject do it)'),
    h('option', { value: 'mean' }, "mean (of each subject's total value)"),
  );
  const more = h('textarea', { name: 'metrics', rows: 2, cols: 40, placeholder: 'revenue mean' });
  const planned = h('input', { type: 'text', name: 'plannedSubjects', required: true, inputmode: 'numeric', size: 10, value: '10000' });
  const form = h(
    'form',
    {
      onsubmit: onSubmit(async () => {
        const others = metricsOf(more.value);
        if (typeof others === 'string') {
          say(`${others} Nothing was sent.`, 'error');
          return;
        }
        const variants = data.flags.find((f) => f.id === flag.value)?.variants ?? [];
        const made = await api<Experiment>('POST', apiPath(data.project.id, data.env), {
          key: key.value.trim(),
          flagId: flag.value,
          variants: variants.map((variant) => ({ variant, weight: 1 })),
          control: control.value,
          metrics: [{ metric: primary.value.trim(), kind: primaryKind.value }, ...others],
          primaryMetric: primary.value.trim(),
          plannedSubjects: Number(planned.value.trim()),
        });
        await reload();
        say(`Experiment ${made.key} made (not started).`);
      }),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'New experiment'),
      h(
        'p',
        { class: 'muted' },
        "Its arms are the flag's variants, equally weighted; the control is the one the others are compared with.",
      ),
      h(
        'div',
        { class: 'row' },
        field('Key', key),
        field('Flag', flag),
        field('Control', control),
        field('Primary metric (a tracked event)', primary),
        field('Measured as', primaryKind),
        field('Planned subjects', planned),
      ),
      field('More metrics (one a line: event key, then conversion or mean)', more, 'block'),
      h('button', { type: 'submit' }, 'Make experiment'),
    ),
  );
  return form;
}

/** An effect's size in its metric's words, as the verdicts write it: a lift in %, a conversion's difference in points, a mean's in its units. */
function size(value: number | null, scale: 'relative' | 'conversion' | 'mean'): string {
  if (value === null) return 'unbounded';
  if (scale === 'relative') return `${kPercent.format(value * 100)}%`;
  if (scale === 'conversion') return `${kPercent.format(value * 100)} points`;
  return kFigures.format(value);
}

/** What a comparison is read on: the lift where there is one, else the difference. */
function readOf(c: Comparison): { interval: Interval; scale: 'relative' | 'conversion' | 'mean'; what: string } {
  if (c.relative !== null) return { interval: c.relative, scale: 'relative', what: 'lift' };
  return { interval: c.absolute, scale: c.kind, what: 'difference' };
}

function intervalText(i: Interval, scale: 'relative' | 'conversion' | 'mean'): string {
  return `${size(i.estimate, scale)} (${size(i.lower, scale)} to ${size(i.upper, scale)})`;
}

export async function experimentResultsPage(projectId: string, key: string, params: URLSearchParams): Promise<void> {
  const data = await api<ExperimentResultsPageView>('GET', apiPath(projectId, params.get('env'), `/${encodeURIComponent(key)}/results`));
  const { project, can, env, results } = data;
  const e = results.experiment;
  const reload = onThisPage(() => experimentResultsPage(projectId, key, params));
  const action = e.status === 'running' ? 'stop' : 'start';
  const change = can.editFlags
    ? h(
        'button',
        {
          type: 'button',
          class: action === 'stop' ? 'secondary' : null,
          onclick: () => {
            api('POST', apiPath(project.id, env, `/${encodeURIComponent(e.key)}/${action}`))
              .then(() => reload())
              .then(() => say(`Experiment ${e.key} ${action === 'start' ? 'started' : 'stopped'}.`))
              .catch(sayError);
          },
        },
        action === 'start' ? 'Start experiment' : 'Stop experiment',
      )
    : null;
  const subjects = [...subjectsByVariant(results).values()].reduce((a, b) => a + b, 0);
  show(
    `Experiment ${e.key}`,
    crumbs([`#/projects/${project.id}`, project.name], [experimentsHref(project.id, env), 'Experiments']),
    h('h1', {}, `Experiment ${e.key}`),
    projectTabs(project),
    h(
      'p',
      {},
      statusPill(e),
      env === null ? '' : ` in ${env}`,
      ` · ${kCount.format(subjects)} of ${kCount.format(e.plannedSubjects)} planned subjects · control ${e.control} · primary metric ${e.primaryMetric}`,
      e.startedAt === null ? '' : [' · started ', timeElement(e.startedAt)],
      ' ',
      change,
    ),
    h('section', { 'aria-labelledby': 'verdict-heading' }, h('h2', { id: 'verdict-heading' }, 'Verdict'), results.primary.map(verdictLine)),
    srmSection(results),
    metricsSection(results.comparisons),
    historySection(results),
    planSection(e, can.editFlags, async (change) => {
      await api<Experiment>('PATCH', apiPath(project.id, env, `/${encodeURIComponent(e.key)}`), change);
      await reload();
      say(`Plan of experiment ${e.key} saved.`);
    }),
  );
}

/**
 * The arms with their weights and planned shares, and the planned size; before the experiment runs, a
 * form that changes the weights and the planned size. While it runs the API refuses any change to its
 * plan (its statistics are judged against it), so the page says so instead of offering the form.
 */
function planSection(e: Experiment, editable: boolean, save: (change: object) => Promise<void>): HTMLElement {
  const total = e.variants.reduce((sum, v) => sum + v.weight, 0);
  const arms = dataTable(
    'Arms',
    ['Variant', 'Weight', 'Planned share'],
    h(
      'tbody',
      {},
      e.variants.map((v) =>
        h(
          'tr',
          {},
          h('td', {}, v.variant === e.control ? `${v.variant} (control)` : v.variant),
          h('td', {}, kFigures.format(v.weight)),
          h('td', {}, `${kPercent.format((v.weight / total) * 100)}%`),
        ),
      ),
    ),
  );
  const planned = h('p', {}, `${kCount.format(e.plannedSubjects)} planned subjects over every arm.`);
  const change = !editable
    ? null
    : e.status === 'running'
      ? h('p', { class: 'muted' }, 'Its weights and planned size cannot change while it runs: stop it first (its statistics are kept).')
      : planForm(e, save);
  return h('section', { 'aria-labelledby': 'plan-heading' }, h('h2', { id: 'plan-heading' }, 'Plan'), arms, planned, change);
}

/** The weights and planned size of an experiment that does not run, as a form that saves them. */
function planForm(e: Experiment, save: (change: object) => Promise<void>): HTMLElement {
  // What is typed is sent: the server's rule and its words decide (a weight must be a positive number).
  const weights = e.variants.map((v) =>
    h('input', { type: 'text', name: `weight-${v.variant}`, inputmode: 'decimal', size: 8, required: true, value: String(v.weight) }),
  );
  const plannedInput = h('input', {
    type: 'text',
    name: 'plannedSubjects',
    inputmode: 'numeric',
    size: 10,
    required: true,
    value: String(e.plannedSubjects),
  });
  return h(
    'form',
    {
      onsubmit: onSubmit(() =>
        save({
          variants: e.variants.map((v, i) => ({ variant: v.variant, weight: Number(weights[i]!.value.trim()) })),
          plannedSubjects: Number(plannedInput.value.trim()),
        }),
      ),
    },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Change the plan'),
      h('p', { class: 'muted' }, 'Weights are shares on any scale (50 and 50, or 1 and 1). The plan is fixed once the experiment starts.'),
      h(
        'div',
        { class: 'row' },
        e.variants.map((v, i) => field(`Weight of ${v.variant}`, weights[i]!)),
        field('Planned subjects', plannedInput),
      ),
      h('button', { type: 'submit' }, 'Save plan'),
    ),
  );
}

function verdictLine(c: Comparison): HTMLElement {
  return h('p', { class: 'verdict' }, c.verdict);
}

/** Subjects per variant as the comparisons count them (the sample-ratio check gives shares only). */
function subjectsByVariant(results: Results): Map<string, number> {
  const subjects = new Map<string, number>();
  for (const c of results.comparisons) {
    subjects.set(results.experiment.control, c.control.subjects);
    subjects.set(c.variant, c.treatment.subjects);
  }
  return subjects;
}

function srmSection(results: Results): HTMLElement {
  const { srm } = results;
  const sentence = srm.sentence;
  const subjects = subjectsByVariant(results);
  const share = (x: number | undefined) => (x === undefined ? '—' : `${kPercent.format(x * 100)}%`);
  return h(
    'section',
    { 'aria-labelledby': 'srm-heading' },
    h('h2', { id: 'srm-heading' }, 'Sample ratio'),
    h('p', { class: srm.verdict === 'mismatch' ? 'error' : null }, sentence),
    dataTable(
      'Subjects per arm',
      ['Variant', 'Subjects', 'Share', 'Planned share'],
      h(
        'tbody',
        {},
        srm.variants.map((v, i) => {
          const n = subjects.get(v);
          return h(
            'tr',
            {},
            h('td', {}, v),
            h('td', {}, n === undefined ? '—' : kCount.format(n)),
            h('td', {}, share(srm.observed[i])),
            h('td', {}, share(srm.planned[i])),
          );
        }),
      ),
    ),
  );
}

function metricsSection(comparisons: readonly Comparison[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'metrics-heading' },
    h('h2', { id: 'metrics-heading' }, 'Metrics'),
    h(
      'p',
      { class: 'muted' },
      'Each interval is always valid: it holds however often the results are read. The drawing marks 0 with a dashed line; an interval clear of it is a difference.',
    ),
    dataTable(
      'Metrics',
      ['Metric', 'Variant', 'Control', 'Treatment', 'Effect (interval)', 'Drawn', 'CUPED', 'Chance to beat control'],
      h('tbody', {}, comparisons.map(metricRow)),
    ),
  );
}

function metricRow(c: Comparison): HTMLElement {
  const { interval, scale, what } = readOf(c);
  const text = intervalText(interval, scale);
  const mean = (m: { subjects: number; mean: number }) =>
    `${c.kind === 'conversion' ? `${kPercent.format(m.mean * 100)}%` : kFigures.format(m.mean)} of ${kCount.format(m.subjects)}`;
  return h(
    'tr',
    {},
    h('th', { scope: 'row' }, `${c.metric} (${c.kind})`),
    h('td', {}, c.variant),
    h('td', {}, mean(c.control)),
    h('td', {}, mean(c.treatment)),
    h('td', {}, `${what} ${text}`),
    h('td', {}, intervalBar(interval, axisReach([interval]), `${c.variant} on ${c.metric}: ${what} ${text}`)),
    h(
      'td',
      {},
      c.cuped === null ? 'no pre-exposure data' : `variance ${kPercent.format(Math.max(0, c.cuped.varianceReduction) * 100)}% lower`,
    ),
    h('td', {}, c.bayes === null ? 'not known yet' : `${kPercent.format(c.bayes.chanceToBeatControl * 100)}%`),
  );
}

function historySection(results: Results): HTMLElement {
  const now = Date.now();
  const variants = results.primary.map((c) => c.variant);
  return h(
    'section',
    { 'aria-labelledby': 'history-heading' },
    h('h2', { id: 'history-heading' }, `The interval over time (${results.experiment.primaryMetric})`),
    h(
      'p',
      { class: 'muted' },
      'One point a day: the interval at the first look at the results that day while the experiment ran (the last 90 days kept), then now.',
    ),
    variants.map((variant) => {
      const current = results.primary.find((c) => c.variant === variant)!;
      const read = readOf(current);
      const past = results.history.flatMap((p) =>
        p.comparisons
          .filter((c) => c.variant === variant && (c.scale === 'relative') === (read.scale === 'relative'))
          .map((c) => ({ ...c, at: p.at })),
      );
      const points = [...past, { ...read.interval, at: now }];
      const label = `${variant}'s ${read.what} on ${current.metric} over ${points.length} ${points.length === 1 ? 'point' : 'points'}, the last now: ${intervalText(read.interval, read.scale)}`;
      return h(
        'div',
        {},
        h('h3', {}, `${variant} against ${results.experiment.control}`),
        intervalPlot(points, label),
        dataTable(
          `${variant}'s interval over time`,
          ['When', `${read.what[0]!.toUpperCase()}${read.what.slice(1)}`, 'Interval'],
          h(
            'tbody',
            {},
            points.map((p, i) =>
              h(
                'tr',
                {},
                h('td', {}, i === points.length - 1 ? 'now' : timeElement(p.at)),
                h('td', {}, size(p.estimate, read.scale)),
                h('td', {}, `${size(p.lower, read.scale)} to ${size(p.upper, read.scale)}`),
              ),
            ),
          ),
        ),
      );
    }),
  );
}

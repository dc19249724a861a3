// A project's playground: a context in (targeting key, cohort, environment, attributes), every flag's
// answer and why out, as the server's Evaluation API gives it (docs/web-console.md). The context is kept
// in the address as the Evaluation API's own query string (#/projects/ID/playground?targetingKey=u&plan=beta),
// so a shared link shows the same answers and the query can be pasted after GET /v1/flags/{id}?.
import { api, dataTable, field, h, onSubmit, pairsEditor } from './dom.js';
import { crumbs, projectTabs, show } from './shell.js';
import type { PlaygroundResult, PlaygroundView, ProjectView } from './views.js';

/** Query parameters that are fields of their own, never attributes (spec: GET /v1/flags/{flag_id}). */
const kFields = ['targetingKey', 'cohort', 'env'];

export async function playgroundPage(projectId: string, params: URLSearchParams): Promise<void> {
  const data = await api<ProjectView>('GET', `projects/${encodeURIComponent(projectId)}`);
  const { project } = data;
  const targetingKey = h('input', { type: 'text', name: 'targetingKey', value: params.get('targetingKey') ?? '' });
  const cohort = h('input', { type: 'text', name: 'cohort', value: params.get('cohort') ?? '' });
  const env =
    project.kind === 'multi'
      ? h(
          'select',
          { name: 'env' },
          project.environments.map((e) => h('option', { value: e, selected: e === params.get('env') }, e)),
        )
      : null;
  const attributes = pairsEditor(
    'Attributes',
    'Attribute',
    [...params].filter(([name]) => !kFields.includes(name)),
  );
  const summary = h('p', { role: 'status', class: 'muted' });
  const results = h('div');

  const evaluate = async () => {
    const answer = await api<PlaygroundView>('POST', `projects/${encodeURIComponent(project.id)}/playground`, {
      targetingKey: targetingKey.value,
      cohort: cohort.value,
      ...(env === null ? {} : { env: env.value }),
      attributes: attributes.pairs(),
    });
    // Replaced, not pushed: evaluating is no navigation (hashchange would read the page again).
    const suffix = answer.query === '' ? '' : `?${answer.query}`;
    history.replaceState(history.state, '', `#/projects/${encodeURIComponent(project.id)}/playground${suffix}`);
    const on = answer.results.filter((r) => r.enabled === true).length;
    summary.textContent =
      answer.results.length === 0
        ? 'This project has no flags yet.'
        : `${answer.results.length} flags evaluated${answer.env === null ? '' : ` in ${answer.env}`}: ${on} enabled, ${answer.results.length - on} not. Same as GET /v1/flags/{id}${suffix}.`;
    results.replaceChildren(
      dataTable('Answers for this context', ['Flag', 'Enabled', 'Value', 'Reason', 'Why'], h('tbody', {}, answer.results.map(resultRow))),
    );
  };

  show(
    `Playground of ${project.name}`,
    crumbs([`#/projects/${project.id}`, project.name]),
    h('h1', {}, `Playground of ${project.name}`),
    projectTabs(project),
    h(
      'p',
      { class: 'muted' },
      'Try a context: every flag of the project is evaluated for it as the Evaluation API and OFREP would, and each says which rule decided. Nothing is changed, and no flag is counted as used.',
    ),
    h(
      'form',
      // role=search: a context to try, not data to save, so leaving the page with it typed asks nothing (unsaved-edits.ts).
      { role: 'search', 'aria-label': 'Context to evaluate', onsubmit: onSubmit(evaluate) },
      h(
        'fieldset',
        {},
        h('legend', {}, 'Context'),
        h(
          'div',
          { class: 'row' },
          field('Targeting key', targetingKey),
          field('Cohort', cohort),
          env === null ? null : field('Environment', env),
        ),
        attributes.element,
        h('button', { type: 'submit' }, 'Evaluate'),
      ),
    ),
    summary,
    results,
  );
  // A shared link (or a reload) with a context shows its answers at once.
  if (params.size > 0) await evaluate();
}

function resultRow(r: PlaygroundResult): HTMLElement {
  const enabled = r.enabled === null ? 'refused' : r.enabled ? 'on' : 'off';
  return h(
    'tr',
    {},
    h('td', {}, h('a', { href: `#/flags/${r.id}` }, r.name)),
    h('td', {}, h('span', { class: `pill ${r.enabled ? 'on' : 'off'}` }, enabled)),
    h('td', {}, r.value === undefined ? h('span', { class: 'muted' }, "caller's default") : h('code', {}, JSON.stringify(r.value))),
    h('td', {}, r.errorCode === undefined ? r.reason : `${r.reason} (${r.errorCode})`),
    h('td', {}, r.because),
  );
}

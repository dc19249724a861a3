// Code references in the console (docs/code-refs.md; issue 99): on a flag's page, where the latest scan
// of each pushed branch reads its key, with the lines around each call; on the lifecycle page, the keys
// code reads that are no flag of the project. Code is shown as text only: a scanned line is whatever the
// repository holds.
import { dataTable, h } from './dom.js';
import { formatTime } from '../../words/time.js';
import { emptyState } from './shell.js';
import type { FlagCodeRefsView, MissingKeysView } from './views.js';

type Scan = FlagCodeRefsView['scans'][number];
type Reference = FlagCodeRefsView['branches'][number]['references'][number];

const kNeverScanned =
  'Never scanned: no code scan was pushed to this project. Run flagwire refs scan --push in CI (docs/code-refs.md) to see where code reads its flags.';

/** A branch as the pages name it, as GET /api/v1/code-refs/missing does. */
const place = (scan: Pick<Scan, 'repository' | 'branch'>) => `${scan.repository}@${scan.branch}`;

/** The flag page's section: each branch whose latest scan reads the flag's key, and its references to it. */
export function codeRefsSection(data: FlagCodeRefsView): HTMLElement {
  const naming = new Set(data.branches.map(place));
  const others = data.scans.filter((s) => !naming.has(place(s))).map(place);
  return h(
    'section',
    { 'aria-label': 'Code references' },
    h('h2', {}, 'Code references'),
    data.scans.length === 0
      ? emptyState(kNeverScanned)
      : data.branches.length === 0
        ? emptyState(`No references in the latest scans (${others.join(', ')}).`)
        : [
            ...data.branches.map((b) =>
              h(
                'section',
                { 'aria-label': `References on ${place(b)}` },
                h('h3', {}, place(b)),
                h('p', { class: 'muted' }, `Commit ${b.commit} · scanned ${formatTime(b.pushedAt)}`),
                b.references.map(reference),
              ),
            ),
            others.length === 0 ? null : h('p', { class: 'muted' }, `Not referenced in the latest scans of ${others.join(', ')}.`),
          ],
  );
}

function reference(ref: Reference): HTMLElement {
  const width = String(ref.contextStart + ref.context.length - 1).length;
  return h(
    'div',
    {},
    h('p', {}, h('code', {}, `${ref.file}:${ref.line}`), ` ${ref.method} (${ref.sdk}, ${ref.kind})`),
    ref.context.length === 0
      ? null
      : h('pre', {}, h('code', {}, ref.context.map((line, i) => `${String(ref.contextStart + i).padStart(width)}  ${line}`).join('\n'))),
  );
}

/** The lifecycle page's section: each key the latest scans read that is no flag, and where it is read. */
export function missingKeysSection(data: MissingKeysView): HTMLElement {
  const body = h(
    'tbody',
    {},
    data.missing.map((m) =>
      h(
        'tr',
        {},
        h('td', {}, h('code', {}, m.key)),
        h('td', {}, m.references),
        h(
          'td',
          {},
          h(
            'ul',
            { class: 'list-items' },
            m.places.map((p) => h('li', {}, `${place(p)} `, h('code', {}, `${p.file}:${p.line}`))),
            m.references > m.places.length ? h('li', { class: 'muted' }, `and ${m.references - m.places.length} more`) : null,
          ),
        ),
      ),
    ),
  );
  return h(
    'section',
    { 'aria-label': 'Keys in code that are not flags' },
    h('h2', {}, 'Keys in code that are not flags'),
    data.scans === 0
      ? emptyState(kNeverScanned)
      : data.missing.length === 0
        ? emptyState('Every key the latest scans read is a flag of this project.')
        : dataTable('Keys and where code reads them', ['Key', 'References', 'Where'], body),
    data.unknown === 0
      ? null
      : h(
          'p',
          { class: 'muted' },
          `${data.unknown} ${data.unknown === 1 ? 'reference computes its key' : 'references compute their key'}, so no flag is named there.`,
        ),
  );
}

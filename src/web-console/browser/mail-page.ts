// The signed-in user's mail.
import { api, h } from './dom.js';
import { formatTime } from '../../words/time.js';
import { crumbs, emptyState, show } from './shell.js';
import type { MailView } from './views.js';

export async function mailPage(): Promise<void> {
  const data = await api<MailView>('GET', 'mail');
  show(
    'Your mail',
    crumbs(),
    h('h1', {}, 'Your mail'),
    h('p', { class: 'muted' }, 'Messages to you about the organisations you belong to.'),
    data.messages.length === 0
      ? emptyState('No messages. When an API token of one of your organisations is refused, the notice sent to you is shown here.')
      : null,
    ...data.messages.map((m) =>
      h(
        'article',
        { 'aria-label': m.subject },
        h('h2', {}, m.subject),
        h(
          'p',
          { class: 'muted' },
          `To ${m.to} · about ${m.orgName ?? 'an organisation'} · ${formatTime(m.at)} · ${m.sentAt !== null ? 'sent' : m.failedAt !== null ? 'given up' : 'recorded, not sent'}`,
        ),
        h('pre', {}, m.text),
      ),
    ),
  );
}

// The page an invitation's mailed link opens (#/join/INVITATION/TOKEN) for an address with no user:
// the invitee chooses a name and a password, and is a member, signed in. Shown without a session.
import { api, field, h, onSubmit, sayOnNextPage, setCsrfToken } from './dom.js';
import { show } from './shell.js';
import { accountBar } from './sign-in.js';
import type { User } from './views.js';

export function joinPage(invitationId: string, token: string): void {
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'name', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', minlength: 12, required: true });
  show(
    'Join',
    h('h1', {}, 'Join your organisation'),
    h('p', {}, 'Choose your name and a password of at least 12 characters; you sign in with your e-mail address and it.'),
    h(
      'form',
      {
        class: 'signin',
        onsubmit: onSubmit(async () => {
          const joined = await api<{ user: User; csrfToken: string }>('POST', 'join', {
            invitationId,
            token,
            name: name.value.trim(),
            password: password.value,
          });
          setCsrfToken(joined.csrfToken);
          accountBar(joined.user);
          sayOnNextPage(`Welcome, ${joined.user.name}: you are signed in as ${joined.user.email}.`);
          // The link's token leaves the address (and the history entry), now that it is used.
          location.replace('#/');
        }),
      },
      field('Your name', name),
      field('Password', password),
      h('p', {}, h('button', { type: 'submit' }, 'Join')),
    ),
  );
}

// The sign-in form and the account bar.
import { api, field, h, kSignedInEvent, onSubmit, say, sayError, sayOnNextPage, setCsrfToken } from './dom.js';
import { show } from './shell.js';
import { kNotAnEdit } from './unsaved-edits.js';
import type { User } from './views.js';

export function signInPage(): void {
  document.getElementById('account')!.replaceChildren();
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  show(
    'Sign in',
    h('h1', {}, 'Sign in'),
    h(
      'form',
      {
        class: 'signin',
        // An address and a password: nothing to lose by leaving (unsaved-edits.ts).
        ...kNotAnEdit,
        onsubmit: onSubmit(async () => {
          const signed = await api<{ user: User; csrfToken: string }>('POST', 'sign-in', { email: email.value, password: password.value });
          setCsrfToken(signed.csrfToken);
          accountBar(signed.user);
          sayOnNextPage(`Signed in as ${signed.user.name}.`);
          if (location.hash === '' || location.hash === '#/') window.dispatchEvent(new Event(kSignedInEvent));
          else location.hash = '#/';
        }),
      },
      field('Email', email),
      field('Password', password),
      h('p', {}, h('button', { type: 'submit' }, 'Sign in')),
    ),
  );
}

export function accountBar(user: User): void {
  document.getElementById('account')!.replaceChildren(
    // How many change requests wait for this user: filled in with every page drawn (waiting-page.ts).
    h('a', { id: 'waiting', href: '#/requests', hidden: true }),
    h('span', {}, `${user.name} (${user.email})`),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          api('POST', 'sign-out').then(() => {
            say('Signed out.');
            signInPage();
          }, sayError);
        },
      },
      'Sign out',
    ),
  );
}

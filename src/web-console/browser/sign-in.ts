// The sign-in form and the account bar.
import { ApiError, api, field, h, kSignedInEvent, onSubmit, say, sayError, sayOnNextPage, setCsrfToken } from './dom.js';
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
    singleSignOn(),
  );
}

/** A sign-in link as an Owner shares it (its settings' signInPath, or the whole address): its organisation id. */
const kSignInLink = /\/console\/sso\/([^/?#]+)\/start/;

/**
 * Signing in through the organisation's identity provider (docs/sso.md): the person gives its id, or
 * pastes its sign-in link. The server is asked first whether that organisation signs in so, and the
 * browser sent to its start route only then: an organisation without it is told here, on the form, in
 * the server's words (the start route would answer a bare JSON page).
 */
function singleSignOn(): HTMLElement {
  const org = h('input', {
    type: 'text',
    name: 'organisation',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'sso-hint',
  });
  const hint = h('p', { id: 'sso-hint', class: 'muted' }, 'Its ID (org_…), or the sign-in link your administrator gave you.');
  return h(
    'section',
    { 'aria-label': 'Single sign-on' },
    h('h2', {}, 'Single sign-on'),
    h(
      'form',
      {
        ...kNotAnEdit,
        onsubmit: onSubmit(async () => {
          const given = org.value.trim();
          const id = kSignInLink.exec(given)?.[1] ?? encodeURIComponent(given);
          const res = await fetch(`/console/sso/${id}`, { credentials: 'same-origin' });
          const data = (await res.json().catch(() => null)) as { signInPath?: string; error?: string; detail?: string } | null;
          if (!res.ok || data?.signInPath === undefined)
            throw new ApiError(res.status, data?.error ?? `HTTP ${res.status}`, data?.detail ?? '');
          location.assign(data.signInPath);
        }),
      },
      field('Organisation', org),
      hint,
      h('p', {}, h('button', { type: 'submit', class: 'secondary' }, 'Continue with single sign-on')),
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

// The page an invitation's mailed link opens (#/join/INVITATION/TOKEN) for an address with no user: it
// says which organisation invites which address in which role (read with the link's token), then the
// invitee chooses a name and a password, typed twice, and is a member, signed in. Shown without a session.
import { api, field, h, onSubmit, say, sayOnNextPage, setCsrfToken } from './dom.js';
import { formatTime } from '../../words/time.js';
import { show } from './shell.js';
import { accountBar } from './sign-in.js';
import type { JoinInvitationView, User } from './views.js';

export async function joinPage(invitationId: string, token: string): Promise<void> {
  const invitation = await api<JoinInvitationView>('POST', 'join/invitation', { invitationId, token });
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'name', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', minlength: 12, required: true });
  const again = h('input', { type: 'password', name: 'password-again', autocomplete: 'new-password', required: true });
  show(
    'Join',
    h('h1', {}, `Join ${invitation.orgName}`),
    h(
      'p',
      {},
      'You are invited to ',
      h('strong', {}, invitation.orgName),
      ' as ',
      h('strong', {}, invitation.role),
      ', with the address ',
      h('strong', {}, invitation.email),
      `. The invitation works until ${formatTime(invitation.expiresAt)}.`,
    ),
    h('p', {}, 'Choose your name and a password of at least 12 characters; you sign in with your e-mail address and it.'),
    h(
      'form',
      {
        class: 'signin',
        onsubmit: onSubmit(async () => {
          if (again.value !== password.value) {
            say('The two passwords are not the same: type the same password in both boxes. Nothing was sent.', 'error');
            again.focus();
            return;
          }
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
      field('Password again', again),
      h('p', {}, h('button', { type: 'submit' }, 'Join')),
    ),
  );
}

// A project's tokens page (src/web-console/browser/token-pages.ts), in a DOM with the API held by the
// test: Rotate and Revoke only where the server says the user may, each sent only once confirmed in its
// dialog; a rotation sends the grace period chosen there, and the new secret is shown once, in a box
// above the re-read list; a revocation during a rotation's grace names the old secret it ends.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { tokensPage } from '../../../src/web-console/browser/token-pages.js';
import type { TokensView } from '../../../src/web-console/browser/views.js';
import { type HeldRequest, holdRequests, settle } from '../../helpers/browser-dom.js';

const page = () => document.getElementById('page')!;
const status = () => document.getElementById('status')!;
const dialog = () => document.querySelector('dialog');
const byLabel = (label: string) => page().querySelector<HTMLButtonElement>(`button[aria-label="${label}"]`);
const dialogButton = (text: string) => Array.from(dialog()!.querySelectorAll('button')).find((b) => b.textContent === text)!;
const kUntil = Date.UTC(2026, 4, 2, 8);

function token(id: string, over: Record<string, unknown> = {}) {
  return {
    id,
    projectId: 'p1',
    name: `ci-${id}`,
    permission: 'read',
    environments: [],
    expiresAt: 0,
    createdAt: 1,
    createdBy: 'u1',
    revokedAt: null,
    status: 'active',
    createdByName: 'Ann',
    manageable: true,
    secretWorksUntil: null,
    graceRevocable: false,
    ...over,
  };
}

function answer(tokens: unknown[], opts: { createTokens?: boolean; environments?: string[] } = {}): TokensView {
  return {
    project: { id: 'p1', name: 'Shop', orgId: 'o1', kind: 'multi', environments: opts.environments ?? [] },
    org: null,
    role: 'admin',
    can: { createTokens: opts.createTokens ?? false, tokensReadOnly: false },
    tokens,
    slotsUsed: tokens.length,
    slots: 50,
  } as unknown as TokensView;
}

/** Opens the page, answering its read with `body`; the held requests go on collecting the page's next ones. */
async function open(body: TokensView): Promise<HeldRequest[]> {
  const held = holdRequests();
  const done = tokensPage('p1');
  held[0]!.answer({ status: 200, body });
  await done;
  return held;
}

t.test('Rotate and Revoke where the user may manage the token; only "Revoke old secret" where they may end its grace', async (t) => {
  await open(
    answer([
      token('t1'),
      token('t2', { manageable: false }),
      token('t3', { manageable: false, graceRevocable: true, secretWorksUntil: kUntil }),
    ]),
  );
  t.ok(byLabel('Rotate ci-t1') && byLabel('Revoke ci-t1'));
  t.equal(byLabel('Rotate ci-t2'), null);
  t.equal(byLabel('Revoke ci-t2'), null);
  t.equal(byLabel('Rotate ci-t3'), null);
  t.equal(byLabel('Revoke old secret of ci-t3')!.textContent, 'Revoke old secret');
  t.match(page().textContent, 'old secret works until 2026-05-02 08:00:00 UTC');
});

t.test('a rotation is sent only once confirmed, with the grace period chosen; the new secret is shown once, above the list', async (t) => {
  const held = await open(answer([token('t1')]));
  byLabel('Rotate ci-t1')!.click();
  await settle();
  const grace = dialog()!.querySelector<HTMLSelectElement>('select[name="gracePeriodSeconds"]')!;
  t.same(
    Array.from(grace.options).map((o) => o.value),
    ['0', '3600', '86400', '604800'],
  );
  dialogButton('Cancel').click();
  await settle();
  t.equal(held.length, 1, 'cancelled: nothing sent');

  byLabel('Rotate ci-t1')!.click();
  await settle();
  dialog()!.querySelector<HTMLSelectElement>('select[name="gracePeriodSeconds"]')!.value = '86400';
  dialogButton('Rotate').click();
  await settle();
  t.same(
    held.slice(1).map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['POST', '/console/api/tokens/t1/rotate', { gracePeriodSeconds: 86400 }]],
  );
  held[1]!.answer({ status: 200, body: { secret: 'fw_new_secret', replaced: { graceEndsAt: kUntil } } });
  await settle();
  t.equal(held[2]!.url, '/console/api/projects/p1/tokens', 'the list is read again');
  held[2]!.answer({ status: 200, body: answer([token('t1', { secretWorksUntil: kUntil })]) });
  await settle();
  t.equal(page().querySelector('#token-secret')!.textContent, 'fw_new_secret');
  t.equal(page().querySelector('section[aria-label="New token secret"] h2')!.textContent, 'Secret of ci-t1');
  t.equal(status().textContent, 'Token ci-t1 rotated: the old secret works until 2026-05-02 08:00:00 UTC.');
});

t.test('revoking during a grace period asks about the old secret, and sends an empty body', async (t) => {
  const held = await open(answer([token('t3', { manageable: false, graceRevocable: true, secretWorksUntil: kUntil })]));
  byLabel('Revoke old secret of ci-t3')!.click();
  await settle();
  t.equal(dialog()!.querySelector('h2')!.textContent, 'Revoke the old secret of token ci-t3?');
  dialogButton('Revoke').click();
  await settle();
  t.same(
    held.slice(1).map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['POST', '/console/api/tokens/t3/revoke', {}]],
  );
  held[1]!.answer({ status: 200, body: {} });
  await settle();
  held[2]!.answer({ status: 200, body: answer([]) });
  await settle();
  t.equal(status().textContent, 'Token ci-t3 revoked.');
  t.equal(page().querySelector('#token-secret'), null, 'no secret shown');
});

t.test('a new token is created with the environments checked, and its secret shown once after the list is read again', async (t) => {
  const held = await open(answer([], { createTokens: true, environments: ['staging', 'production'] }));
  const form = page().querySelector<HTMLFormElement>('form')!;
  form.querySelector<HTMLInputElement>('input[name="name"]')!.value = 'deploy';
  form.querySelector<HTMLSelectElement>('select[name="permission"]')!.value = 'write';
  form.querySelector<HTMLSelectElement>('select[name="expires"]')!.value = '90d';
  form.querySelector<HTMLInputElement>('input[name="env"][value="production"]')!.checked = true;
  form.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  t.same(
    held.slice(1).map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['POST', '/console/api/projects/p1/tokens', { name: 'deploy', permission: 'write', expires: '90d', environments: ['production'] }]],
  );
  held[1]!.answer({ status: 201, body: { name: 'deploy', secret: 'fw_secret_1' } });
  await settle();
  held[2]!.answer({ status: 200, body: answer([token('t9', { name: 'deploy' })], { createTokens: true }) });
  await settle();
  t.equal(page().querySelector('#token-secret')!.textContent, 'fw_secret_1');
  t.equal(status().textContent, 'Token deploy created.');
  const reopened = await open(answer([token('t9', { name: 'deploy' })], { createTokens: true }));
  t.equal(reopened.length, 1);
  t.equal(page().querySelector('#token-secret'), null, 'shown once: not on the next read of the page');
});

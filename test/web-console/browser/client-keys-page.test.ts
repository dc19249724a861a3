// A project's client keys page (src/web-console/browser/client-keys-page.ts), in a DOM with the API held
// by the test: the form and Revoke only where the server says the user may; a revocation sent only once
// confirmed in its dialog; a new key's body names the environment chosen (a single-environment project's
// none) and the uses checked, and its secret is shown once, in a box above the re-read list.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { clientKeysPage } from '../../../src/web-console/browser/client-keys-page.js';
import type { ClientKeysView } from '../../../src/web-console/browser/views.js';
import { type HeldRequest, holdRequests, settle } from '../../helpers/browser-dom.js';

const page = () => document.getElementById('page')!;
const status = () => document.getElementById('status')!;
const dialog = () => document.querySelector('dialog');
const byLabel = (label: string) => page().querySelector<HTMLButtonElement>(`button[aria-label="${label}"]`);
const dialogButton = (text: string) => Array.from(dialog()!.querySelectorAll('button')).find((b) => b.textContent === text)!;

function key(id: string, over: Record<string, unknown> = {}) {
  return {
    id,
    name: `app-${id}`,
    environment: 'production',
    uses: ['events', 'frontend'],
    createdAt: Date.UTC(2026, 4, 1),
    createdBy: 'user:u1',
    createdByName: 'Ann',
    revokedAt: null,
    ...over,
  };
}

function answer(keys: unknown[], opts: { canManage?: boolean; kind?: 'single' | 'multi' } = {}): ClientKeysView {
  const kind = opts.kind ?? 'multi';
  return {
    project: { id: 'p1', name: 'Shop', orgId: 'o1', kind, environments: kind === 'multi' ? ['staging', 'production'] : [] },
    org: null,
    role: 'admin',
    can: {},
    clientKeys: keys,
    canManage: opts.canManage ?? true,
    uses: ['events', 'frontend'],
    maxActive: 50,
  } as unknown as ClientKeysView;
}

/** Opens the page, answering its read with `body`; the held requests go on collecting the page's next ones. */
async function open(body: ClientKeysView): Promise<HeldRequest[]> {
  const held = holdRequests();
  const done = clientKeysPage('p1');
  held[0]!.answer({ status: 200, body });
  await done;
  return held;
}

t.test('a member who may not manage keys sees them all, revoked ones too, with no form and no Revoke', async (t) => {
  const held = await open(answer([key('k1'), key('k2', { revokedAt: Date.UTC(2026, 4, 2, 8) })], { canManage: false }));
  t.equal(held[0]!.url, '/console/api/projects/p1/client-keys');
  t.equal(page().querySelector('form'), null, 'no form');
  t.equal(byLabel('Revoke app-k1'), null, 'no Revoke');
  t.match(page().textContent, 'app-k2');
  t.match(page().textContent, 'revoked2026-05-02 08:00:00 UTC');
  t.match(page().textContent, 'needs a role that may change flags');
});

t.test('Revoke is offered on live keys only, and sent only once confirmed', async (t) => {
  const held = await open(answer([key('k1'), key('k2', { revokedAt: 5 })]));
  t.equal(byLabel('Revoke app-k2'), null, 'a revoked key offers none');
  byLabel('Revoke app-k1')!.click();
  await settle();
  t.equal(dialog()!.querySelector('h2')!.textContent, 'Revoke client key app-k1?');
  dialogButton('Cancel').click();
  await settle();
  t.equal(held.length, 1, 'cancelled: nothing sent');
  byLabel('Revoke app-k1')!.click();
  await settle();
  dialogButton('Revoke').click();
  await settle();
  t.same(
    held.slice(1).map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['POST', '/console/api/client-keys/k1/revoke', {}]],
  );
  held[1]!.answer({ status: 200, body: { id: 'k1', revokedAt: 9 } });
  await settle();
  t.equal(held[2]!.url, '/console/api/projects/p1/client-keys', 'the list is read again');
  held[2]!.answer({ status: 200, body: answer([key('k1', { revokedAt: 9 })]) });
  await settle();
  t.equal(status().textContent, 'Client key app-k1 revoked.');
  t.equal(page().querySelector('#client-key-secret'), null, 'no secret shown');
});

t.test('a new key names the environment chosen and the uses checked; its secret is shown once', async (t) => {
  const held = await open(answer([]));
  const form = page().querySelector<HTMLFormElement>('form')!;
  form.querySelector<HTMLInputElement>('input[name="name"]')!.value = 'storefront';
  form.querySelector<HTMLSelectElement>('select[name="environment"]')!.value = 'production';
  form.querySelector<HTMLInputElement>('input[name="uses"][value="events"]')!.checked = false;
  form.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  t.same(
    held.slice(1).map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['POST', '/console/api/projects/p1/client-keys', { name: 'storefront', environment: 'production', uses: ['frontend'] }]],
  );
  held[1]!.answer({ status: 201, body: { ...key('k9', { name: 'storefront' }), secret: 'fwc_secret_1' } });
  await settle();
  held[2]!.answer({ status: 200, body: answer([key('k9', { name: 'storefront' })]) });
  await settle();
  t.equal(page().querySelector('#client-key-secret')!.textContent, 'fwc_secret_1');
  t.equal(status().textContent, 'Client key storefront created.');
  const reopened = await open(answer([key('k9', { name: 'storefront' })]));
  t.equal(reopened.length, 1);
  t.equal(page().querySelector('#client-key-secret'), null, 'shown once: not on the next read of the page');
});

t.test("a single-environment project's form names no environment", async (t) => {
  const held = await open(answer([], { kind: 'single' }));
  const form = page().querySelector<HTMLFormElement>('form')!;
  t.equal(form.querySelector('select[name="environment"]'), null);
  form.querySelector<HTMLInputElement>('input[name="name"]')!.value = 'app';
  form.dispatchEvent(new Event('submit', { cancelable: true }));
  await settle();
  t.same(JSON.parse(held[1]!.body!), { name: 'app', uses: ['events', 'frontend'] });
});

// A change that became a change request, in the console's browser modules (a DOM, the API held by the
// test): api() does not hand the console's 202 {changeRequest} to its caller as the change it asked for
// but throws RequestOpened; sayError then draws the page again (the app's kRequestOpenedEvent) and the
// new page's status line says "not applied" with the request's link. A request's diff path reads as
// where and what (diffField); a policy rule reads as a sentence (ruleText).
import '../../helpers/browser-dom.js';
import t from 'tap';
import { ruleText } from '../../../src/web-console/browser/approvals-form.js';
import { api, kRequestOpenedEvent, newPageStatus, RequestOpened, sayError } from '../../../src/web-console/browser/dom.js';
import { diffField } from '../../../src/web-console/browser/requests-page.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const kRequest = {
  id: 'chr_1',
  summary: 'flag.patch search-v2 in production',
  title: 'Turn off search-v2 in production',
  approvals: [],
  required: 2,
};

t.test("a 202 {changeRequest} is no answer to the caller: RequestOpened, then the page drawn again with the request's link", async (t) => {
  const held = holdRequests();
  const call = api('PATCH', 'flags/f1?env=production', { enabled: false });
  await settle();
  held[0]!.answer({ status: 202, body: { changeRequest: kRequest, edited: false } });
  const err = await call.catch((e: unknown) => e);
  t.ok(err instanceof RequestOpened, 'the caller gets RequestOpened, not the request as its answer');
  let redrawn = 0;
  window.addEventListener(kRequestOpenedEvent, () => redrawn++);
  sayError(err);
  t.equal(redrawn, 1, 'the app is asked to draw the page again');
  newPageStatus();
  const status = document.getElementById('status')!;
  t.equal(
    status.textContent,
    'Not applied: this change needs approval. Change request opened: Turn off search-v2 in production (0 of 2 approvals). Open the change request',
    "the request by its title, in the audit log's words",
  );
  t.equal(status.querySelector('a')!.getAttribute('href'), '#/requests/chr_1');
  newPageStatus();
  t.equal(status.textContent, '', 'said once: the next page does not repeat it');
});

t.test('any other 2xx is the answer, as before', async (t) => {
  const held = holdRequests();
  const call = api('PATCH', 'flags/f1', { enabled: false });
  await settle();
  held[0]!.answer({ status: 200, body: { changed: true } });
  t.same(await call, { changed: true });
});

t.test("a diff line's field path: the environment matched against the request's, the state's keys in words", async (t) => {
  t.same(diffField('environments.production.enabled', ['production']), { env: 'production', key: 'enabled', sub: '' });
  t.same(diffField('environments.prod.eu.trafficPercentage', ['prod.eu']), { env: 'prod.eu', key: 'trafficPercentage', sub: '' });
  t.same(diffField('environments.production.typed.variants.blue', ['production']), { env: 'production', key: 'variants', sub: 'blue' });
  t.same(diffField('state.audienceId', [null]), { env: null, key: 'audienceId', sub: '' });
  t.same(diffField('rules', [null]), { env: null, key: 'rules', sub: '' });
  t.same(diffField('', [null]), { env: null, key: '', sub: '' }, 'the whole record');
});

t.test('a rule as a sentence: tokens by name', async (t) => {
  const tokens = new Map([['tok_1', 'deploy-bot']]);
  t.equal(
    ruleText({ env: 'production', required: 2, roles: ['owner', 'admin'], allowSelf: false, bypassTokens: ['tok_1'] }, tokens),
    'A change in production needs 2 approvals by owner or admin; its author may not approve it; changes by deploy-bot apply without approval.',
  );
  t.equal(
    ruleText({ env: null, required: 1, roles: ['editor'], allowSelf: true, bypassTokens: [] }, tokens),
    'A change needs 1 approval by editor; its author may approve it.',
  );
});

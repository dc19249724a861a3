// Undo of a flag change (src/web-console/browser/flag-undo.ts), in a DOM with the API held by the test:
// the status line that says a change was saved offers Undo, which sends the values the page showed
// before through the route the change took (a PATCH of exactly the fields it set, in its environment,
// or the setting's own POST), once however often it is clicked, then reloads and says what it did.
import '../../helpers/browser-dom.js';
import t from 'tap';
import { savedWithUndo, settingSavedWithUndo } from '../../../src/web-console/browser/flag-undo.js';
import { holdRequests, settle } from '../../helpers/browser-dom.js';

const status = () => document.getElementById('status')!;
const undoButton = () => status().querySelector('button')!;
const kFlag = { id: 'f1', name: 'Checkout' };

function counter() {
  let n = 0;
  return { reload: async () => void n++, count: () => n };
}

t.test("a state change's Undo PATCHes the previous values in its environment, once, then reloads", async (t) => {
  const held = holdRequests();
  const reloads = counter();
  savedWithUndo('Checkout in prod/eu saved.', kFlag, 'prod/eu', { enabled: false, trafficPercentage: 20 }, reloads.reload);
  t.equal(status().firstChild!.textContent, 'Checkout in prod/eu saved.');
  t.equal(undoButton().textContent, 'Undo');
  t.equal(held.length, 0, 'nothing sent before Undo');
  undoButton().click();
  undoButton().click();
  await settle();
  t.same(
    held.map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['PATCH', '/console/api/flags/f1?env=prod%2Feu', { enabled: false, trafficPercentage: 20 }]],
    'one PATCH of exactly the fields the change set',
  );
  held[0]!.answer({ status: 200, body: { changed: true } });
  await settle();
  t.equal(reloads.count(), 1);
  t.equal(status().textContent, 'Undone: Checkout in prod/eu has its previous enabled, trafficPercentage again.');
});

t.test('an Undo that changes nothing (the values are back already) says so', async (t) => {
  const held = holdRequests();
  savedWithUndo('Checkout saved.', kFlag, null, { enabled: true }, counter().reload);
  undoButton().click();
  await settle();
  t.equal(held[0]!.url, '/console/api/flags/f1', 'a flat flag: no environment');
  held[0]!.answer({ status: 200, body: { changed: false } });
  await settle();
  t.equal(status().textContent, 'Nothing to undo: Checkout already had its previous values.');
});

t.test("a setting's Undo posts the form's previous body to the setting's route", async (t) => {
  const held = holdRequests();
  const reloads = counter();
  settingSavedWithUndo('Description', kFlag, 'description', { description: 'was <this>' }, reloads.reload);
  t.equal(status().firstChild!.textContent, 'Description saved.');
  undoButton().click();
  await settle();
  t.same(
    held.map((r) => [r.method, r.url, JSON.parse(r.body!)]),
    [['POST', '/console/api/flags/f1/description', { description: 'was <this>' }]],
  );
  held[0]!.answer({ status: 200, body: {} });
  await settle();
  t.equal(reloads.count(), 1);
  t.equal(status().textContent, 'Undone: description of Checkout put back.');
});

t.test("a refused Undo says the server's error and reloads nothing", async (t) => {
  const held = holdRequests();
  const reloads = counter();
  savedWithUndo('Checkout saved.', kFlag, null, { enabled: true }, reloads.reload);
  undoButton().click();
  await settle();
  held[0]!.answer({ status: 403, body: { error: 'Forbidden', detail: 'Viewers cannot change flags.' } });
  await settle();
  t.equal(reloads.count(), 0);
  t.equal(status().className, 'status error');
  t.match(status().textContent, 'Viewers cannot change flags.');
});

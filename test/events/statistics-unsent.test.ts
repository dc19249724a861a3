// The statistics read on a node that was never sent an event (issue 58): answered empty, and the tally
// file is not created by the read; the first batch creates it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startExperimentServer } from '../helpers/experiment-server.js';

const { server, base, world, clientKey, statistics } = await startExperimentServer(t);
const tallyPath = join(server.dataDir, 'tally.mdb');

t.test('a read creates no tally file; the first batch does', async (t) => {
  t.strictSame(await statistics(), { experiment: 'checkout-2026', environment: null, variants: [] }, 'empty statistics');
  t.notOk(existsSync(tallyPath), 'no tally.mdb after the read');
  const erased = await call(base, 'POST', '/api/v1/events/subjects/erase', {
    token: world.secrets.write,
    body: { targetingKey: 'ann' },
  });
  t.strictSame(erased.json, { targetingKey: 'ann', environment: null, erased: false }, 'nothing to erase');
  t.notOk(existsSync(tallyPath), 'no tally.mdb after an erasure of nothing');
  const sent = await call(base, 'POST', '/ofrep/v1/events', {
    token: clientKey,
    body: { events: [{ kind: 'exposure', key: 'new-checkout', targetingKey: 'ann', variant: 'on', timestamp: Date.now() }] },
  });
  t.equal(sent.status, 200, sent.text);
  t.ok(existsSync(tallyPath), 'tally.mdb once an event was counted');
  t.equal((await statistics()).variants[0].subjects, 1, 'and the read sees it');
});

// Shutdown's wait: nothing in flight, and then no request started for the quiet time, so a request on a
// connection accepted just before the listener closed is still served.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { InFlight } from '../../src/http/in-flight.js';

t.test('drained waits out a request that starts during the quiet time', async (t) => {
  const inFlight = new InFlight();
  const first = inFlight.start();
  let resolved = false;
  const drained = inFlight.drained(60_000, 200).then((left) => {
    resolved = true;
    return left;
  });
  first();
  await sleep(50);
  const second = inFlight.start();
  await sleep(300);
  t.notOk(resolved, 'not drained while the second request is in flight');
  second();
  t.equal(await drained, 0, 'drained: nothing left in flight');
  t.equal(inFlight.size, 0);
});

t.test('drained gives up at its timeout while a request stays in flight', async (t) => {
  const inFlight = new InFlight();
  inFlight.start();
  t.equal(await inFlight.drained(50, 10), 1, 'it says one request is still in flight');
  t.equal(inFlight.size, 1, 'returned with the request still in flight');
});

t.test('with nothing started at all, drained resolves at once, whatever the quiet time', async (t) => {
  const first = await Promise.race([new InFlight().drained(60_000, 60_000).then(() => 'drained'), sleep(2000).then(() => 'still waiting')]);
  t.equal(first, 'drained');
});

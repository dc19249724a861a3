// The periodic-work helper on real timers: passes at the interval, never two at once, a failing pass
// logged and the loop kept going, a pass asked for now run after the one in flight, and stop() waiting
// for the pass in progress. The bounds only catch a hang.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { Periodic } from '../../src/background/periodic.js';
import { until } from '../helpers/smtp.js';

t.test('ticks at the interval; a tick that finds a pass running is skipped, never overlapping', async (t) => {
  let running = 0;
  let most = 0;
  let passes = 0;
  let release: () => void = () => undefined;
  const loop = new Periodic(
    async () => {
      running++;
      most = Math.max(most, running);
      passes++;
      // The first pass outlasts many ticks.
      if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
      running--;
    },
    { intervalMs: 10, onError: (err) => t.fail(String(err)) },
  );
  loop.start();
  loop.start(); // a second start adds no second timer
  t.teardown(() => loop.stop());
  await until('the first pass', () => passes === 1);
  await sleep(100);
  t.equal(passes, 1, 'no pass started while the first ran (about ten ticks passed)');
  release();
  await until('passes to resume after it', () => passes >= 4);
  t.equal(most, 1, 'never two passes at once');
});

t.test('a failing pass goes to onError and the loop goes on', async (t) => {
  const errors: unknown[] = [];
  let passes = 0;
  const loop = new Periodic(
    () => {
      passes++;
      if (passes <= 2) throw new Error(`pass ${passes} failed`);
    },
    { intervalMs: 10, onError: (err) => errors.push(err) },
  );
  loop.start();
  t.teardown(() => loop.stop());
  await until('passes after the failures', () => passes >= 4);
  t.match(errors, [{ message: 'pass 1 failed' }, { message: 'pass 2 failed' }]);
});

t.test('runNow runs after the pass in flight and rejects with its own error; stop waits for the pass in progress', async (t) => {
  const order: string[] = [];
  let release: () => void = () => undefined;
  let calls = 0;
  const loop = new Periodic(
    async () => {
      const n = ++calls;
      order.push(`start ${n}`);
      if (n === 1) await new Promise<void>((resolve) => (release = resolve));
      if (n === 3) throw new Error('third');
      order.push(`end ${n}`);
    },
    { intervalMs: 60_000, onError: (err) => t.fail(String(err)) },
  );
  const first = loop.runNow();
  const second = loop.runNow();
  const third = loop.runNow();
  await sleep(20);
  t.strictSame(order, ['start 1'], 'the next passes wait for the one in flight');
  let stopped = false;
  const stopping = loop.stop().then(() => (stopped = true));
  await sleep(20);
  t.notOk(stopped, 'stop() waits while a pass runs');
  release();
  await first;
  await second;
  await t.rejects(third, { message: 'third' }, 'the caller of runNow gets its error');
  await stopping;
  t.ok(stopped);
  t.strictSame(order, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3']);
  await loop.runNow();
  t.equal(calls, 4, 'a pass asked for after stop() still runs (a last flush), the ticks do not');
});

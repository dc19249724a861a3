// The token-activity recorder when the writer refuses a flush with 503 Storage busy (another process
// holds the write lock; nothing was applied): the activity is kept and sent with the next flush, merged
// with what came since, in order; and flushes do not pile up while one waits for the writer.
import t from 'tap';
import { pino } from 'pino';
import { ActivityRecorder } from '../../src/tokens/activity.js';
import { FlagwireError } from '../../src/errors.js';
import type { ActivityBatch } from '../../src/tokens/activity-commands.js';

t.test('a flush refused as busy is kept and sent with the next one, merged in order', async (t) => {
  const sent: ActivityBatch[][] = [];
  let refuse = true;
  const writer = {
    call: async (_name: string, input: { batches: ActivityBatch[] }) => {
      if (refuse) throw new FlagwireError('STORE_BUSY', 'busy');
      sent.push(input.batches);
      return { mailed: 0 };
    },
  };
  const recorder = new ActivityRecorder(writer as never, pino({ level: 'silent' }));
  recorder.used('tok_a', 'GET', '/api/v1/flags', 200, 1);
  recorder.denied('tok_a', 'Token revoked', 'PATCH', '/api/v1/flags/x', 2);
  await recorder.flush();
  t.same(sent, [], 'refused: nothing written');
  recorder.used('tok_a', 'GET', '/api/v1/token', 200, 3);
  recorder.used('tok_b', 'GET', '/api/v1/token', 200, 4);
  refuse = false;
  await recorder.flush();
  t.same(
    sent,
    [
      [
        {
          tokenId: 'tok_a',
          lastUsedAt: 3,
          recent: [
            { at: 1, method: 'GET', path: '/api/v1/flags', status: 200 },
            { at: 3, method: 'GET', path: '/api/v1/token', status: 200 },
          ],
          denials: [{ at: 2, reason: 'Token revoked', method: 'PATCH', path: '/api/v1/flags/x' }],
        },
        { tokenId: 'tok_b', lastUsedAt: 4, recent: [{ at: 4, method: 'GET', path: '/api/v1/token', status: 200 }], denials: [] },
      ],
    ],
    'the refused activity went with the next flush, before what came since',
  );
});

t.test('the interval does not start a flush while one waits for the writer', async (t) => {
  let calls = 0;
  let answer: () => void = () => {};
  const writer = {
    call: () => {
      calls++;
      return new Promise<{ mailed: number }>((resolve) => (answer = () => resolve({ mailed: 0 })));
    },
  };
  const recorder = new ActivityRecorder(writer as never, pino({ level: 'silent' }), 20);
  recorder.start();
  recorder.used('tok_a', 'GET', '/api/v1/token', 200, 1);
  await new Promise((resolve) => setTimeout(resolve, 60));
  recorder.used('tok_a', 'GET', '/api/v1/token', 200, 2);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(calls, 1, 'one flush waits; no other started');
  answer();
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(calls, 2, 'the next interval sends what came meanwhile');
  answer();
  await recorder.stop();
});

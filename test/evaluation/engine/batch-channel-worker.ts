// A worker serving a batch channel for batch-channel.test.ts, with a handler that makes each case
// visible: the answer says what the worker received (kind, count, bytes and their sum), sized as
// asked (one that outgrows the slot in the buffer the eval worker's ResultWriter would grow into); work of
// `dieCount` requests ends the worker the way a native fault would.
// A request: the answer's size (u32), the payload's length (u32), the payload.
import { workerData } from 'node:worker_threads';
import { type ChannelShared, grownAnswerBuffer, serveChannel, SlotKind } from '../../../src/evaluation/engine/batch-channel.js';

const { shared, dieCount } = workerData as { shared: ChannelShared; dieCount: number };
await serveChannel(shared, (kind, requests, count) => {
  if (count === dieCount) process.exit(70);
  const view = new DataView(requests);
  const answerBytes = view.getUint32(0, true);
  const length = view.getUint32(4, true);
  let sum = 0;
  for (let i = 8; i < 8 + length; i++) sum = (sum + view.getUint8(i)) >>> 0;
  const answer = answerBytes <= requests.byteLength ? requests : grownAnswerBuffer(answerBytes);
  const out = new DataView(answer);
  out.setUint32(0, kind === SlotKind.Batch ? 0 : kind, true);
  out.setUint32(4, count, true);
  out.setUint32(8, length, true);
  out.setUint32(12, sum, true);
  // The last byte of the asked size: the main side checks it came back too.
  out.setUint8(answerBytes - 1, 0xab);
  return answer;
});

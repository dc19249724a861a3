// The batch channel between the main thread and one worker (src/evaluation/engine/batch-channel.ts), with a real
// worker thread (batch-channel-worker.ts): work and answers that fit a slot, and ones that travel on the
// port because they do not, in both directions and out of order; a slot grown by a large answer, kept on
// both sides; never an answer from inside post(); a worker that dies holding one slot while another waits;
// stopping.
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { ChannelEnd, kMaxSlotBytes, kSlotBytes, SlotKind, type SlotWork } from '../../../src/evaluation/engine/batch-channel.js';

const kWorker = new URL('./batch-channel-worker.js', import.meta.url);
/** Work of this many requests ends the test worker (process.exit(70)). */
const kDieCount = 13;

function startWorker(channel: ChannelEnd): Worker {
  const shared = channel.forWorker();
  return new Worker(kWorker, { workerData: { shared, dieCount: kDieCount }, transferList: [shared.port] });
}

interface Seen {
  kind: number;
  count: number;
  length: number;
  sum: number;
  lastByte: number;
  answerBytes: number;
  inPlace: boolean;
}

/** Work of `length` payload bytes (value i % 251) asking for an answer of `answerBytes`. */
function work(
  kind: SlotKind,
  count: number,
  length: number,
  answerBytes: number,
): { work: SlotWork; answer: Promise<Seen>; buffer: () => ArrayBufferLike | null } {
  let answeredIn: ArrayBufferLike | null = null;
  const requests = new ArrayBuffer(8 + length + 64);
  const view = new DataView(requests);
  view.setUint32(0, answerBytes, true);
  view.setUint32(4, length, true);
  for (let i = 0; i < length; i++) view.setUint8(8 + i, i % 251);
  let answered!: (seen: Seen) => void;
  let lost!: (err: unknown) => void;
  const answer = new Promise<Seen>((resolve, reject) => {
    answered = resolve;
    lost = reject;
  });
  return {
    answer,
    buffer: () => answeredIn,
    work: {
      kind,
      requests,
      bytes: 8 + length,
      count,
      answered: (buffer) => {
        answeredIn = buffer;
        const out = new DataView(buffer);
        answered({
          kind: out.getUint32(0, true),
          count: out.getUint32(4, true),
          length: out.getUint32(8, true),
          sum: out.getUint32(12, true),
          lastByte: out.getUint8(answerBytes - 1),
          answerBytes: buffer.byteLength,
          inPlace: buffer instanceof SharedArrayBuffer,
        });
      },
      lost,
    },
  };
}

function sumOf(length: number): number {
  let sum = 0;
  for (let i = 0; i < length; i++) sum = (sum + (i % 251)) >>> 0;
  return sum;
}

t.test('work and answers that fit a slot, and ones that do not, both ways', async (t) => {
  let freed = 0;
  const channel = new ChannelEnd(3, () => freed++);
  const worker = startWorker(channel);
  t.teardown(() => worker.terminate());

  const small = work(SlotKind.Batch, 3, 1000, 64);
  channel.post(0, small.work);
  t.same(await small.answer, { kind: 0, count: 3, length: 1000, sum: sumOf(1000), lastByte: 0xab, answerBytes: kSlotBytes, inPlace: true });
  t.equal(freed, 1, 'the slot is announced free after its answer');
  t.ok(channel.isFree(0));

  // Requests larger than a slot, a small answer; a small request, an answer larger than a slot; both large.
  const bigIn = work(SlotKind.Batch, 1, kSlotBytes + 10, 64);
  const bigOut = work(SlotKind.Usage, 2, 100, kSlotBytes * 2);
  const both = work(SlotKind.Probe, 4, kSlotBytes * 3, kSlotBytes * 4);
  // Posted so that the port carries slot 2's requests before slot 0's: the worker takes slot 0 first.
  channel.post(2, both.work);
  channel.post(1, bigOut.work);
  channel.post(0, bigIn.work);
  const [a, b, c] = await Promise.all([bigIn.answer, bigOut.answer, both.answer]);
  // Requests that came on the port, answered in their own buffer: back on the port.
  t.same(a, {
    kind: 0,
    count: 1,
    length: kSlotBytes + 10,
    sum: sumOf(kSlotBytes + 10),
    lastByte: 0xab,
    answerBytes: kSlotBytes + 18,
    inPlace: false,
  });
  // Answers that outgrew their slot: a shared buffer of the next power of two, the slot's from now on.

  t.same(b, { kind: SlotKind.Usage, count: 2, length: 100, sum: sumOf(100), lastByte: 0xab, answerBytes: kSlotBytes * 2, inPlace: true });
  t.same(c, {
    kind: SlotKind.Probe,
    count: 4,
    length: kSlotBytes * 3,
    sum: sumOf(kSlotBytes * 3),
    lastByte: 0xab,
    answerBytes: kSlotBytes * 4,
    inPlace: true,
  });
  t.ok(channel.isFree(0) && channel.isFree(1) && channel.isFree(2));

  // Many round trips on every slot, each answer checked against its own request.
  for (let round = 0; round < 200; round++) {
    const posted = [0, 1, 2].map((slot) => {
      const one = work(SlotKind.Batch, 100 + round * 3 + slot, 10 + ((round * 7 + slot) % 500), 32);
      channel.post(slot, one.work);
      return one.answer.then((seen) => seen.count === 100 + round * 3 + slot && seen.sum === sumOf(10 + ((round * 7 + slot) % 500)));
    });
    const ok = await Promise.all(posted);
    if (!ok.every(Boolean)) t.fail(`round ${round}: an answer that is not its request's`);
  }
});

t.test('a grown slot is kept on both sides: what fits it next is written in place; past kMaxSlotBytes, a buffer of its own', async (t) => {
  const channel = new ChannelEnd(2, () => {});
  const worker = startWorker(channel);
  t.teardown(() => worker.terminate());

  const grows = work(SlotKind.Batch, 1, 100, kSlotBytes * 3);
  channel.post(1, grows.work);
  t.match(await grows.answer, { answerBytes: kSlotBytes * 4, inPlace: true, lastByte: 0xab });
  const grown = grows.buffer();
  // Requests and an answer larger than the first slot size, within the grown one: both in place.
  const fits = work(SlotKind.Batch, 2, kSlotBytes * 2, kSlotBytes * 3 + 5);
  channel.post(1, fits.work);
  t.same(await fits.answer, {
    kind: 0,
    count: 2,
    length: kSlotBytes * 2,
    sum: sumOf(kSlotBytes * 2),
    lastByte: 0xab,
    answerBytes: kSlotBytes * 4,
    inPlace: true,
  });
  t.equal(fits.buffer(), grown, 'the requests went into the grown slot and the answer came back in it: no new buffer');
  const other = work(SlotKind.Batch, 3, 10, 64);
  channel.post(0, other.work);
  t.match(await other.answer, { answerBytes: kSlotBytes, inPlace: true }, 'the other slot keeps its own size');

  const huge = work(SlotKind.Batch, 4, 10, kMaxSlotBytes + 1);
  channel.post(1, huge.work);
  t.match(await huge.answer, { count: 4, answerBytes: kMaxSlotBytes + 1, inPlace: false, lastByte: 0xab }, 'past the limit: transferred');
  const after = work(SlotKind.Batch, 5, kSlotBytes * 2, 64);
  channel.post(1, after.work);
  t.match(await after.answer, { count: 5, sum: sumOf(kSlotBytes * 2) });
  t.equal(after.buffer(), grown, 'and the slot is still the grown one');
});

t.test('an answer is never delivered from inside post()', async (t) => {
  const channel = new ChannelEnd(1, () => {});
  const worker = startWorker(channel);
  t.teardown(() => worker.terminate());
  let early = 0;
  for (let i = 0; i < 200; i++) {
    let posting = true;
    const one = work(SlotKind.Batch, 1, 0, 32);
    const answered = one.work.answered;
    channel.post(0, {
      ...one.work,
      answered: (buffer) => {
        if (posting) early++;
        answered(buffer);
      },
    });
    posting = false;
    await one.answer;
  }
  t.equal(early, 0, 'none of 200 answers came from inside post()');
});

t.test('a worker that dies: the slot it took is lost, the one it never took is returned, to be posted to a new channel', async (t) => {
  let freed = 0;
  const channel = new ChannelEnd(2, () => freed++);
  const first = startWorker(channel);
  const exited = new Promise<number>((resolve) => first.once('exit', resolve));
  const dying = work(SlotKind.Batch, kDieCount, 10, 32);
  const waiting = work(SlotKind.Batch, 5, 10, 32);
  channel.post(0, dying.work);
  channel.post(1, waiting.work);
  t.equal(await exited, 70);
  const untaken = channel.detach(new Error('worker exited with code 70'));
  await t.rejects(dying.answer, /exited with code 70/, 'the taken work is lost, with the error');
  t.equal(untaken.length, 1);
  t.equal(untaken[0], waiting.work, 'the untaken work is returned, not answered');
  t.notOk(channel.isFree(0) || channel.isFree(1), 'a detached channel takes no more work');
  t.equal(freed, 0, 'nor announces free slots');

  const next = new ChannelEnd(2, () => {});
  const second = startWorker(next);
  t.teardown(() => second.terminate());
  next.post(0, untaken[0]!);
  t.match(await waiting.answer, { count: 5, sum: sumOf(10) }, 'posted again, it is answered by the new worker');
  const after = work(SlotKind.Batch, 6, kSlotBytes + 1, kSlotBytes + 100);
  next.post(1, after.work);
  t.match(await after.answer, { count: 6, length: kSlotBytes + 1, lastByte: 0xab }, "through the new channel's port too");
});

t.test('stop: the worker ends its serving once idle', async (t) => {
  const channel = new ChannelEnd(1, () => {});
  const worker = startWorker(channel);
  const one = work(SlotKind.Batch, 1, 10, 32);
  channel.post(0, one.work);
  await one.answer;
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  channel.stop();
  t.equal(await exited, 0, 'the worker returns from serveChannel and exits on its own');
});

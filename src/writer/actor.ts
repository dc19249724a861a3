// The writer actor: one worker thread that applies every change of a running server, strictly one
// transaction at a time. Commands that arrive while a transaction runs are applied together in the
// next one (group commit: each in its own child transaction, one flush to disk for all), and each
// caller is answered only after that commit is on disk.
import { parentPort, workerData } from 'node:worker_threads';
import { Clock } from '../clock.js';
import { Store } from '../store/store.js';
import { isCommandName, runCommand, type CommandName } from './commands.js';
import { settleError, type WriterReply, type WriterRequest, type WriterStart } from './protocol.js';

const kMaxBatch = 512;
const start = workerData as WriterStart;
const port = parentPort!;
const store = Store.open(start.dataDir);
const clock = new Clock(start.clock);
let queue: WriterRequest[] = [];
let scheduled = false;
/** Barriers (`idle` requests) that came while commands were queued: answered after those commit. */
let barriers: number[] = [];

port.on('message', (msg: WriterRequest | 'close') => {
  if (msg === 'close') {
    drain();
    void store.close().then(() => process.exit(0));
    return;
  }
  if (msg.ping === true) {
    port.postMessage([{ id: msg.id, ok: true, value: true } satisfies WriterReply]);
    return;
  }
  if (msg.idle === true) {
    // drain() runs whole in one turn, so no transaction is open while a message is handled: with
    // nothing queued, every earlier command is committed already.
    if (queue.length === 0) port.postMessage([{ id: msg.id, ok: true, value: true } satisfies WriterReply]);
    else barriers.push(msg.id);
    return;
  }
  queue.push(msg);
  if (!scheduled) {
    scheduled = true;
    setImmediate(drain);
  }
});

function drain(): void {
  scheduled = false;
  while (queue.length > 0) {
    const batch = queue.length > kMaxBatch ? queue.splice(0, kMaxBatch) : queue.splice(0);
    const at = clock.now();
    let replies: WriterReply[];
    try {
      const results = store.transactEach(batch.map((req) => (w) => {
        if (!isCommandName(req.name)) throw new Error(`unknown writer command ${String(req.name)}`);
        return runCommand(w, req.name as CommandName, req.input as never, at);
      }));
      replies = results.map((r, i) => (r.ok ? { id: batch[i]!.id, ok: true, value: r.value } : { id: batch[i]!.id, ok: false, ...settleError(r.error) }));
    } catch (err) {
      // The commit itself failed (disk full, read-only filesystem): nothing of the batch was written.
      replies = batch.map((req) => ({ id: req.id, ok: false, ...settleError(err, true) }));
    }
    port.postMessage(replies);
  }
  if (barriers.length > 0) {
    port.postMessage(barriers.map((id): WriterReply => ({ id, ok: true, value: true })));
    barriers = [];
  }
}

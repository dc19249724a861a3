// The hop of a batch between the main thread and one eval worker: shared memory and a futex, not a
// message per batch. Piscina's task path (a MessagePort message, a structured clone, the wake-up and a
// promise on each side) cost several times what this channel costs per round trip (bench/RESULTS.md,
// eval.bench and handoff.bench). Piscina still starts every worker and replaces one that
// dies or is stopped (pool.ts): each worker's one Piscina task is serveChannel(), which runs for the
// worker's life.
//
//   main thread (ChannelEnd)                         worker (serveChannel)
//   requests → slot's SharedArrayBuffer
//   state := Posted, doorbell++, notify  ──────────▶ Atomics.wait on the doorbell wakes
//                                                    state := Taken, evaluates, answers → same buffer
//   Atomics.waitAsync on the state wakes ◀────────── state := Answered, notify
//   reads the answers in place; state := Free
//
// A channel has a few slots, each a SharedArrayBuffer of kSlotBytes and three words of the control
// array (state, kind, count); the worker takes posted slots in slot order, one at a time. What
// does not fit a slot (a batch of large OFREP bodies, a project's bulk answer) travels as a message on the
// channel's MessagePort instead, its state saying so (PostedOnPort, AnsweredOnPort): both sides read those
// messages synchronously (receiveMessageOnPort), so no order of events matters.
//
// A slot grows: answers that outgrow it are written into a larger SharedArrayBuffer (grownAnswerBuffer,
// up to kMaxSlotBytes), which crosses on the port once and is the slot's buffer on both sides from then on.
// A batch of OFREP bulk answers for a large project (88 KB each for 350 flags, a few dozen per batch) is
// then written in place: a fresh buffer per batch cost its copy and, in the kernel, a page fault per 4 KiB
// touched, a large share of a bulk answer's CPU.
//
// The worker waits with the blocking Atomics.wait (as Piscina's 'sync' atomics did): a worker that is
// woken by a futex costs less than one whose event loop is woken. It still lets its event loop turn
// now and then (kTurnEveryMs), because Node and V8 post work to it (finalizers, GC follow-ups) that
// would otherwise pile up: without the turns native memory grew with every request served.
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/** What a slot carries: a batch of requests (protocol.ts), a readiness probe, or a usage collection. */
export enum SlotKind {
  Batch = 0,
  Probe = 1,
  Usage = 2,
}

enum State {
  Free = 0,
  /** Requests in the slot's buffer. */
  Posted = 1,
  /** Requests in a message on the port (they did not fit the slot). */
  PostedOnPort = 2,
  /** The worker is evaluating them. */
  Taken = 3,
  /** Answers in the slot's buffer. */
  Answered = 4,
  /** Answers in a message on the port. */
  AnsweredOnPort = 5,
}

/** Bytes per slot at first: a batch of evaluation requests and their answers take a few KiB. */
export const kSlotBytes = 256 * 1024;
/**
 * The most a slot grows to. Larger answers travel in a transferred ArrayBuffer of their own, each time:
 * the memory a channel keeps is at most this per slot (two batch slots and one for probes per worker).
 */
export const kMaxSlotBytes = 4 * 1024 * 1024;

/**
 * A buffer for answers of `bytes` that outgrew their slot: up to kMaxSlotBytes a SharedArrayBuffer (a
 * power of two, so a slot grows a few times at most), which the channel keeps as the slot's; beyond, an
 * ArrayBuffer of its own (not zero-filled), transferred and dropped.
 */
export function grownAnswerBuffer(bytes: number): ArrayBufferLike {
  if (bytes > kMaxSlotBytes) return Buffer.allocUnsafeSlow(bytes).buffer;
  return new SharedArrayBuffer(Math.min(kMaxSlotBytes, 2 ** Math.ceil(Math.log2(bytes))));
}
const kDoorbell = 0;
const kStop = 1;
const kHeaderWords = 2;
const kSlotWords = 3;
const kState = 0;
const kKind = 1;
const kCount = 2;
/** How often a busy worker lets its event loop turn, and how long an idle one waits before it does. */
const kTurnEveryMs = 50;
const kIdleWaitMs = 1000;

/**
 * A pending Atomics.waitAsync does not keep Node's event loop alive: with nothing else to wait for (a
 * test, a server whose last connection is closing) the thread would end before the answer came. One
 * timer, ref'd while any slot of any channel holds work, keeps it alive; toggling costs no allocation.
 */
let holding = 0;
let keepAlive: NodeJS.Timeout | null = null;

function hold(): void {
  if (holding++ > 0) return;
  keepAlive ??= setInterval(() => {}, 2 ** 30);
  keepAlive.ref();
}

function unhold(): void {
  if (--holding === 0) keepAlive!.unref();
}

/** The shared part of a channel: crosses to the worker in its serveChannel task (the port transferred). */
export interface ChannelShared {
  control: SharedArrayBuffer;
  slots: SharedArrayBuffer[];
  port: MessagePort;
}

interface PortMessage {
  slot: number;
  /** A SharedArrayBuffer: answers in a grown slot, the slot's buffer from now on (grownAnswerBuffer). */
  buffer: ArrayBufferLike;
}

/** Port messages read ahead of their slot's turn (both sides): by slot. */
class PortInbox {
  private readonly held = new Map<number, ArrayBufferLike>();

  constructor(private readonly port: MessagePort) {}

  take(slot: number): ArrayBufferLike {
    for (;;) {
      const held = this.held.get(slot);
      if (held !== undefined) {
        this.held.delete(slot);
        return held;
      }
      const received = receiveMessageOnPort(this.port);
      // The sender posts before it sets the state that sent us here, so the message is there.
      if (received === undefined) throw new Error(`batch channel: no message for slot ${slot}`);
      const message = received.message as PortMessage;
      this.held.set(message.slot, message.buffer);
    }
  }
}

/**
 * Worker side: evaluates what a slot carries and returns the buffer holding the answer: the slot's
 * own (written in place) or another one, when the answer outgrew it.
 */
export type SlotHandler = (kind: SlotKind, requests: ArrayBufferLike, count: number) => ArrayBufferLike;

/** Worker side: serves the channel until the main thread stops it. */
export async function serveChannel(shared: ChannelShared, handle: SlotHandler): Promise<void> {
  const control = new Int32Array(shared.control);
  const inbox = new PortInbox(shared.port);
  const slots = shared.slots.map((buffer) => new Uint8Array(buffer));
  let turnedAt = performance.now();
  for (;;) {
    const bell = Atomics.load(control, kDoorbell);
    if (Atomics.load(control, kStop) !== 0) break;
    let served = false;
    for (let slot = 0; slot < slots.length; slot++) {
      const at = kHeaderWords + slot * kSlotWords;
      const state = Atomics.load(control, at + kState);
      if (state !== State.Posted && state !== State.PostedOnPort) continue;
      served = true;
      Atomics.store(control, at + kState, State.Taken);
      const count = control[at + kCount]!;
      const requests = state === State.Posted ? shared.slots[slot]! : inbox.take(slot);
      const answer = handle(control[at + kKind] as SlotKind, requests, count);
      if (answer === shared.slots[slot]) {
        Atomics.store(control, at + kState, State.Answered);
      } else if (answer.byteLength <= slots[slot]!.length) {
        slots[slot]!.set(new Uint8Array(answer));
        Atomics.store(control, at + kState, State.Answered);
      } else if (answer instanceof SharedArrayBuffer) {
        // A grown slot (grownAnswerBuffer): shared, not transferred; the main side adopts it as this one does.
        shared.slots[slot] = answer;
        slots[slot] = new Uint8Array(answer);
        shared.port.postMessage({ slot, buffer: answer } satisfies PortMessage);
        Atomics.store(control, at + kState, State.AnsweredOnPort);
      } else {
        // Not the slot's buffer: one the handler made when the answer outgrew the slot.
        const grown = answer as ArrayBuffer;
        shared.port.postMessage({ slot, buffer: grown } satisfies PortMessage, [grown]);
        Atomics.store(control, at + kState, State.AnsweredOnPort);
      }
      Atomics.notify(control, at + kState);
    }
    // Woken with work: serve it at once. Busy for kTurnEveryMs, or idle for kIdleWaitMs: one turn.
    if (served ? performance.now() - turnedAt < kTurnEveryMs : Atomics.wait(control, kDoorbell, bell, kIdleWaitMs) !== 'timed-out')
      continue;
    await new Promise((resolve) => setImmediate(resolve));
    turnedAt = performance.now();
  }
  shared.port.close();
}

/** Main side: work for one slot, and where its answer goes. */
export interface SlotWork {
  readonly kind: SlotKind;
  /** The requests: the first `bytes` bytes (protocol.ts); copied by post(), the buffer stays the caller's. */
  readonly requests: ArrayBuffer;
  readonly bytes: number;
  readonly count: number;
  /** Called from a later task with the answer, readable during the call only. */
  answered(answer: ArrayBufferLike): void;
  /** Called instead when the worker died or was stopped holding it. */
  lost(err: unknown): void;
}

/**
 * Main side of one channel. post() puts work into a free slot. The owner (pool.ts) says when the worker
 * died or was stopped: detach() settles what the worker answered or took and returns what it never
 * took, to be posted again elsewhere.
 */
export class ChannelEnd {
  private readonly shared: { control: SharedArrayBuffer; slots: SharedArrayBuffer[] };
  private readonly control: Int32Array;
  private readonly slotBytes: Uint8Array[];
  private readonly work: (SlotWork | null)[];
  /** Per slot: bumped whenever the slot is settled, so a wait that wakes late for an old post is ignored. */
  private readonly tickets: number[];
  private readonly port: MessagePort;
  private readonly workerPort: MessagePort;
  private readonly inbox: PortInbox;
  /** The worker is gone (detach): nothing more is posted here. */
  private detached = false;

  /** `onFree`: called after a slot is free again (to post work that waits for one). */
  constructor(
    slots: number,
    private readonly onFree: () => void,
  ) {
    const control = new SharedArrayBuffer((kHeaderWords + slots * kSlotWords) * 4);
    this.shared = { control, slots: Array.from({ length: slots }, () => new SharedArrayBuffer(kSlotBytes)) };
    this.control = new Int32Array(control);
    this.slotBytes = this.shared.slots.map((buffer) => new Uint8Array(buffer));
    this.work = new Array(slots).fill(null);
    this.tickets = new Array(slots).fill(0);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.workerPort = port2;
    this.inbox = new PortInbox(port1);
  }

  /** What the channel's worker serves (its port goes in the task's transfer list). */
  forWorker(): ChannelShared {
    return { control: this.shared.control, slots: this.shared.slots, port: this.workerPort };
  }

  /** A slot post() may use: free, on a channel whose worker is not known to be gone. */
  isFree(slot: number): boolean {
    return this.work[slot] === null && !this.detached;
  }

  /** Whether `work` is in one of this channel's slots, not yet settled. */
  holds(work: SlotWork): boolean {
    return this.work.includes(work);
  }

  /** Posts `work` into free `slot`; its `answered` is called from a later task. */
  post(slot: number, work: SlotWork): void {
    const at = kHeaderWords + slot * kSlotWords;
    const control = this.control;
    this.work[slot] = work;
    hold();
    control[at + kKind] = work.kind;
    control[at + kCount] = work.count;
    let state: State;
    if (work.bytes <= this.slotBytes[slot]!.length) {
      this.slotBytes[slot]!.set(new Uint8Array(work.requests, 0, work.bytes));
      state = State.Posted;
    } else {
      const copy = work.requests.slice(0, work.bytes);
      this.port.postMessage({ slot, buffer: copy } satisfies PortMessage, [copy]);
      state = State.PostedOnPort;
    }
    Atomics.store(control, at + kState, state);
    Atomics.add(control, kDoorbell, 1);
    Atomics.notify(control, kDoorbell);
    // Never answered from inside post() (a worker on another core can be that quick): the caller's
    // state is not settled yet.
    const ticket = this.tickets[slot]!;
    // On one core the worker takes the core at notify and has often answered by now: then the state
    // says so, and waitAsync's result object is not made (a few µs a batch, issue 57's profile).
    if (Atomics.load(control, at + kState) !== state) {
      queueMicrotask(() => this.watch(slot, ticket, state));
      return;
    }
    const wait = Atomics.waitAsync(control, at + kState, state);
    if (wait.async) wait.value.then(() => this.watch(slot, ticket, state));
    else queueMicrotask(() => this.watch(slot, ticket, state));
  }

  /** Waits, without blocking, for the slot's state to move on from `seen`, until it is answered. */
  private watch(slot: number, ticket: number, seen: number): void {
    const index = kHeaderWords + slot * kSlotWords + kState;
    for (;;) {
      if (this.tickets[slot] !== ticket) return;
      const state = Atomics.load(this.control, index);
      if (state === State.Answered || state === State.AnsweredOnPort) return this.settle(slot, state);
      seen = state;
      const wait = Atomics.waitAsync(this.control, index, seen);
      if (wait.async) {
        wait.value.then(() => this.watch(slot, ticket, seen));
        return;
      }
    }
  }

  /** Delivers the slot's answer and frees it; `announce`: call onFree (not from detach: the channel is done). */
  private settle(slot: number, state: State, announce = true): void {
    const work = this.work[slot]!;
    const answer = state === State.Answered ? this.shared.slots[slot]! : this.inbox.take(slot);
    if (answer instanceof SharedArrayBuffer && answer !== this.shared.slots[slot]) {
      // The worker grew the slot (grownAnswerBuffer) and keeps the larger buffer: so does this side.
      this.shared.slots[slot] = answer;
      this.slotBytes[slot] = new Uint8Array(answer);
    }
    try {
      work.answered(answer);
    } finally {
      this.release(slot);
      if (announce) this.onFree();
    }
  }

  private release(slot: number): void {
    this.work[slot] = null;
    unhold();
    this.tickets[slot]!++;
    Atomics.store(this.control, kHeaderWords + slot * kSlotWords + kState, State.Free);
  }

  /**
   * The worker serving this channel is gone (it died, or was stopped: `err`), and the channel with it:
   * what the worker answered is delivered, what it had taken is lost, and what it never took is
   * returned, to be posted elsewhere. A new worker gets a new channel, never this one: a worker that
   * was terminated may still run a few instructions, and must find no one else's work in these slots.
   */
  detach(err: unknown): SlotWork[] {
    this.detached = true;
    const lost: SlotWork[] = [];
    const untaken: SlotWork[] = [];
    for (let slot = 0; slot < this.work.length; slot++) {
      const work = this.work[slot];
      if (work === null) continue;
      const state = Atomics.load(this.control, kHeaderWords + slot * kSlotWords + kState);
      if (state === State.Answered || state === State.AnsweredOnPort) {
        this.settle(slot, state, false);
        continue;
      }
      (state === State.Taken ? lost : untaken).push(work);
      this.release(slot);
      // Wakes the slot's wait, still pending (the worker never answered): it sees the new ticket and ends.
      Atomics.notify(this.control, kHeaderWords + slot * kSlotWords + kState);
    }
    this.port.close();
    for (const work of lost) work.lost(err);
    return untaken;
  }

  /** Asks the worker to end its serveChannel task once it has answered what it took. */
  stop(): void {
    Atomics.store(this.control, kStop, 1);
    Atomics.add(this.control, kDoorbell, 1);
    Atomics.notify(this.control, kDoorbell);
  }
}

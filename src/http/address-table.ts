// A bounded table of client addresses for the per-IP limits, in shared memory so that every front-end
// thread of the process counts into the same table (the spec counts the limits per server instance,
// and one process is one instance). Each address gets a slot number that indexes the owner's own
// arrays (its counters, also in shared memory), and the slots form a doubly-linked list in order of
// use, so the least recently used address is always at the front:
//
//   head ─▶ [slot 4] ⇄ [slot 0] ⇄ [slot 7] ⇄ … ⇄ [slot 2] ◀─ tail
//           least recently used                  most recently used
//
// Addresses are found through an open-addressing hash index (linear probing, deletion by backward
// shift, so no tombstones ever slow a lookup down) over keys kept as bytes in the slots. Lookup,
// insert, move to the back and removal at the front are O(1). Every array is allocated for
// `maxEntries` up front (shared memory cannot grow in place); the system commits the pages only as
// slots are used.
//
// One lock guards the table and the owner's counters: the owner holds it for the whole of one
// operation (withLock). It is a futex-style mutex (Atomics.wait when contended); an uncontended
// acquire and release are two atomic operations.
//
// A JS Map alone cannot be shared; it also kept insertion order only, and V8 leaves a hole per deleted
// entry, so taking entries off the front of a Map that keeps receiving new ones cost O(n) each
// (bench/RESULTS.md, Costs behind the code's choices).
const kNone = -1;
/** Bytes of a key kept per slot. An address as text is at most 45 characters (IPv6 with an IPv4 tail). */
const kKeyBytes = 48;
// meta: the lock, the number of addresses, the list's ends, the free list's head, the high-water slot.
const kLock = 0;
const kSize = 1;
const kHead = 2;
const kTail = 3;
const kFree = 4;
const kUsed = 5;
const kMetaInts = 6;

/** The table's shared memory: cloned to every front-end thread (structured clone keeps it shared). */
export interface AddressTableState {
  readonly maxEntries: number;
  readonly meta: SharedArrayBuffer;
  readonly index: SharedArrayBuffer;
  readonly hashes: SharedArrayBuffer;
  readonly keys: SharedArrayBuffer;
  readonly links: SharedArrayBuffer;
}

export class AddressTable {
  readonly maxEntries: number;
  private readonly meta: Int32Array;
  /** Hash index: slot + 1, or 0 for an empty position. */
  private readonly index: Int32Array;
  private readonly mask: number;
  private readonly hashes: Int32Array;
  /** Per slot: its key's length, then up to kKeyBytes - 1 bytes. */
  private readonly keys: Uint8Array;
  /** prev of slot s at 2s, next at 2s + 1 (the free list reuses next). */
  private readonly links: Int32Array;

  constructor(readonly state: AddressTableState) {
    this.maxEntries = state.maxEntries;
    this.meta = new Int32Array(state.meta);
    this.index = new Int32Array(state.index);
    this.mask = this.index.length - 1;
    this.hashes = new Int32Array(state.hashes);
    this.keys = new Uint8Array(state.keys);
    this.links = new Int32Array(state.links);
  }

  /** New, empty shared memory for at most `maxEntries` addresses. */
  static create(maxEntries: number): AddressTable {
    // At most half full: probe sequences stay short.
    let positions = 2;
    while (positions < maxEntries * 2) positions *= 2;
    const meta = new SharedArrayBuffer(kMetaInts * 4);
    const ints = new Int32Array(meta);
    ints[kHead] = kNone;
    ints[kTail] = kNone;
    ints[kFree] = kNone;
    return new AddressTable({
      maxEntries,
      meta,
      index: new SharedArrayBuffer(positions * 4),
      hashes: new SharedArrayBuffer(maxEntries * 4),
      keys: new SharedArrayBuffer(maxEntries * kKeyBytes),
      links: new SharedArrayBuffer(maxEntries * 8),
    });
  }

  get size(): number {
    return Atomics.load(this.meta, kSize);
  }

  /** Runs `fn` holding the table's lock: every other method is called only inside it. */
  withLock<T>(fn: () => T): T {
    const meta = this.meta;
    // Drepper's mutex ("Futexes are tricky", 2011): 0 free, 1 held, 2 held with waiters.
    let c = Atomics.compareExchange(meta, kLock, 0, 1);
    if (c !== 0) {
      if (c !== 2) c = Atomics.exchange(meta, kLock, 2);
      while (c !== 0) {
        Atomics.wait(meta, kLock, 2);
        c = Atomics.exchange(meta, kLock, 2);
      }
    }
    try {
      return fn();
    } finally {
      if (Atomics.sub(meta, kLock, 1) !== 1) {
        Atomics.store(meta, kLock, 0);
        Atomics.notify(meta, kLock, 1);
      }
    }
  }

  /** The slot of `key`, or undefined when it is not tracked. */
  slot(key: string): number | undefined {
    const hash = hashOf(key);
    for (let i = hash & this.mask; ; i = (i + 1) & this.mask) {
      const entry = this.index[i]!;
      if (entry === 0) return undefined;
      const slot = entry - 1;
      if (this.hashes[slot] === hash && this.keyIs(slot, key)) return slot;
    }
  }

  /** Tracks `key` (not tracked yet) at the back, evicting the least recently used address when full; returns its slot. */
  add(key: string): number {
    const meta = this.meta;
    if (meta[kSize]! >= this.maxEntries) this.remove(meta[kHead]!);
    let slot = meta[kFree]!;
    if (slot !== kNone) meta[kFree] = this.links[2 * slot + 1]!;
    else slot = meta[kUsed]!++;
    const hash = hashOf(key);
    this.hashes[slot] = hash;
    this.writeKey(slot, key);
    let i = hash & this.mask;
    while (this.index[i] !== 0) i = (i + 1) & this.mask;
    this.index[i] = slot + 1;
    this.link(slot);
    meta[kSize]!++;
    return slot;
  }

  /** Marks `slot` as used just now: it moves to the back. */
  touch(slot: number): void {
    if (slot === this.meta[kTail]) return;
    this.unlink(slot);
    this.link(slot);
  }

  /** The least recently used slot, or -1 when the table is empty. */
  first(): number {
    return this.meta[kHead]!;
  }

  remove(slot: number): void {
    const mask = this.mask;
    const index = this.index;
    let i = this.hashes[slot]! & mask;
    while (index[i] !== slot + 1) i = (i + 1) & mask;
    // Backward-shift deletion: move later entries of the probe run into the hole when their home
    // position does not lie cyclically in (hole, j]; the run then stays unbroken.
    for (let j = i; ; ) {
      j = (j + 1) & mask;
      const entry = index[j]!;
      if (entry === 0) break;
      const home = this.hashes[entry - 1]! & mask;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (stays) continue;
      index[i] = entry;
      i = j;
    }
    index[i] = 0;
    this.unlink(slot);
    this.links[2 * slot + 1] = this.meta[kFree]!;
    this.meta[kFree] = slot;
    this.meta[kSize]!--;
  }

  private keyIs(slot: number, key: string): boolean {
    const keys = this.keys;
    const base = slot * kKeyBytes;
    const length = Math.min(key.length, kKeyBytes - 1);
    if (keys[base] !== length) return false;
    for (let k = 0; k < length; k++) if (keys[base + 1 + k] !== (key.charCodeAt(k) & 0xff)) return false;
    return true;
  }

  // A key longer than kKeyBytes - 1 is kept cut short: no address is that long, and its full text
  // still went into the hash, so two such keys share a slot only if their hashes also agree.
  private writeKey(slot: number, key: string): void {
    const base = slot * kKeyBytes;
    const length = Math.min(key.length, kKeyBytes - 1);
    this.keys[base] = length;
    for (let k = 0; k < length; k++) this.keys[base + 1 + k] = key.charCodeAt(k) & 0xff;
  }

  private link(slot: number): void {
    const meta = this.meta;
    const tail = meta[kTail]!;
    this.links[2 * slot] = tail;
    this.links[2 * slot + 1] = kNone;
    if (tail === kNone) meta[kHead] = slot;
    else this.links[2 * tail + 1] = slot;
    meta[kTail] = slot;
  }

  private unlink(slot: number): void {
    const before = this.links[2 * slot]!;
    const after = this.links[2 * slot + 1]!;
    if (before === kNone) this.meta[kHead] = after;
    else this.links[2 * before + 1] = after;
    if (after === kNone) this.meta[kTail] = before;
    else this.links[2 * after] = before;
  }
}

/** FNV-1a over the key's UTF-16 code units. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < key.length; k++) {
    h ^= key.charCodeAt(k);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

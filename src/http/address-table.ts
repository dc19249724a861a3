// A bounded table of client addresses for the per-IP limits: each address gets a slot number that
// indexes the owner's own typed arrays (its counters), and the slots form a doubly-linked list in
// order of use, so the least recently used address is always at the front:
//
//   head ─▶ [slot 4] ⇄ [slot 0] ⇄ [slot 7] ⇄ … ⇄ [slot 2] ◀─ tail
//           least recently used                  most recently used
//
// Lookup, insert, move to the back and removal at the front are O(1). A Map alone keeps insertion
// order, but not this: V8 leaves a hole for each deleted entry until the table is rebuilt, and the
// first entry is found by walking past every hole, so taking entries off the front of a Map that
// keeps receiving new ones costs O(n) each (measured: 200,000 inserts into a 100,000-entry Map, each
// with a deletion at the front, took 47 s).
const kNone = -1;
const kInitialSlots = 256;

type Grown = Float64Array | Uint32Array | Int32Array;

/** A larger array of the same kind holding `array`'s values at the front: the owners' counters grow with the table. */
export function grownCopy<T extends Grown>(array: T, length: number): T {
  const bigger = new (array.constructor as new (n: number) => T)(length);
  bigger.set(array);
  return bigger;
}

export class AddressTable {
  private readonly slotOf = new Map<string, number>();
  private keys: string[] = [];
  private prev: Int32Array;
  private next: Int32Array;
  private head = kNone;
  private tail = kNone;
  private readonly freeSlots: number[] = [];
  private usedSlots = 0;

  /** `grow(slots)` is called before a slot number at or past the last capacity is handed out. */
  constructor(readonly maxEntries: number, private readonly grow: (slots: number) => void) {
    const slots = Math.min(kInitialSlots, maxEntries);
    this.prev = new Int32Array(slots);
    this.next = new Int32Array(slots);
    grow(slots);
  }

  get size(): number {
    return this.slotOf.size;
  }

  /** The slot of `key`, or undefined when it is not tracked. */
  slot(key: string): number | undefined {
    return this.slotOf.get(key);
  }

  /** Tracks `key` at the back, evicting the least recently used address when full; returns its slot. */
  add(key: string): number {
    if (this.slotOf.size >= this.maxEntries) this.remove(this.head);
    const slot = this.freeSlots.pop() ?? this.newSlot();
    this.slotOf.set(key, slot);
    this.keys[slot] = key;
    this.link(slot);
    return slot;
  }

  /** Marks `slot` as used just now: it moves to the back. */
  touch(slot: number): void {
    if (slot === this.tail) return;
    this.unlink(slot);
    this.link(slot);
  }

  /** The least recently used slot, or -1 when the table is empty. */
  first(): number {
    return this.head;
  }

  remove(slot: number): void {
    this.slotOf.delete(this.keys[slot]!);
    this.unlink(slot);
    this.freeSlots.push(slot);
  }

  private newSlot(): number {
    if (this.usedSlots === this.prev.length) {
      const slots = Math.min(this.prev.length * 2, this.maxEntries);
      this.prev = grownCopy(this.prev, slots);
      this.next = grownCopy(this.next, slots);
      this.grow(slots);
    }
    return this.usedSlots++;
  }

  private link(slot: number): void {
    this.prev[slot] = this.tail;
    this.next[slot] = kNone;
    if (this.tail === kNone) this.head = slot;
    else this.next[this.tail] = slot;
    this.tail = slot;
  }

  private unlink(slot: number): void {
    const before = this.prev[slot]!;
    const after = this.next[slot]!;
    if (before === kNone) this.head = after;
    else this.next[before] = after;
    if (after === kNone) this.tail = before;
    else this.prev[after] = before;
  }
}

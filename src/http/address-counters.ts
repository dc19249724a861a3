// Per-address state in shared memory, created once by the main thread and attached to by every
// front-end thread (the state is structured-cloned; SharedArrayBuffers are shared, not copied): the
// address table (address-table.ts) and, for each of its entries, one time (a Float64) and `stride`
// counters (Uint32). The rate limiter (a window start bucket and its ring of counts) and the
// authentication lockout (a window start and one count) are both this.
//
// Every shared-memory type of the server (this, AddressTable, RateLimiter, AuthFailures, SignInLimits,
// BodyBudget(s), Clock) is made and attached the same way: `X.create(settings)` allocates new memory
// (the main thread, or a test), `new X(x.state)` is one more handle on it (a front-end or worker
// thread, given the state in its start message).
import { AddressTable, type AddressTableState } from './address-table.js';

/** The shared memory: cloned to every front-end thread. */
export interface AddressCountersState {
  readonly table: AddressTableState;
  /** One Float64 per entry. */
  readonly times: SharedArrayBuffer;
  /** `stride` Uint32 per entry. */
  readonly counts: SharedArrayBuffer;
  readonly stride: number;
}

export class AddressCounters {
  readonly table: AddressTable;
  readonly times: Float64Array;
  readonly counts: Uint32Array;

  /** New shared memory for `maxEntries` addresses of `stride` counters each. */
  static create(maxEntries: number, stride: number): AddressCounters {
    return new AddressCounters({
      table: AddressTable.create(maxEntries).state,
      times: new SharedArrayBuffer(8 * maxEntries),
      counts: new SharedArrayBuffer(4 * maxEntries * stride),
      stride,
    });
  }

  /** One more handle on `state`'s memory. */
  constructor(readonly state: AddressCountersState) {
    this.table = new AddressTable(state.table);
    this.times = new Float64Array(state.times);
    this.counts = new Uint32Array(state.counts);
  }
}

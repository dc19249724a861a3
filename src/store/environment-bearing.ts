// How a kind of record bears on what evaluation reads in a project's environments: declared by the
// capability that owns the kind (`environmentState` in src/capability/capability.ts), carried in the
// store's layout beside what each change kind does (store-layout.ts), and read by the approvals gate
// (src/approvals/gate.ts), which compares a record's view before and after a change in each guarded
// environment. A kind no capability declares so never needs an approval.
import type { StoreReader } from './interfaces.js';

export interface EnvironmentBearing<V = never> {
  /**
   * The kind (record-kinds.ts: its write's change kind and, where it has one, its deletion's, and a
   * record's key), as this module names it: the web console's browser code reads these types, and
   * record-kinds.ts imports lmdb.
   */
  readonly kind: { readonly name: string; key(value: V): string; readonly removal?: { readonly name: string } };
  /** The project a record belongs to. */
  projectOf(value: V): string;
  /** The record stored now under the key of `value` (undefined: none). */
  stored(r: StoreReader, value: V): V | undefined;
  /**
   * What evaluation in `env` (null: a single-environment project's one environment) reads of `value`
   * (undefined: the record is absent), compared as JSON; null when it bears on that environment not at all.
   */
  view(r: StoreReader, value: V | undefined, env: string | null): unknown;
  /**
   * A release plan (a scheduled change, a rollout): approved when it is made, so what it changes as it
   * runs needs no further approval; ending it (its view left null: cancelled, run, completed) needs none.
   */
  readonly isPlan?: boolean;
  /**
   * The record as an approved request writes it, `delayMs` after the request was made: its own
   * times moved on (a flag's updatedAt, a rollout's step times), so it reads as made when applied.
   */
  onApply?(value: V, now: number, delayMs: number): V;
}

/** A change kind's bearing: its kind's, and whether the change deletes the record. */
export interface ChangeBearing {
  // biome-ignore lint/suspicious/noExplicitAny: a change of any bearing kind; the gate hands each its own values.
  readonly bearing: EnvironmentBearing<any>;
  readonly removal: boolean;
}

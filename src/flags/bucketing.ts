// A flag's bucketing (issue 44; design §2), as every surface names it: "modulo" (design §2's public bucket
// function, the default) or "fractional" (flagd's fractional point over the same hash). The record keeps
// "modulo" as the field's absence (records.ts), so every flag made before the choice existed is a modulo
// flag byte for byte. Chosen when the flag is made, never changed: another bucket function would move
// users in and out of the flag at the same percentage. docs/decisions.md (A flag's bucketing).
import type { Bucketing } from '../model/schemas.js';
import type { Flag } from '../model/flags.js';

/** The flag's bucketing by name. */
export function bucketingOf(flag: Pick<Flag, 'bucketing'>): Bucketing {
  return flag.bucketing ?? 'modulo';
}

/** The record's field for `bucketing` (undefined or "modulo": none), to spread into a flag record or a model. */
export function bucketingField(bucketing: Bucketing | undefined): { bucketing?: 'fractional' } {
  return bucketing === 'fractional' ? { bucketing: 'fractional' } : {};
}

/**
 * Why `wanted` cannot be applied to a flag whose bucketing is `current`; null when they are the same (a
 * write may repeat the flag's own bucketing). The caller puts the field's path before it.
 */
export function bucketingChangeProblem(current: Bucketing, wanted: Bucketing): string | null {
  if (current === wanted) return null;
  return `the flag's bucketing is "${current}" and cannot become "${wanted}": a flag's bucketing is fixed when the flag is made, since changing it would move users between buckets; make a new flag with "bucketing": "${wanted}" instead`;
}

/** The flag key of a flagd file that names a flag's bucketing (flagd ignores it). */
export const kBucketingKey = 'x-flagwire-bucketing';

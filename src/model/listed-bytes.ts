// Not in schedules.ts nor rollouts.ts: it sizes scheduled changes and rollouts alike, for the store's
// lists and for the release plans' pages.

/**
 * A release plan's size as its answers carry it (JSON bytes): what bounds a project's pending changes
 * and a page of a list (src/release-plans/list-pages.ts), and what the store's lists record per entry.
 */
export function listedBytes(record: object): number {
  return Buffer.byteLength(JSON.stringify(record));
}

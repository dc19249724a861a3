// The lists of scheduled changes and rollouts, a page at a time (issue 42, item 5): a project's history
// of either grows without end and a change may carry a large patch, so an answer is at most kMaxPage
// entries and, past its first, kMaxPageBytes of them; `next` says where the following page starts.
// One home for the page's words, read the same way by the Management API, the CLI and the console.
import { FlagwireError } from '../errors.js';

/** Where a page of a list by time starts: after the entry at this time with this id. */
export interface PagePosition {
  time: number;
  id: string;
}

/**
 * A page of a list read in time order: at most `limit` entries and, past the first, no more than
 * `maxBytes` of them (as JSON); `after`: where the previous page ended; `newestFirst`: the reverse order.
 */
export interface PageRequest {
  limit: number;
  maxBytes: number;
  after: PagePosition | null;
  newestFirst?: boolean;
}

/** A page and where the next one starts (null: this was the last). */
export interface Page<T> {
  items: T[];
  next: PagePosition | null;
}

export const kDefaultPage = 100;
export const kMaxPage = 500;
/** An answer's entries past the first stop here; one entry alone may be larger (a patch of up to 1 MiB). */
export const kMaxPageBytes = 4 * 1024 * 1024;

/** `<time>.<id>`: where a page ended, as `next` gives it and `after` takes it. */
const kCursor = /^(\d{1,16})\.([A-Za-z0-9_-]{1,64})$/;

export function cursorText(position: PagePosition | null): string | null {
  return position === null ? null : `${position.time}.${position.id}`;
}

/** The page a request asks for: `limit` (1 to 500, default 100) and `after` (a `next` given before). */
export function pageRequest(limitText: string | null | undefined, afterText: string | null | undefined): PageRequest {
  const problems: string[] = [];
  let limit = kDefaultPage;
  if (limitText !== null && limitText !== undefined) {
    if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > kMaxPage)
      problems.push(`limit must be a whole number from 1 to ${kMaxPage}`);
    else limit = Number(limitText);
  }
  let after: PagePosition | null = null;
  if (afterText !== null && afterText !== undefined) {
    const match = kCursor.exec(afterText);
    if (match === null) problems.push('after must be the "next" of an earlier page');
    else after = { time: Number(match[1]), id: match[2]! };
  }
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  return { limit, maxBytes: kMaxPageBytes, after };
}

/** A page as answers carry it: its entries under `name`, and `next`. */
export function pageAnswer<T, V, K extends string>(name: K, page: Page<T>, view: (item: T) => V): Record<K, V[]> & { next: string | null } {
  return { [name]: page.items.map(view), next: cursorText(page.next) } as Record<K, V[]> & { next: string | null };
}

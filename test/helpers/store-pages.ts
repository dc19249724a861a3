// A page request that takes a whole (test-sized) list at once: tests that read a project's scheduled
// changes whole, which the API and the CLI page (src/release-plans/list-pages.ts).
import type { PageRequest } from '../../src/release-plans/list-pages.js';

export const kEveryChange: PageRequest & { pendingOnly: boolean } = {
  limit: 1_000_000,
  maxBytes: Number.POSITIVE_INFINITY,
  after: null,
  pendingOnly: false,
};

// How many SDK reports (POST /api/client/metrics) a project's tokens may send the node per window
// (issue 96, item 7; docs/operations.md: Flag usage). Each report is read on a front end's thread (its
// body checked, the project's flags listed), which every project's requests share: a flood from one
// token slowed another project's p99. Counted per project, so a flood is charged to the project whose
// tokens send it; past the bound a report is refused 429 with Retry-After, counting nothing, and its
// SDK sends its counts again with its next report (unleash-client keeps them on a 429).
//
// Counted in the process's shared limiter (src/http/rate-limit.ts, keyed by project id), made once by
// src/server/start.ts and attached by every front-end thread: a thread's own count would let N threads
// take N times the bound.
import { FlagwireError } from '../errors.js';
import { RateLimiter } from '../http/rate-limit.js';

/** The window's length. */
export const kReportWindowMs = 60_000;
/** Reports per project per window: a fleet of 600 SDK instances at unleash-client's default interval (a minute). */
export const kMaxReportsPerWindow = 600;

/** The process's report limiter, in new shared memory: made once, before the front ends start. */
export function createReportLimiter(): RateLimiter {
  return RateLimiter.create({ limit: kMaxReportsPerWindow, windowMs: kReportWindowMs });
}

/** The refusal of a report past the bound; its Retry-After is errors.ts's (retryAfterSeconds). */
export function tooManyReports(): FlagwireError {
  return new FlagwireError(
    'TOO_MANY_REPORTS',
    `This project's SDKs sent more than ${kMaxReportsPerWindow} reports in ${kReportWindowMs / 1000} s; this one counted nothing. ` +
      'Send it again after the Retry-After.',
  );
}

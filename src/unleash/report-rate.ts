// How many SDK reports (POST /api/client/metrics) a project's tokens may send a front end per window
// (issue 96, item 7; docs/operations.md: Flag usage). Each report is read on the front end's thread (its
// body checked, the project's flags listed), which every project's requests share: a flood from one
// token slowed another project's p99 from 63 to 261 ms. Counted per project, so a flood is charged to
// the project whose tokens send it; past the bound a report is refused 429 with Retry-After, counting
// nothing, and its SDK sends its counts again with its next report (unleash-client keeps them on a 429).
//
// Fixed windows, one for every project: the map is dropped when a window ends, so it holds at most the
// projects that reported in one window.
import { FlagwireError } from '../errors.js';

/** The window's length. */
export const kReportWindowMs = 60_000;
/** Reports per project per window: a fleet of 600 SDK instances at unleash-client's default interval (a minute). */
export const kMaxReportsPerWindow = 600;

export class ReportRate {
  private windowEnd = 0;
  private readonly counts = new Map<string, number>();

  /** Counts a report of `projectId` at `now`, or refuses it (thrown) when the project's window is full. */
  take(projectId: string, now: number): void {
    if (now >= this.windowEnd) {
      this.counts.clear();
      this.windowEnd = now + kReportWindowMs;
    }
    const count = this.counts.get(projectId) ?? 0;
    if (count >= kMaxReportsPerWindow) throw new TooManyReportsError(Math.max(1, Math.ceil((this.windowEnd - now) / 1000)));
    this.counts.set(projectId, count + 1);
  }
}

/** The refusal, with the seconds of its Retry-After. */
export class TooManyReportsError extends FlagwireError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'TOO_MANY_REPORTS',
      `This project's SDKs sent more than ${kMaxReportsPerWindow} reports in ${kReportWindowMs / 1000} s; this one counted nothing. ` +
        `Send it again after ${retryAfterSeconds} s (Retry-After).`,
    );
  }
}

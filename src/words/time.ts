// A time as the console and the audit log's sentences write it: UTC, to the second, the same on the
// server and in the browser.

/** `2026-11-24 16:05:09 UTC`; '—' for none. */
export function formatTime(ms: number | null): string {
  if (ms === null || ms === 0) return '—';
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

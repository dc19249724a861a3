// Ids taken from a URL path.

/** Path ids are sent as is; one that was percent-encoded anyway is decoded (undecodable: no such id). */
export function decodePathId(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

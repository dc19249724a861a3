// The one path matcher of the service's own routers: the Management API's dispatch behind /api/v1/*
// (matchManagementRoute in src/all-routes.ts, which gives the route and its metrics label in one
// walk) and the web console's API router (src/web-console/api.ts). A pattern's `:name` segment is a
// parameter: it matches one non-empty segment.
// uWS matches the routes it is given itself (src/routes/route-table.ts).

export interface PathPattern {
  readonly pattern: string;
  readonly segments: readonly string[];
  /** The parameters' names, in the order they appear. */
  readonly params: readonly string[];
}

export function compilePattern(pattern: string): PathPattern {
  const segments = pattern.split('/');
  const params = segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1));
  return { pattern, segments, params };
}

/** True when `path` has the pattern's shape (parameters not decoded). */
export function matchesShape(p: PathPattern, path: string): boolean {
  return matchesSegments(p, path.split('/'));
}

/** The decoded parameters of `path`, or null when it does not have the pattern's shape or a parameter cannot be decoded. */
export function matchPath(p: PathPattern, path: string): Record<string, string> | null {
  const segments = path.split('/');
  return matchesSegments(p, segments) ? decodeParams(p, segments) : null;
}

/** matchesShape of a path already split at its slashes: a table walked for one path splits it once. */
export function matchesSegments(p: PathPattern, segments: readonly string[]): boolean {
  if (segments.length !== p.segments.length) return false;
  for (let i = 0; i < segments.length; i++) {
    const s = p.segments[i]!;
    if (s.startsWith(':') ? segments[i] === '' : s !== segments[i]) return false;
  }
  return true;
}

/** The decoded parameters of split `segments` that have the pattern's shape, or null when one cannot be decoded. */
export function decodeParams(p: PathPattern, segments: readonly string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const s = p.segments[i]!;
    if (!s.startsWith(':')) continue;
    try {
      params[s.slice(1)] = decodeURIComponent(segments[i]!);
    } catch {
      return null;
    }
  }
  return params;
}

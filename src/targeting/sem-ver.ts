// flagd's `sem_ver` operator: `{"sem_ver": [version, op, version]}` with op one of = != < <= > >= ^ ~.
//
// Versions are read as flagd-core reads them (node-semver's strict parse, after one leading v or V is
// dropped; then "1" and "1.2" are taken as 1.0.0 and 1.2.0), so that every operand flagd-core accepts is
// accepted here and compares the same. The regular expression below is node-semver's FULL expression as
// that library builds it (its bounded "safe" form); version text over 256 characters is refused there too.
// `^` matches the major version and `~` the major and minor ones, as flagd defines them (not npm ranges).

/** A parsed version; prerelease identifiers that are safe integers are numbers, as node-semver keeps them. */
export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: readonly (string | number)[];
  /** `major.minor.patch[-prerelease]`: two versions with the same text are equal (build ignored). */
  readonly text: string;
}

const kMaxLength = 256;
const kNumeric = '0|[1-9]\\d{0,256}';
const kNonNumeric = '\\d{0,256}[a-zA-Z-][a-zA-Z0-9-]{0,250}';
const kPreId = `(?:${kNonNumeric}|${kNumeric})`;
const kBuildId = '[a-zA-Z0-9-]{1,250}';
const kFull = new RegExp(
  `^v?(${kNumeric})\\.(${kNumeric})\\.(${kNumeric})(?:-(${kPreId}(?:\\.${kPreId})*))?(?:\\+(${kBuildId}(?:\\.${kBuildId})*))?$`,
);
/** node-semver's COERCE expression (without its prerelease option): the first 1-3 dotted numbers. */
const kCoerce = /(^|[^\d])(\d{1,16})(?:\.(\d{1,16}))?(?:\.(\d{1,16}))?(?:$|[^\d])/;
const kDigits = /^[0-9]+$/;
const kPartial = /^\d+(\.\d+)?$/;
const kLeadingV = /^[vV]/;

/** A version as node-semver's strict parse reads it (after trimming), or null: what Unleash's SEMVER_* operators compare. */
export function parseStrict(text: string): SemVer | null {
  if (text.length > kMaxLength) return null;
  const m = kFull.exec(text.trim());
  if (m === null) return null;
  const major = +m[1]!;
  const minor = +m[2]!;
  const patch = +m[3]!;
  if (major > Number.MAX_SAFE_INTEGER || minor > Number.MAX_SAFE_INTEGER || patch > Number.MAX_SAFE_INTEGER) return null;
  const prerelease: (string | number)[] = [];
  if (m[4] !== undefined) {
    for (const id of m[4].split('.')) {
      const n = kDigits.test(id) ? +id : -1;
      prerelease.push(n >= 0 && n < Number.MAX_SAFE_INTEGER ? n : id);
    }
  }
  let text2 = `${major}.${minor}.${patch}`;
  if (prerelease.length > 0) text2 += `-${prerelease.join('.')}`;
  return { major, minor, patch, prerelease, text: text2 };
}

/** A version operand as flagd-core reads it, or null when it is not one (the operation is then null). */
export function parseVersion(raw: unknown): SemVer | null {
  const text = String(raw).replace(kLeadingV, '');
  const strict = parseStrict(text);
  if (strict !== null) return strict;
  if (!kPartial.test(text)) return null;
  const m = kCoerce.exec(text);
  if (m === null) return null;
  return parseStrict(`${m[2]}.${m[3] ?? '0'}.${m[4] ?? '0'}`);
}

function compareIdentifiers(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
  const aNumeric = kDigits.test(String(a));
  const bNumeric = kDigits.test(String(b));
  let x: string | number = a;
  let y: string | number = b;
  if (aNumeric && bNumeric) {
    x = +a;
    y = +b;
  }
  if (x === y) return 0;
  if (aNumeric && !bNumeric) return -1;
  if (bNumeric && !aNumeric) return 1;
  return x < y ? -1 : 1;
}

/** Semantic-version precedence: -1, 0 or 1. Build metadata is ignored; a prerelease sorts before its release. */
export function compareVersions(a: SemVer, b: SemVer): number {
  if (a.text === b.text) return 0;
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1;
  const pa = a.prerelease;
  const pb = b.prerelease;
  if (pa.length > 0 && pb.length === 0) return -1;
  if (pa.length === 0 && pb.length > 0) return 1;
  if (pa.length === 0) return 0;
  for (let i = 0; ; i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined && y === undefined) return 0;
    if (y === undefined) return 1;
    if (x === undefined) return -1;
    if (x === y) continue;
    return compareIdentifiers(x, y);
  }
}

/** The operators flagd defines, in one table: the answer for two parsed versions. */
const kSemVerOperators: Readonly<Record<string, (a: SemVer, b: SemVer) => boolean>> = {
  '=': (a, b) => compareVersions(a, b) === 0,
  '!=': (a, b) => compareVersions(a, b) !== 0,
  '<': (a, b) => compareVersions(a, b) < 0,
  '<=': (a, b) => compareVersions(a, b) <= 0,
  '>': (a, b) => compareVersions(a, b) > 0,
  '>=': (a, b) => compareVersions(a, b) >= 0,
  '^': (a, b) => a.major === b.major,
  '~': (a, b) => a.major === b.major && a.minor === b.minor,
};

export function isSemVerOperator(op: string): boolean {
  return Object.hasOwn(kSemVerOperators, op);
}

/**
 * `sem_ver` on its evaluated arguments: true or false, or null when the arguments are not three, a
 * version does not parse, or the operator is unknown (flagd-core's answers, in its order of checks).
 */
export function semVer(args: readonly unknown[]): boolean | null {
  if (args.length !== 3) return null;
  const a = parseVersion(args[0]);
  const b = parseVersion(args[2]);
  if (a === null || b === null) return null;
  return applySemVerOperator(a, args[1], b);
}

/** `a op b` for two parsed versions; null when `op` is not one of flagd's operators. */
export function applySemVerOperator(a: SemVer, op: unknown, b: SemVer): boolean | null {
  const name = String(op);
  return Object.hasOwn(kSemVerOperators, name) ? kSemVerOperators[name]!(a, b) : null;
}

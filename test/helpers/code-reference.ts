// One code reference as `flagwire refs scan` reports it (src/code-refs/schemas.ts: CodeReference), for the
// tests that push scans over the Management API: an OpenFeature boolean read of `key` at `line` (a
// computed key when null), in src/app.ts with the call's line as its context unless told otherwise.
export function codeReference(
  key: string | null,
  line: number,
  at: { file?: string; language?: string; context?: string[]; contextStart?: number } = {},
) {
  return {
    file: at.file ?? 'src/app.ts',
    line,
    column: 30,
    language: at.language ?? 'typescript',
    sdk: 'openfeature',
    method: 'getBooleanValue',
    kind: key === null ? 'unknown' : 'literal',
    key,
    expression: key === null ? 'keyOf(user)' : `'${key}'`,
    context: at.context ?? [`if (await client.getBooleanValue('${key}', false)) {`],
    contextStart: at.contextStart ?? line,
  };
}

// A code reference as `flagwire refs scan` reports a literal key (src/code-refs/schemas.ts), for tests and
// benches that push scans without scanning.
import type { CodeReference } from '../../src/code-refs/schemas.js';

/** A literal `key` read by OpenFeature's getBooleanValue at `line` of `file`. */
export function literalReference(key: string, line: number, file = 'src/app.ts'): CodeReference {
  return {
    file,
    line,
    column: 1,
    language: 'typescript',
    sdk: 'openfeature',
    method: 'getBooleanValue',
    kind: 'literal',
    key,
    expression: `'${key}'`,
    context: [`client.getBooleanValue('${key}', false)`],
    contextStart: line,
  };
}

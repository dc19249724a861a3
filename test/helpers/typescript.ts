// TypeScript's compiler API for the tests that read sources with it (architecture/layers,
// web-console/browser/modules). Required, not imported: Node 20's import of a CommonJS file first
// pre-parses it for its named exports (cjs-module-lexer, and its check for module syntax) over TypeScript's
// one 9 MB file, which made a process that loads it spend about 0.9 CPU s on that instead of 0.3.
import { createRequire } from 'node:module';
import type * as TypeScript from 'typescript';

export const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
export type { TypeScript };

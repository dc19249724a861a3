// src/typebox.ts for the edge bundle (scripts/pack-edge.mjs puts this module in its place): the same
// exports, with each check interpreted by TypeBox's Value.Check and Errors instead of compiled by its
// TypeCompiler, which writes the check as JavaScript and runs it through `new Function`. Cloudflare's
// workerd refuses that, and Vercel's Edge Runtime too; the two give the same answer for every value,
// the compiled one faster (the server keeps it). docs/decisions.md: Edge, no code generation.
import type { Static, TSchema } from '@sinclair/typebox';
import { Errors } from '@sinclair/typebox/errors';
import { Check } from '@sinclair/typebox/value';
import type { CompiledCheck } from '../typebox.js';

export { CloneType, type Static, type TObject, type TSchema, type TUnion, Type } from '@sinclair/typebox';
export { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
export type { CompiledCheck } from '../typebox.js';

/** `schema`'s check, interpreted on each call: the shape src/typebox.ts's compiledOnUse answers. */
export function compiledOnUse<T extends TSchema>(schema: T): CompiledCheck<T> {
  return {
    Check: (value: unknown): value is Static<T> => Check(schema, value),
    Errors: (value: unknown) => Errors(schema, value),
  };
}

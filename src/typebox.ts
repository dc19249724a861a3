// TypeBox, the part of it Flagwire uses, as one module. Its ES build is some 220 files, and Node
// resolves, reads and links each one in every thread that loads it (the main thread, the writer,
// each evaluation worker, every CLI run), a large part of each one's start. The build bundles this module's
// output into a single file (scripts/bundle-typebox.mjs); without that step it still works, only
// loading the files one by one. Source modules import TypeBox from here, never from the package.
import type { Static, TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';

export { CloneType, type Static, type TObject, type TSchema, type TUnion, Type } from '@sinclair/typebox';
export { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';

/** What Flagwire reads of a compiled check. */
export type CompiledCheck<T extends TSchema> = Pick<TypeCheck<T>, 'Errors'> & { Check(value: unknown): value is Static<T> };

/**
 * `schema`'s compiled check, compiled when first used rather than when its module loads: every process
 * loads the modules that declare checks (each command-line run, each thread) and most use few of them
 * (a command's start-up no longer compiles checks it never runs).
 */
export function compiledOnUse<T extends TSchema>(schema: T): CompiledCheck<T> {
  let compiled: TypeCheck<T> | null = null;
  const check = () => (compiled ??= TypeCompiler.Compile(schema));
  return {
    Check: (value: unknown): value is Static<T> => check().Check(value),
    Errors: (value: unknown) => check().Errors(value),
  };
}

// TypeBox, the part of it Flagwire uses, as one module. Its ES build is some 220 files, and Node
// resolves, reads and links each one in every thread that loads it (the main thread, the writer,
// each evaluation worker, every CLI run): about 0.2 CPU s apiece. The build bundles this module's
// output into a single file (scripts/bundle-typebox.mjs); without that step it still works, only
// loading the files one by one. Source modules import TypeBox from here, never from the package.
export { CloneType, type Static, type TObject, type TSchema, type TUnion, Type } from '@sinclair/typebox';
export { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
export { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';

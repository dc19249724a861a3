// The error answers' two shapes as TypeBox values, for the OpenAPI document and the routes that declare
// them. Apart from the error table (errors.ts), which imports their types only: a process that answers
// from the table alone (the command line's help and usage errors) does not load TypeBox, a visible part
// of `flagwire --help`'s start.
import { Type, type Static } from './typebox.js';

/** `{error, detail}`: the console's and the Evaluation API's error body. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: "The error's title" }),
    detail: Type.String({ description: 'Cause and fix' }),
  },
  { description: 'Evaluation API error body' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** `{error, detail, docs}`: the Management API's envelope. */
export const ErrorEnvelope = Type.Object(
  {
    ...ErrorBody.properties,
    docs: Type.String({ description: 'Link to the section of the docs page explaining it' }),
  },
  { description: 'Management API error envelope' },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

// The web console's own form bodies (sign-in, join, and the JSON API's forms): each is a TypeBox schema
// whose check is compiled once, and a body that fails it gets the console's texts. Flag bodies are not
// forms: they go to the writer as received, to be parsed with the Management API's rules.
import { FlagwireError } from '../errors.js';
import { jsonBoundsProblem } from '../http/json-bounds.js';
import type { ReceivedBody } from '../model/request-body.js';
import { schemaErrorText } from '../model/schemas.js';
import { type CompiledCheck, compiledOnUse, type Static, type TObject, type TSchema, Type, ValueErrorType } from '../typebox.js';

/** A form field's schema: `x-error` is what a wrong value gets after the field's quoted name. */
export const FormText = Type.String({ 'x-error': 'must be a string' });
export const FormTexts = Type.Array(Type.String(), { 'x-error': 'must be an array of strings' });

/** A form that is any JSON object: its keys are another's to check (the writer's, the playground's). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

const kNotAnObject = 'The request body must be a JSON object.';

export interface ConsoleForm<T extends TSchema> {
  /** The body as this form; a 400 for the first wrong field, in the order the schema lists them. */
  read(received: ReceivedBody | null): Static<T>;
  /** The same, for a body the route may go without: none, or an empty one, reads as {}. */
  readOptional(received: ReceivedBody | null): Static<T>;
}

/**
 * A form's reader. Anything not a JSON object (no body, text that is not JSON, an array) is refused
 * as such before any field. A field whose string must also match a `pattern` says what it takes in
 * `x-pattern-error`, a whole detail; a form with an `x-error` of its own gives that detail for any problem.
 */
export function compileForm<T extends TObject | typeof JsonObject>(schema: T): ConsoleForm<T> {
  const checker = compiledOnUse(schema);
  const whole = schemaErrorText(schema);
  const fields = fieldChecks(schema);
  const parse = (value: unknown): Static<T> => {
    if (checker.Check(value)) return value;
    if (whole !== undefined) throw new FlagwireError('INVALID_REQUEST', whole);
    // Errors() is lazy: only its first is taken, so a long array of wrong items costs no more than one.
    const objectWrong = checker.Errors(value).First()?.path === '';
    throw new FlagwireError('INVALID_REQUEST', objectWrong ? kNotAnObject : fieldProblem(fields, value as Record<string, unknown>));
  };
  return {
    read: (received) => parse(jsonBody(received)),
    readOptional: (received) => parse(received === null || received.bytes.length === 0 ? {} : jsonBody(received)),
  };
}

interface FieldCheck {
  key: string;
  optional: boolean;
  check: CompiledCheck<TSchema>;
  /** What a wrong value gets, after the quoted key. */
  text: string;
  patternText: string | undefined;
}

/** A check per field, in the schema's order: the first wrong one is the one named. */
function fieldChecks(schema: TObject | typeof JsonObject): FieldCheck[] {
  if (!('properties' in schema)) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties as Record<string, TSchema>).map(([key, field]) => ({
    key,
    optional: !required.has(key),
    check: compiledOnUse(field),
    text: `"${key}" ${schemaErrorText(field)}`,
    patternText: (field as { 'x-pattern-error'?: string })['x-pattern-error'],
  }));
}

/**
 * The body's JSON value; undefined for none and for text that is not JSON (every form refuses both). A body
 * past the JSON bounds (src/http/json-bounds.ts) is refused before it is parsed.
 */
function jsonBody(received: ReceivedBody | null): unknown {
  if (received === null || received.bytes.length === 0) return undefined;
  const outOfBounds = jsonBoundsProblem(received.bytes);
  if (outOfBounds !== null) throw new FlagwireError('INVALID_REQUEST', outOfBounds);
  try {
    return JSON.parse(Buffer.from(received.bytes).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The detail of the first wrong field of an object that failed the form's check (so one is wrong: the
 * forms allow other keys). An optional field is wrong only when given, as TypeBox reads it: not undefined.
 */
function fieldProblem(fields: readonly FieldCheck[], body: Record<string, unknown>): string {
  const wrong = fields.find(({ key, optional, check }) => !(optional && body[key] === undefined) && !check.Check(body[key]))!;
  const value = body[wrong.key];
  const wrongPattern = wrong.patternText !== undefined && wrong.check.Errors(value).First()?.type === ValueErrorType.StringPattern;
  return wrongPattern ? wrong.patternText! : wrong.text;
}

// Turns a compiled TypeBox check into the spec's problem texts: every problem, each naming its path.
import type { TSchema, Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { schemaErrorText } from './schemas.js';

export interface Validator<T extends TSchema> {
  /** Problems in the spec's wording; empty when `value` is valid. */
  problems(value: unknown): string[];
  check(value: unknown): value is Static<T>;
}

export interface ValidatorOptions {
  /** PATCH quotes keys (`"trafficPercentage" must be ...`); create names dotted paths bare. */
  quoteKeys: boolean;
}

export function compileValidator<T extends TSchema>(schema: T, options: ValidatorOptions): Validator<T> {
  const checker: TypeCheck<T> = TypeCompiler.Compile(schema);
  const name = (path: string) => (options.quoteKeys ? `"${path}"` : path);
  return {
    check: (value): value is Static<T> => checker.Check(value),
    problems(value) {
      if (checker.Check(value)) return [];
      const seen = new Set<string>();
      const out: string[] = [];
      // Errors() is lazy and costs a walk of the value: only called once Check has failed.
      for (const error of checker.Errors(value)) {
        const { path, leaf } = readablePath(error.path, value);
        if (seen.has(path)) continue;
        seen.add(path);
        if (error.type === ValueErrorType.ObjectAdditionalProperties) {
          out.push(`unknown field "${path}"`);
        } else if (error.type === ValueErrorType.ObjectRequiredProperty) {
          out.push(`${name(path)} is required`);
        } else if (leaf === null) {
          // Keys that accept null (audienceId) never fail with null, so null here is always refused.
          out.push(`${name(path)} cannot be null`);
        } else {
          out.push(`${name(path)} ${schemaErrorText(error.schema) ?? lowerFirst(error.message)}`);
        }
      }
      return out;
    },
  };
}

/** `/environments/prod/cohorts/2` -> `environments.prod.cohorts[2]`, and the value found there. */
function readablePath(pointer: string, root: unknown): { path: string; leaf: unknown } {
  let path = '';
  let node: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path += `[${segment}]`;
      node = node[Number(segment)];
    } else {
      path += path === '' ? segment : `.${segment}`;
      node = node !== null && typeof node === 'object' && Object.hasOwn(node, segment)
        ? (node as Record<string, unknown>)[segment]
        : undefined;
    }
  }
  return { path, leaf: node };
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

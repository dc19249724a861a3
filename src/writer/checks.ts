// Input checks shared by the console commands.
import { FlagwireError } from '../errors.js';
import { kLimits } from '../model/schemas.js';

export function requireName(what: string, value: unknown, max: number = kLimits.nameLength): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '' || text.length > max) {
    throw new FlagwireError('INVALID_REQUEST', `${what} must be a non-blank string of at most ${max} characters`);
  }
  return text;
}

/** A list given as strings: trimmed, blanks dropped, repeats removed. */
export function cleanList(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.trim()).filter((v) => v !== ''))];
}

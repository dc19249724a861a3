// Input checks shared by the command-line commands.
import { FlagwireError } from '../errors.js';
import { kLimits, kNameRegExp, nameRuleText } from './schemas.js';
import { kMaxEmailLength } from './accounts.js';
import { foldedName } from './names.js';

/** A name by the API's rule (kNameRegExp), checked before trimming: a control character anywhere is refused. */
export function requireName(what: string, value: unknown, max: number = kLimits.nameLength): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '' || text.length > max || !kNameRegExp.test(value as string)) {
    throw new FlagwireError('INVALID_REQUEST', `${what} ${nameRuleText(max)}`);
  }
  return text;
}

/** An e-mail address as user create and an invitation take it: trimmed, one @, at most kMaxEmailLength. */
export function requireEmail(value: unknown): string {
  const email = String(value ?? '').trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new FlagwireError('INVALID_REQUEST', `"${email}" is not an e-mail address`);
  if (email.length > kMaxEmailLength)
    throw new FlagwireError('INVALID_REQUEST', `an e-mail address is at most ${kMaxEmailLength} characters`);
  return email;
}

/** A list of names given as strings: trimmed, blanks dropped, repeats removed. */
export function cleanList(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.trim()).filter((v) => v !== ''))];
}

/**
 * A list of values (tags, cohorts) kept exactly as given, commas and surrounding blanks included, as
 * every stored string is: only repeats and empty strings (no value at all) are dropped.
 */
export function exactList(values: readonly string[]): string[] {
  return [...new Set(values.filter((v) => v !== ''))];
}

/** Whether two names are one to people (src/model/names.ts). */
export function sameName(a: string, b: string): boolean {
  return foldedName(a) === foldedName(b);
}

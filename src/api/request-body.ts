// JSON request bodies of POST and PATCH: content type, empty body and syntax, each with a fix in the detail.
import { FlagwireError } from '../errors.js';

export type BodyKind = 'create' | 'patch';

const kNoFields = 'No fields to update: send a JSON object with at least one of "enabled", "trafficPercentage", "cohorts", "audienceId".';
const kEmptyBody = 'The request body is empty: send a JSON object with Content-Type: application/json.';

/** The parsed body as an object with at least one key, or a 400 that says what to send instead. */
export function parseJsonObject(raw: Buffer, contentType: string, kind: BodyKind): Record<string, unknown> {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw new FlagwireError('INVALID_REQUEST', kind === 'patch' ? kNoFields : kEmptyBody);
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Content-Type must be application/json${mediaType === '' ? ' (none was sent)' : `, not ${mediaType}`}; send the body as JSON with that header.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FlagwireError('INVALID_REQUEST', `The request body is not valid JSON (${(err as Error).message}); send a JSON object.`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new FlagwireError('INVALID_REQUEST', `The request body must be a JSON object, not ${got}.`);
  }
  if (kind === 'patch' && Object.keys(value).length === 0) throw new FlagwireError('INVALID_REQUEST', kNoFields);
  return value as Record<string, unknown>;
}

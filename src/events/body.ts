// An events body as sent (at most 1 MiB: the body reader's cap, src/http/body.ts) to the JSON it holds:
// gzip inflated with a bound on what it may grow to, so a small body cannot make the node hold more
// than kMaxInflatedBytes (a "zip bomb" stops there: zlib's maxOutputLength ends the inflate as it
// passes the bound, never after), on libuv's thread pool rather than the front end's thread; then read
// by the rules of every JSON body (src/model/request-body.ts: media type, UTF-8, valid Unicode).
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { FlagwireError } from '../errors.js';
import { parseJsonObject } from '../model/request-body.js';
import { kMaxInflatedBytes } from './schemas.js';

const gunzipBounded = promisify(gunzip) as (buffer: Uint8Array, options: { maxOutputLength: number }) => Promise<Buffer>;

/**
 * The JSON object of an events body; `contentEncoding` and `contentType` are the request's headers
 * ('' when absent). Every problem is a 400 that names it; nothing is kept of a body that has one.
 */
export async function readEventsBody(bytes: Uint8Array, contentEncoding: string, contentType: string): Promise<Record<string, unknown>> {
  const encoding = contentEncoding.trim().toLowerCase();
  let json: Uint8Array;
  if (encoding === '' || encoding === 'identity') json = bytes;
  else if (encoding === 'gzip') json = await inflated(bytes);
  else
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Content-Encoding must be gzip or none, not ${encoding}; send the body as JSON, gzipped or not.`,
    );
  const parsed = parseJsonObject({ bytes: json, contentType }, 'create');
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  return parsed.value;
}

async function inflated(bytes: Uint8Array): Promise<Buffer> {
  try {
    return await gunzipBounded(bytes, { maxOutputLength: kMaxInflatedBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new FlagwireError(
        'PAYLOAD_TOO_LARGE',
        `The body inflates to more than ${kMaxInflatedBytes} bytes (8 MiB); send fewer events per batch (at most 1,000).`,
      );
    throw new FlagwireError(
      'INVALID_REQUEST',
      `The body is not valid gzip (${(err as Error).message}); send it gzipped whole, or without Content-Encoding.`,
    );
  }
}

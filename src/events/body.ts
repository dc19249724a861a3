// An events body as sent (at most 1 MiB: the body reader's cap, src/http/body.ts) to the JSON it holds:
// gzip inflated a chunk at a time on libuv's thread pool rather than the front end's thread, each chunk
// counted against kMaxInflatedBytes and scanned against the JSON bounds (src/http/json-bounds.ts) as it
// comes, so that a "zip bomb", or a small body inflating to megabytes of `[[[[`, stops at the chunk that
// passes a bound, before the rest is inflated or anything is parsed; then read by the rules of every JSON
// body (src/model/request-body.ts: media type, UTF-8, valid Unicode, the bounds).
import { createGunzip } from 'node:zlib';
import { FlagwireError } from '../errors.js';
import { JsonBounds } from '../http/json-bounds.js';
import { parseJsonObject } from '../model/request-body.js';
import { kMaxInflatedBytes } from './schemas.js';

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

function inflated(bytes: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip();
    // One per body: the events thread inflates several at once, each its own stream.
    const bounds = new JsonBounds();
    const chunks: Buffer[] = [];
    let length = 0;
    const refuse = (err: FlagwireError) => {
      gunzip.destroy();
      reject(err);
    };
    gunzip.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > kMaxInflatedBytes)
        return refuse(
          new FlagwireError(
            'PAYLOAD_TOO_LARGE',
            `The body inflates to more than ${kMaxInflatedBytes} bytes (8 MiB); send fewer events per batch (at most 1,000).`,
          ),
        );
      if (!bounds.scanBytes(chunk)) return refuse(new FlagwireError('INVALID_REQUEST', bounds.problem!));
      chunks.push(chunk);
    });
    gunzip.on('end', () => resolve(Buffer.concat(chunks, length)));
    gunzip.on('error', (err) =>
      reject(
        new FlagwireError(
          'INVALID_REQUEST',
          `The body is not valid gzip (${err.message}); send it gzipped whole, or without Content-Encoding.`,
        ),
      ),
    );
    gunzip.end(bytes);
  });
}

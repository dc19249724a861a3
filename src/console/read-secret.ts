// A secret read from standard input, never from the command line (where `ps` and shell history see it):
// everything up to the first newline or the end of input, whichever comes first.
import { isUtf8 } from 'node:buffer';
import { FlagwireError } from '../errors.js';

/** More than any password the console accepts (src/model/passwords.ts), in bytes. */
const kMaxBytes = 16 * 1024;

export async function readSecretLine(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of input) {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const newline = data.indexOf(0x0a);
    chunks.push(newline === -1 ? data : data.subarray(0, newline));
    bytes += data.length;
    if (newline !== -1 || bytes > kMaxBytes) break;
  }
  const line = Buffer.concat(chunks);
  if (line.length > kMaxBytes) throw new FlagwireError('INVALID_REQUEST', `the line on standard input is longer than ${kMaxBytes} bytes`);
  if (!isUtf8(line)) throw new FlagwireError('INVALID_REQUEST', 'the password on standard input is not valid UTF-8');
  // A line typed on Windows, or sent by a script with CRLF, ends in a carriage return that is not part of it.
  const text = line.toString('utf8');
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

// A secret read from standard input, never from the command line (where `ps` and shell history see it):
// everything up to the first newline or the end of input, whichever comes first. When standard input is
// a terminal, it asks on standard error and the terminal does not echo what is typed.
import { isUtf8 } from 'node:buffer';
import type { ReadStream } from 'node:tty';
import { FlagwireError } from '../../errors.js';

/** More than any password the console accepts (src/model/passwords.ts), in bytes. */
const kMaxBytes = 16 * 1024;

export async function readSecretLine(input: NodeJS.ReadableStream): Promise<string> {
  if ((input as Partial<ReadStream>).isTTY === true) return checked(await readTyped(input as ReadStream));
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of input) {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const newline = data.indexOf(0x0a);
    chunks.push(newline === -1 ? data : data.subarray(0, newline));
    bytes += data.length;
    if (newline !== -1 || bytes > kMaxBytes) break;
  }
  return checked(Buffer.concat(chunks));
}

function checked(line: Buffer): string {
  if (line.length > kMaxBytes) throw new FlagwireError('INVALID_REQUEST', `the line on standard input is longer than ${kMaxBytes} bytes`);
  if (!isUtf8(line)) throw new FlagwireError('INVALID_REQUEST', 'the password on standard input is not valid UTF-8');
  // A line typed on Windows, or sent by a script with CRLF, ends in a carriage return that is not part of it.
  const text = line.toString('utf8');
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

const kEnter = 0x0d;
const kNewline = 0x0a;
const kEndOfInput = 0x04;
const kInterrupt = 0x03;
const kErase = new Set([0x7f, 0x08]);

/**
 * A line typed on a terminal in raw mode, so nothing is echoed: Enter or Ctrl-D ends it, Backspace
 * erases the last character, Ctrl-C gives up (exit 130, as the shell's own interrupt would).
 */
async function readTyped(input: ReadStream): Promise<Buffer> {
  // Echo off before the prompt shows: whatever is typed once it is visible is never echoed.
  input.setRawMode(true);
  process.stderr.write('Password: ');
  const typed: number[] = [];
  try {
    for await (const chunk of input) {
      for (const byte of typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)) {
        if (byte === kInterrupt) {
          process.stderr.write('\n');
          input.setRawMode(false);
          process.exit(130);
        }
        if (byte === kEnter || byte === kNewline || byte === kEndOfInput) return Buffer.from(typed);
        if (kErase.has(byte)) eraseLast(typed);
        else if (typed.length <= kMaxBytes) typed.push(byte);
      }
    }
    return Buffer.from(typed);
  } finally {
    input.setRawMode(false);
    input.pause();
    process.stderr.write('\n');
  }
}

/** Drops the last UTF-8 character (its continuation bytes, then its first byte). */
function eraseLast(typed: number[]): void {
  while (typed.length > 0 && (typed[typed.length - 1]! & 0xc0) === 0x80) typed.pop();
  typed.pop();
}

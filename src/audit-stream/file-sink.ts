// The JSON-lines file sink: each entry one line, appended; a batch is accepted once written and flushed
// to disk (fdatasync). Exactly once: the file's own last line says how far it got, so an entry written
// before a crash that beat the cursor's update is not written again, and a line torn by the crash is
// cut off before the stream goes on. A file moved away (log rotation) is followed by a new one at the path.
import { type FileHandle, open, stat } from 'node:fs/promises';
import { recordJson, type StreamRecord } from './record.js';
import type { AuditSink } from './sink.js';

/** How far back from its end the file is read for its last line at start. */
const kTailBytes = 4 * 1024 * 1024;

export class FileSink implements AuditSink {
  readonly name = 'file';
  private file: FileHandle | null = null;

  constructor(private readonly path: string) {}

  async open(saved: number): Promise<number> {
    return Math.max(saved, await this.reopen());
  }

  async send(records: readonly StreamRecord[]): Promise<number | null> {
    if (this.file === null || (await this.moved())) await this.reopen();
    const file = this.file!;
    await file.write(records.map((r) => `${recordJson(r)}\n`).join(''));
    await file.datasync();
    return records.at(-1)?.seq ?? null;
  }

  async settle(): Promise<number | null> {
    return null;
  }

  lost(): boolean {
    return false;
  }

  async close(): Promise<number | null> {
    await this.file?.close();
    this.file = null;
    return null;
  }

  /** Whether the path no longer names the file open (it was moved or removed). */
  private async moved(): Promise<boolean> {
    const [open, named] = await Promise.all([this.file!.stat(), stat(this.path).catch(() => null)]);
    return named === null || named.ino !== open.ino || named.dev !== open.dev;
  }

  /** Opens the path for appending, cuts a torn last line off, and returns the last whole line's sequence number (0: none). */
  private async reopen(): Promise<number> {
    await this.file?.close();
    this.file = await open(this.path, 'a+');
    const { size } = await this.file.stat();
    const from = Math.max(0, size - kTailBytes);
    const tail = Buffer.alloc(size - from);
    await this.file.read(tail, 0, tail.length, from);
    const end = tail.lastIndexOf(0x0a);
    if (end + 1 < tail.length && (end >= 0 || from === 0)) await this.file.truncate(from + end + 1);
    if (end <= 0) return 0;
    const start = tail.lastIndexOf(0x0a, end - 1) + 1;
    // A last line longer than the tail read, or not one of ours: the cursor alone says how far it got.
    if (start === 0 && from > 0) return 0;
    return lineSeq(tail.subarray(start, end).toString('utf8'));
  }
}

function lineSeq(line: string): number {
  try {
    const seq = (JSON.parse(line) as Partial<StreamRecord>).seq;
    return Number.isSafeInteger(seq) ? (seq as number) : 0;
  } catch {
    return 0;
  }
}

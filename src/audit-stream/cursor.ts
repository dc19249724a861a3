// The audit stream's durable position per sink: the sequence number of the last entry the sink accepted,
// in a small file of the data directory, replaced whole (written, flushed, renamed) so a crash leaves the
// old position or the new one, never a torn one. It only moves forward after the sink accepted the entries.
// A dot name, as the clean-stop mark's: the data directory's check for files Flagwire did not write
// (src/store/open.ts) passes over it.
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

export class Cursor {
  private readonly path: string;

  constructor(dataDir: string, sink: string) {
    this.path = join(dataDir, `.audit-stream-${sink}.cursor`);
  }

  /** The last entry accepted; 0 when none was (a fresh data directory, or the stream just configured). */
  async read(): Promise<number> {
    const text = await readFile(this.path, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '0';
      throw err;
    });
    const seq = Number(text.trim());
    if (!Number.isSafeInteger(seq) || seq < 0) throw new Error(`${this.path} holds no sequence number`);
    return seq;
  }

  async write(seq: number): Promise<void> {
    const next = `${this.path}.next`;
    const file = await open(next, 'w');
    try {
      await file.writeFile(`${seq}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(next, this.path);
  }
}

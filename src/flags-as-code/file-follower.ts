// A node that follows a flag file for one project (`serve --flags-file PATH --flags-project ID`), as
// flagd follows its files: the file is applied when the node starts and whenever its content changes, as
// `flagwire apply --prune` applies it (all or nothing, audited as `console`, flags the file no longer
// names deleted). A file that cannot be applied is refused and logged, and the project stays as it was.
//
// Changes are noticed two ways: a watch on the file's directory (an editor's save replaces the file by a
// rename, and a mounted config map swaps a symlink, neither of which a watch on the file itself sees),
// and a check of the file's identity every kPollMs, for the filesystems where watches miss events
// (network mounts). Either only schedules a read; the content decides: unchanged text is not applied again.
import { type FSWatcher, readFileSync, statSync, watch } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { Periodic } from '../background/periodic.js';
import { ChangeRequested } from '../writer/change-requested.js';
import { FlagwireError } from '../errors.js';
import type { PlanResult } from './schemas.js';

const kPollMs = 1000;
/** Events of one save (write, rename, chmod) arrive together: one read after they settle. */
const kSettleMs = 50;

export interface FollowedFile {
  path: string;
  projectId: string;
}

/** Applies the file's text to the project as `flagwire apply --prune` does (the writer's flagsApply); rejects with its refusal. */
export type ApplyFile = (file: FollowedFile, text: string) => Promise<PlanResult>;

export class FileFollower {
  private watcher: FSWatcher | null = null;
  /** The identity check every kPollMs, for the filesystems where watches miss events. */
  private readonly poll: Periodic;
  private settle: NodeJS.Timeout | null = null;
  /** The file's identity at the last read (inode, size, mtime), to notice a change without reading it. */
  private seenStat = '';
  /** The text last read, applied or refused: the same text is not applied (or logged) again. */
  private seenText: string | null = null;
  /** The check running now; another change waits for it, then checks again. */
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly file: FollowedFile,
    private readonly applyFile: ApplyFile,
    private readonly log: Logger,
  ) {
    this.poll = new Periodic(
      () => {
        if (this.stat() !== this.seenStat) this.schedule();
      },
      { intervalMs: kPollMs, onError: (err) => this.log.error({ err, file: this.file.path }, 'flag file: the check failed') },
    );
  }

  /** Applies the file as it is now (when it exists), then follows it. */
  async start(): Promise<void> {
    await this.check();
    try {
      this.watcher = watch(dirname(this.file.path), () => this.schedule());
      this.watcher.on('error', (err) =>
        this.log.warn({ err, file: this.file.path }, 'flag file: watching its directory failed; checking every second'),
      );
    } catch (err) {
      this.log.warn({ err, file: this.file.path }, 'flag file: its directory cannot be watched; checking every second');
    }
    this.poll.start();
  }

  /** Stops following; a check in progress finishes first. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    if (this.settle !== null) clearTimeout(this.settle);
    await this.poll.stop();
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.settle !== null) clearTimeout(this.settle);
    this.settle = setTimeout(() => {
      this.settle = null;
      void this.check();
    }, kSettleMs);
  }

  /** Reads the file and applies it if its text changed; one check at a time. */
  private check(): Promise<void> {
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    this.running = this.readAndApply().finally(() => {
      this.running = null;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.check();
      }
    });
    return this.running;
  }

  private async readAndApply(): Promise<void> {
    const { path, projectId } = this.file;
    this.seenStat = this.stat();
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      // Missing for a moment during a save, or not written yet: the served flags stay; the next event retries.
      if (this.seenText !== '')
        this.log.warn({ file: path, code: (err as NodeJS.ErrnoException).code }, 'flag file: cannot be read; flags unchanged');
      this.seenText = '';
      return;
    }
    if (text === this.seenText) return;
    this.seenText = text;
    try {
      const result = await this.applyFile(this.file, text);
      const count = (op: string) => result.changes.filter((c) => c.op === op).length;
      this.log.info(
        { file: path, projectId, revision: result.revision, created: count('create'), changed: count('update'), deleted: count('delete') },
        result.changed ? 'flag file applied' : 'flag file read: the project already matches it',
      );
    } catch (err) {
      // A guarded environment (docs/approvals.md): the file's change waits in a request; its next change edits it.
      if (err instanceof ChangeRequested)
        this.log.warn(
          { file: path, projectId, changeRequest: err.request.id },
          `flag file: ${err.message}; flags unchanged until it is approved`,
        );
      else if (err instanceof FlagwireError)
        this.log.error({ file: path, projectId, error: err.title, detail: err.detail }, 'flag file refused; flags unchanged');
      else this.log.error({ err, file: path, projectId }, 'flag file: applying it failed; flags unchanged');
    }
  }

  private stat(): string {
    try {
      const s = statSync(this.file.path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return '';
    }
  }
}

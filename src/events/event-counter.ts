// The front end's handle on the tally file (src/store/tally-file.ts), where the events routes count and
// the statistics route reads: opened on first use, so a node that is never sent an event never opens it.
import type { Config } from '../config.js';
import { FlagwireError } from '../errors.js';
import { TallyFile } from '../store/tally-file.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** The tally file of events, per front end (src/events). */
    events: EventCounter;
  }
}

export class EventCounter {
  private file: TallyFile | null = null;

  constructor(private readonly dataDir: string) {}

  get tally(): TallyFile {
    this.file ??= TallyFile.open(this.dataDir);
    return this.file;
  }

  /** Closes the file once the front end has drained (every answered batch is on disk by then). */
  async close(): Promise<void> {
    await this.file?.close();
    this.file = null;
  }
}

/**
 * The refusal of every events route on a node that does not count them: with PostgreSQL, each node's own
 * tally file would hold only part of a subject's events (and a relay forwards no writes).
 */
export function refuseUnlessCounted(config: Readonly<Pick<Config, 'databaseUrl' | 'upstream'>>): void {
  if (config.databaseUrl !== null || config.upstream !== null)
    throw new FlagwireError(
      'NOT_FOUND',
      'Events are counted on an embedded node only: this node keeps its data in PostgreSQL, or relays another node, where each node would hold part of a subject. Send them to an embedded node.',
    );
}

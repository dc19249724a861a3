// A relay's write path: nothing is written through it. The relay's copy changes only by following its
// upstream (upstream-follower.ts, run here in the writer thread as PostgreSQL's follower runs inside
// PgWritePath); every command is refused RELAY_READ_ONLY, naming the primary to send it to (the
// upstream, or the node a relay above follows).
import type { ChangeLogBounds, Config } from '../config.js';
import { relayReadOnlyError } from '../errors.js';
import { primaryUrlOf, type RelayStatus } from '../model/follow-state.js';
import type { Settled, StoreCopy, StoreWriter, WritePath } from '../store/interfaces.js';
import { LmdbStore } from '../store/lmdb-store.js';
import type { StoreLayout } from '../store/store-layout.js';
import { UpstreamFollower } from './upstream-follower.js';

class RelayWritePath implements WritePath {
  private readonly follower: UpstreamFollower;
  /** Where changes go: the upstream, or the primary it reports (a relay of a relay). */
  private primary: string;

  /** Owns `copy` (close closes it); `onRelay` hears the follower's state. */
  constructor(
    private readonly copy: StoreCopy,
    upstream: NonNullable<Config['upstream']>,
    onRelay: (status: RelayStatus) => void,
  ) {
    this.primary = upstream.url;
    this.follower = new UpstreamFollower(copy, upstream, (status) => {
      this.primary = primaryUrlOf(status);
      onRelay(status);
    });
    this.follower.start();
  }

  commit<T>(_claim: () => readonly ((writer: StoreWriter) => T)[]): Promise<Settled<T>[]> {
    return Promise.reject(relayReadOnlyError(this.primary));
  }

  /** Nothing is committed here: the upstream's revision this copy is at. */
  revision(): number {
    return this.copy.replicaRevision();
  }

  async close(): Promise<void> {
    await this.follower.stop();
    await this.copy.close();
  }
}

/** The writer's path for a relay's data dir (`dataDir`, its copy): every write refused, the copy kept by following `upstream`. */
export function openRelayWritePath(
  dataDir: string,
  layout: StoreLayout,
  upstream: NonNullable<Config['upstream']>,
  onRelay: (status: RelayStatus) => void,
  changeLog?: ChangeLogBounds,
): WritePath {
  return new RelayWritePath(LmdbStore.open(dataDir, { layout, changeLog }), upstream, onRelay);
}

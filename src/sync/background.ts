// The sync capability's background work: the sync service on FLAGWIRE_SYNC_PORT, unless it is 0.
import { ActivityRecorder } from '../api/activity.js';
import type { NodeServices, RunningWork } from '../capability/background-work.js';
import { SyncServer } from './sync-server.js';

/** The sync service, listening; null when FLAGWIRE_SYNC_PORT is 0. */
export async function startSyncService({ config, store, writer, clock, log, authFailures }: NodeServices): Promise<RunningWork | null> {
  if (config.syncPort === 0) return null;
  // Its own recorder: the service runs on the main thread, beside the front ends' (each flushes through the writer).
  const activity = new ActivityRecorder(config.upstream === null ? writer : null, log);
  const server = new SyncServer({
    host: config.host,
    port: config.syncPort,
    maxStreams: config.syncMaxStreams,
    store,
    clock,
    log,
    authFailures,
    activity,
  });
  const port = await server.listen();
  activity.start();
  log.info({ host: config.host, port }, 'flagd sync service listening');
  return {
    async stop() {
      await server.close();
      await activity.stop();
    },
  };
}

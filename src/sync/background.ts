// The sync capability's background work: the sync service on FLAGWIRE_SYNC_PORT, unless it is 0, with
// the gRPC services the capabilities declare beside flagd's.
import { ActivityRecorder } from '../tokens/activity.js';
import { FlagSetReadRecorder } from './read-recorder.js';
import type { NodeServices, RunningWork } from '../capability/background-work.js';

/** The sync service, listening; null when FLAGWIRE_SYNC_PORT is 0. */
export async function startSyncService(node: NodeServices): Promise<RunningWork | null> {
  const { config, log } = node;
  if (config.syncPort === 0) return null;
  // Imported past that check: the gRPC server loads node:http2 and node:zlib, which a node with the sync
  // service off never runs.
  const { SyncServer } = await import('./sync-server.js');
  // Its own recorder: the service runs on the main thread, beside the front ends' (each flushes through the writer).
  const activity = new ActivityRecorder(config.upstream === null ? node.writer : null, log);
  // Its reads of flag sets, a stream's for as long as it is open (read-recorder.ts).
  const reads: FlagSetReadRecorder = new FlagSetReadRecorder(config.upstream === null ? node.writer : null, log, node.clock, () =>
    server.openFlagSets(),
  );
  const server: InstanceType<typeof SyncServer> = new SyncServer({
    ...node,
    host: config.host,
    port: config.syncPort,
    maxCalls: config.syncMaxStreams,
    maxUnreadBytes: config.syncMaxUnreadBytes,
    activity,
    reads,
  });
  // The services other capabilities declare (the relay's Follow), on the same port and under the same bound.
  for (const service of node.grpcServices) server.addService(await service.start(server.host));
  const port = await server.listen();
  activity.start();
  await reads.start();
  log.info({ host: config.host, port }, 'flagd sync service listening');
  return {
    async stop() {
      await server.close();
      await activity.stop();
      await reads.stop();
    },
  };
}

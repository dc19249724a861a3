// The audit stream's background work: one stream per sink the node's settings name, each with its own cursor.
import type { NodeServices, RunningWork } from '../capability/background-work.js';
import { Cursor } from './cursor.js';
import { FileSink } from './file-sink.js';
import { RelpSink } from './relp-sink.js';
import type { AuditSink } from './sink.js';
import { AuditStream } from './stream.js';
import { SyslogSink } from './syslog-sink.js';

/** How long a stopping node gives a sink to confirm what it sent; what it could not confirm is sent again at the next start. */
const kStopWaitMs = 2000;

/** The streams of the sinks the node's settings name; null when they name none. */
export async function startAuditStreams({ config, store, writer, log }: NodeServices): Promise<RunningWork | null> {
  const sinks: AuditSink[] = [];
  if (config.auditFile !== null) sinks.push(new FileSink(config.auditFile));
  const syslog = config.auditSyslog;
  if (syslog !== null) sinks.push(syslog.transport === 'relp' ? new RelpSink(syslog) : new SyslogSink(syslog));
  if (sinks.length === 0) return null;
  const streams = sinks.map((sink) => new AuditStream(store, writer, sink, new Cursor(config.dataDir, sink.name), log));
  await Promise.all(streams.map((s) => s.start()));
  return { stop: async () => void (await Promise.all(streams.map((s) => s.stop(kStopWaitMs)))) };
}

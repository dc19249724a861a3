// A flagd sync client for tests (flagd.sync.v1.FlagSyncService over gRPC): @grpc/proto-loader reads
// the protocol from test/fixtures/flagd-sync.proto, so it shares nothing with the server's codec.
import type http2 from 'node:http2';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const kProto = fileURLToPath(new URL('../../../test/fixtures/flagd-sync.proto', import.meta.url));
const kDefinition = protoLoader.loadSync(kProto, { keepCase: false, defaults: true, oneofs: true });
const kPackage = grpc.loadPackageDefinition(kDefinition) as unknown as {
  flagd: { sync: { v1: { FlagSyncService: grpc.ServiceClientConstructor } } };
};

export interface SyncCall {
  /** The `Flagd-Selector` header; absent: none sent. */
  header?: string;
  /** The request's deprecated selector field. */
  selector?: string;
  providerId?: string;
  /** The `authorization` metadata. */
  authorization?: string;
}

/** What a stream sent: its messages' flag configurations, and how it ended (null while open). */
export interface OpenStream {
  readonly sets: string[];
  readonly ended: { code: number; details: string } | null;
  cancel(): void;
}

export class SyncClient {
  private readonly client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;

  /** `options`: the channel's (keepalive, as stock providers set it). */
  constructor(port: number, options: grpc.ChannelOptions = {}) {
    const Service = kPackage.flagd.sync.v1.FlagSyncService;
    this.client = new Service(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), options) as SyncClient['client'];
  }

  /** The channel's state now (READY, IDLE, ...). */
  state(): grpc.connectivityState {
    return this.client.getChannel().getConnectivityState(false);
  }

  close(): void {
    this.client.close();
  }

  /**
   * Opens SyncFlags (ended by the client after `deadlineMs`, when given); its messages and end are
   * collected on the returned value, and each message is also handed to `onSet` as it arrives.
   */
  syncFlags(call: SyncCall, deadlineMs?: number, onSet?: (set: string) => void): OpenStream {
    const sets: string[] = [];
    const state: { ended: { code: number; details: string } | null } = { ended: null };
    const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
    const stream = this.client.syncFlags(request(call), metadata(call), options) as grpc.ClientReadableStream<{
      flagConfiguration: string;
    }>;
    stream.on('data', (message) => {
      sets.push(message.flagConfiguration);
      onSet?.(message.flagConfiguration);
    });
    stream.on('error', (err: grpc.ServiceError) => (state.ended = { code: err.code, details: err.details }));
    stream.on('status', (status: grpc.StatusObject) => (state.ended ??= { code: status.code, details: status.details }));
    return {
      sets,
      get ended() {
        return state.ended;
      },
      cancel: () => stream.cancel(),
    };
  }

  fetchAllFlags(call: SyncCall): Promise<string> {
    return this.unary<{ flagConfiguration: string }>('fetchAllFlags', request(call), metadata(call)).then((r) => r.flagConfiguration);
  }

  getMetadata(call: SyncCall): Promise<Record<string, unknown>> {
    return this.unary<{ metadata: { fields: Record<string, Record<string, unknown>> } }>('getMetadata', {}, metadata(call)).then((r) =>
      Object.fromEntries(Object.entries(r.metadata.fields).map(([key, value]) => [key, value[value.kind as string]])),
    );
  }

  private unary<T>(method: string, body: object, meta: grpc.Metadata): Promise<T> {
    return new Promise((resolve, reject) => {
      this.client[method]!(body, meta, { deadline: Date.now() + 60_000 }, (err: grpc.ServiceError | null, reply: T) =>
        err === null ? resolve(reply) : reject(err),
      );
    });
  }
}

function request(call: SyncCall): { providerId: string; selector: string } {
  return { providerId: call.providerId ?? '', selector: call.selector ?? '' };
}

function metadata(call: SyncCall): grpc.Metadata {
  const meta = new grpc.Metadata();
  if (call.header !== undefined) meta.set('flagd-selector', call.header);
  if (call.authorization !== undefined) meta.set('authorization', call.authorization);
  return meta;
}

/**
 * A call of flagd's `method` on `session` (raw HTTP/2) whose reader reads nothing: no WINDOW_UPDATE, so
 * what the server writes past HTTP/2's window waits in its queues.
 */
export function unreadCall(
  session: http2.ClientHttp2Session,
  method: 'SyncFlags' | 'FetchAllFlags',
  selector: string,
): http2.ClientHttp2Stream {
  const request = session.request({
    ':method': 'POST',
    ':path': `/flagd.sync.v1.FlagSyncService/${method}`,
    'content-type': 'application/grpc',
    te: 'trailers',
    'flagd-selector': selector,
  });
  request.on('error', () => undefined);
  request.end(Buffer.alloc(5)); // one empty request message
  request.pause();
  return request;
}

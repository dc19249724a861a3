// A relay's side of the follow stream for tests (flagwire.relay.v1.RelayService/Follow over gRPC):
// @grpc/proto-loader reads test/fixtures/flagwire-relay.proto and msgpackr unpacks each payload, so it
// shares nothing with the server's codec (src/relay/wire.ts).
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Packr } from 'msgpackr';

const kProto = fileURLToPath(new URL('../../../test/fixtures/flagwire-relay.proto', import.meta.url));
const kDefinition = protoLoader.loadSync(kProto, { keepCase: true, longs: Number, defaults: true });
const kPackage = grpc.loadPackageDefinition(kDefinition) as unknown as {
  flagwire: { relay: { v1: { RelayService: grpc.ServiceClientConstructor } } };
};
const packr = new Packr({ useRecords: false });

export interface PayloadChange {
  kind: string;
  value: Record<string, unknown>;
}
export type Payload =
  | { t: 'copy'; source: string; revision: number; records: PayloadChange[] }
  | { t: 'revisions'; revisions: { revision: number; changes: PayloadChange[] }[] }
  | { t: 'heartbeat'; revision: number };

/** What a stream sent (each payload with when it came), and how it ended (null while open). */
export interface FollowStream {
  readonly payloads: (Payload & { at: number })[];
  readonly ended: { code: number; details: string } | null;
  cancel(): void;
}

export class RelayClient {
  private readonly client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;

  constructor(port: number) {
    const Service = kPackage.flagwire.relay.v1.RelayService;
    // A copy is one message, larger than grpc-js's default 4 MiB limit on what a client receives.
    this.client = new Service(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': -1,
    }) as RelayClient['client'];
  }

  close(): void {
    this.client.close();
  }

  /** Opens Follow from `source` and `revision` with `key` (absent: no authorization metadata). */
  follow(request: { source: string; revision: number }, key?: string): FollowStream {
    const payloads: (Payload & { at: number })[] = [];
    const state: { ended: { code: number; details: string } | null } = { ended: null };
    const metadata = new grpc.Metadata();
    if (key !== undefined) metadata.set('authorization', `Bearer ${key}`);
    const stream = this.client.Follow(request, metadata) as grpc.ClientReadableStream<{ payload: Buffer }>;
    stream.on('data', (message) => payloads.push({ ...(packr.unpack(message.payload) as Payload), at: performance.now() }));
    stream.on('error', (err: grpc.ServiceError) => (state.ended = { code: err.code, details: err.details }));
    stream.on('status', (status: grpc.StatusObject) => (state.ended ??= { code: status.code, details: status.details }));
    return {
      payloads,
      get ended() {
        return state.ended;
      },
      cancel: () => stream.cancel(),
    };
  }
}

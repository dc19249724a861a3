// The relay's wire codec (src/relay/wire.ts), both sides of it, against the contract's proto as
// @grpc/proto-loader reads it (test/fixtures/flagwire-relay.proto): a FollowRequest either side encodes
// the other decodes, a FollowResponse's payload comes back as packed, and bytes that are not a payload
// are refused rather than taken for one.
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { Packr } from 'msgpackr';
import t from 'tap';
import {
  decodeFollowRequest,
  decodeFollowResponse,
  encodeFollowRequest,
  encodeFollowResponse,
  kFollowPath,
  type RelayPayload,
} from '../../src/relay/wire.js';

const kProto = fileURLToPath(new URL('../../../test/fixtures/flagwire-relay.proto', import.meta.url));
const kDefinition = protoLoader.loadSync(kProto, { keepCase: true, longs: Number, defaults: true });
const follow = (kDefinition['flagwire.relay.v1.RelayService'] as protoLoader.ServiceDefinition).Follow!;

t.test('FollowRequest: what one side encodes the other decodes', async (t) => {
  t.equal(follow.path, kFollowPath, "the method's path is the contract's");
  for (const request of [
    { source: '', revision: 0 },
    { source: 'db_1', revision: 1 },
    { source: '6f1c0e6a-0000-4000-8000-000000000000', revision: 2 ** 40 + 7 },
  ]) {
    t.strictSame(decodeFollowRequest(follow.requestSerialize(request)), request, `${request.source || '""'} ${request.revision}`);
    t.strictSame(follow.requestDeserialize(encodeFollowRequest(request)), request);
  }
  t.throws(() => decodeFollowRequest(Buffer.from([0x0a, 0x05, 0x61])), 'a truncated message is refused');
});

t.test('FollowResponse: the payload, packed by msgpackr without records, each of the three', async (t) => {
  const packr = new Packr({ useRecords: false });
  const payloads: RelayPayload[] = [
    { t: 'copy', source: 'db_1', revision: 4, records: [{ kind: 'org', value: { id: 'org_1', name: 'Acme' } } as never] },
    { t: 'revisions', revisions: [{ revision: 5, changes: [] }] },
    { t: 'heartbeat', revision: 5 },
  ];
  for (const payload of payloads) {
    const message = encodeFollowResponse(payload);
    const { payload: packed } = follow.responseDeserialize(message) as { payload: Buffer };
    t.strictSame(packr.unpack(packed), payload, `${payload.t}: the proto's bytes field holds it, packed`);
    t.strictSame(decodeFollowResponse(follow.responseSerialize({ payload: packr.pack(payload) })), payload, `${payload.t}: decoded back`);
  }
  t.throws(
    () => decodeFollowResponse(follow.responseSerialize({ payload: packr.pack({ t: 'other' }) })),
    /not a copy, revisions or a heartbeat/,
  );
  t.throws(() => decodeFollowResponse(Buffer.alloc(0)), /without a payload/);
});

// gRPC's message framing (gRPC over HTTP/2: Length-Prefixed-Message), apart from the server that writes
// it (grpc-server.ts): the HTTP route that serves flag sets frames them too (src/sync/flag-sets.ts),
// and a node whose sync port is off, so that it never loads node:http2 or node:zlib, still serves it.

/** `message` with gRPC's 5-byte prefix (not compressed, its length): what a call writes, made once per message. */
export function frameMessage(message: Buffer): Buffer {
  const framed = Buffer.allocUnsafe(message.length + 5);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  message.copy(framed, 5);
  return framed;
}

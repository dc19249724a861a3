// The change streams' events as they go on the wire (Server-Sent Events text): what the poller logs
// for each commit (change-poller.ts) and what the streams send besides (change-feed.ts).

/** An event whose `id:` is the store revision it was seen at (src/http/revisions.ts): a reconnect's Last-Event-ID. */
export function event(revision: number, name: string, data: object): string {
  return `id: ${revision}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** OFREP ADR-0008's change event; without etag when the client must reload whatever it has. */
export function refetchEvent(revision: number, configTag: string | null): string {
  return event(revision, 'message', configTag === null ? { type: 'refetchEvaluation' } : { type: 'refetchEvaluation', etag: configTag });
}

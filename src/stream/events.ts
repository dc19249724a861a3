// The change streams' events as they go on the wire (Server-Sent Events text): what the poller logs
// for each commit (change-poller.ts) and what the streams send besides (change-feed.ts).

export function event(seq: number, name: string, data: object): string {
  return `id: ${seq}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** OFREP ADR-0008's change event; without etag when the client must reload whatever it has. */
export function refetchEvent(seq: number, configTag: string | null): string {
  return event(seq, 'message', configTag === null ? { type: 'refetchEvaluation' } : { type: 'refetchEvaluation', etag: configTag });
}

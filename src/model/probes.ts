// The bodies of the probes, GET /health and GET /ready: TypeBox values, the one source of their types and
// of the OpenAPI document's schemas (src/openapi/document.ts); the server builds them
// (src/server/health.ts, src/server/ready.ts).
import { Type, type Static } from '../typebox.js';

/** The body of GET /health. */
export const Health = Type.Object({ status: Type.Literal('ok'), storeVersion: Type.Integer() });
export type Health = Static<typeof Health>;

/** The body of GET /ready (the OpenAPI document's "Readiness" schema). */
export const ReadinessBody = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
  ready: Type.Boolean(),
  store: Type.Boolean({ description: 'The data file is open and readable' }),
  writer: Type.Union([Type.Literal('ok'), Type.Literal('busy')], {
    description:
      "busy: a change has waited over a second for the writer thread (another process holds the data file's write lock; with PostgreSQL, the database does not answer or another node's write holds its revision lock); writes may answer 503 Storage busy (with PostgreSQL: Storage unavailable), evaluation is unaffected",
  }),
  workers: Type.Object({
    answered: Type.Integer({ description: 'Eval workers that answered a probe' }),
    total: Type.Integer(),
  }),
  replica: Type.Optional(
    Type.Object(
      {
        revision: Type.Integer({ description: "The revision of PostgreSQL this node's copy is at" }),
        caughtUp: Type.Boolean({ description: 'The copy has caught up with PostgreSQL since the node started (not ready until then)' }),
        connected: Type.Boolean({
          description:
            "PostgreSQL answered this node's last read, made every half second, within a second (when false, evaluation goes on from the copy and writes are refused)",
        }),
      },
      { description: 'Only with PostgreSQL as the system of record (FLAGWIRE_DATABASE_URL)' },
    ),
  ),
  relay: Type.Optional(
    Type.Object(
      {
        upstream: Type.String({ description: 'The base URL of the node this relay follows' }),
        holdsCopy: Type.Boolean({
          description: 'The relay holds a copy of its upstream, from now or from before a restart (not ready until it does)',
        }),
        connected: Type.Boolean({
          description: 'A follow stream to the upstream is open (when false, evaluation goes on from the copy the relay holds)',
        }),
        revision: Type.Integer({ description: "The upstream's revision this relay's copy is at" }),
        lastHeardMsAgo: Type.Union([Type.Integer(), Type.Null()], {
          description:
            'Milliseconds since the upstream last said anything (a change, a copy, or its heartbeat every 5 s); null: not since this relay started',
        }),
        problem: Type.Optional(Type.String({ description: 'Only while the upstream cannot be followed: why' })),
        primary: Type.Optional(
          Type.Object(
            {
              url: Type.String({ description: 'The base URL of the primary, as the relay above knows it: where changes go' }),
              connected: Type.Boolean({
                description: 'The relays above follow the primary now, as the relay above last reported (with its heartbeat, every 5 s)',
              }),
              lastHeardMsAgo: Type.Union([Type.Integer(), Type.Null()], {
                description:
                  "Milliseconds since the primary last said anything to the chain (by the relay above's clock); null: not since it started",
              }),
              problem: Type.Optional(
                Type.String({ description: 'Only while the primary cannot be followed: why, as the relay above says' }),
              ),
            },
            { description: "Only on a relay whose upstream is itself a relay: the primary's reachability as that relay reports it" },
          ),
        ),
      },
      { description: 'Only on a relay (FLAGWIRE_UPSTREAM_URL): not ready until it holds a copy of its upstream' },
    ),
  ),
  detail: Type.Optional(
    Type.String({
      description:
        "Only when not ready: why, for the operator (shutting down, the data file, the eval workers, this node's copy of PostgreSQL, or a relay that holds no copy yet)",
    }),
  ),
});
export type ReadinessBody = Static<typeof ReadinessBody>;

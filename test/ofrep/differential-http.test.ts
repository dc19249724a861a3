// Differential test over HTTP (issue 25, item 4): generated flagd definitions (the arbitraries of the
// in-process test, test/targeting) are imported into a project as `flagwire flags import` imports them,
// and every generated context is asked of the running server's OFREP route and of @openfeature/flagd-core
// in this process. Value, variant, reason and error code must agree, fractional bucketing included.
// A definition the import refuses is not asked (the in-process test checks that flagd-core cannot load
// it either). Metadata is compared on every success (an OFREP error carries none); ours adds the flag's
// id and name, which are left out of the comparison.
import { kOperator } from '../../src/actor/audit-actor.js';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import { FlagwireError } from '../../src/errors.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { caseArb, type GeneratedCase } from '../targeting/definition-arbitraries.js';
import { FlagdCoreOracle } from '../targeting/flagd-core-oracle.js';

const kRuns = Number(process.env.TARGETING_HTTP_DIFF_RUNS ?? 150);
const { server, world } = await startWorldServer(t);
const project = world.ids.single;

interface Compared {
  value: unknown;
  variant: unknown;
  reason: unknown;
  errorCode: unknown;
  /** Absent from an error. */
  metadata?: unknown;
}

/** Our answer over HTTP in the oracle's terms: a 400 GENERAL is flagd-core's ERROR GENERAL. */
async function ofrep(key: string, context: Record<string, unknown>): Promise<Compared> {
  const r = await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${encodeURIComponent(key)}`, {
    body: { context },
    headers: { 'X-Flagwire-Project': project },
  });
  if (r.status === 200) {
    const { id: _id, name: _name, ...metadata } = r.json.metadata;
    return { value: r.json.value, variant: r.json.variant, reason: r.json.reason, errorCode: undefined, metadata };
  }
  if (r.status === 400 && r.json.errorCode === 'GENERAL')
    return { value: undefined, variant: undefined, reason: 'ERROR', errorCode: 'GENERAL' };
  throw new Error(`${key} ${JSON.stringify(context)}: ${r.status} ${r.text}`);
}

/**
 * A context as it reaches the server: JSON (no undefined, no objects without a prototype), and
 * targetingKey a string when present (OFREP's schema; a provider sends it so).
 */
function ofrepContext(context: Record<string, unknown>): Record<string, unknown> {
  const { targetingKey, ...rest } = JSON.parse(JSON.stringify(context)) as Record<string, unknown>;
  return typeof targetingKey === 'string' ? { targetingKey, ...rest } : rest;
}

/** flagd-core's metadata less `id` and `name`, which Flagwire's own answer sets. */
function withoutIdName(metadata: unknown): unknown {
  const { id: _id, name: _name, ...rest } = (metadata ?? {}) as Record<string, unknown>;
  return rest;
}

const tally = { definitions: 0, refused: 0, evaluations: 0, byReason: {} as Record<string, number> };

async function check(c: GeneratedCase): Promise<void> {
  tally.definitions++;
  try {
    // As a file is read: JSON text.
    world.run('flagsImport', { principal: kOperator, projectId: project, document: JSON.stringify(c.document), env: null });
  } catch (err) {
    if (!(err instanceof FlagwireError) || err.code !== 'INVALID_REQUEST') throw err;
    tally.refused++;
    return;
  }
  const oracle = new FlagdCoreOracle();
  oracle.load(JSON.parse(JSON.stringify(c.document)));
  for (const raw of c.contexts) {
    const context = ofrepContext(raw);
    // $flagd.timestamp is the server's clock: flagd-core is asked at the seconds before and after.
    const before = oracle.resolve(c.key, c.type, context, Date.now());
    const actual = await ofrep(c.key, context);
    const after = oracle.resolve(c.key, c.type, context, Date.now());
    tally.evaluations++;
    const label = actual.errorCode === undefined ? String(actual.reason) : String(actual.errorCode);
    tally.byReason[label] = (tally.byReason[label] ?? 0) + 1;
    const same = (expected: typeof before) =>
      isDeepStrictEqual(actual, {
        value: expected.value,
        variant: expected.variant,
        reason: expected.reason,
        errorCode: expected.errorCode,
        ...(expected.errorCode === undefined ? { metadata: withoutIdName(expected.flagMetadata) } : {}),
      });
    if (!same(before) && !same(after)) {
      throw new Error(
        `${JSON.stringify(c.document)} context ${JSON.stringify(context)}: ours ${JSON.stringify(actual)}, flagd-core ${JSON.stringify(after)}`,
      );
    }
  }
}

t.test(`OFREP over HTTP answers as flagd-core on ${kRuns} generated definitions`, async (t) => {
  await fc.assert(fc.asyncProperty(caseArb, check), { numRuns: kRuns });
  t.comment(
    `${tally.definitions} definitions (${tally.refused} refused), ${tally.evaluations} evaluations: ${JSON.stringify(tally.byReason)}`,
  );
  t.ok(tally.evaluations > kRuns, 'the generated cases were evaluated');
  for (const reason of ['TARGETING_MATCH', 'STATIC', 'DEFAULT', 'DISABLED', 'GENERAL'])
    t.ok((tally.byReason[reason] ?? 0) > 0, `some answers were ${reason}`);
});

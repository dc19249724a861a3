// Differential test: our parser, compiler and evaluator against @openfeature/flagd-core, in process, on
// generated definitions (every supported operator, nested) and contexts. Each evaluation must give the
// same value, variant, reason, error code and flag metadata, fractional bucketing included. A definition
// we refuse must be one flagd-core cannot load either: its flag answers PARSE_ERROR there.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import { compileFlagSet } from '../../src/targeting/compiled-flag.js';
import { evaluateInSet } from '../../src/targeting/evaluate.js';
import { parseFlagDefinition } from '../../src/targeting/parse.js';
import { problemText } from '../../src/targeting/problems.js';
import { type GeneratedCase, caseArb } from './definition-arbitraries.js';
import { type Answer, FlagdCoreOracle } from './flagd-core-oracle.js';

// Sized so that this file takes a few seconds on a loaded 2-core machine (see the figures it prints).
const kRuns = Number(process.env.TARGETING_DIFF_RUNS ?? 1500);
const kNowMs = Date.UTC(2026, 10, 23, 12, 0, 0, 500);

interface Tally {
  definitions: number;
  refused: number;
  evaluations: number;
  byReason: Record<string, number>;
}

function ours(set: ReturnType<typeof compileFlagSet>, c: GeneratedCase, i: number): Answer {
  const r = evaluateInSet(set, c.key, c.askedTypes[i]!, c.contexts[i]!, Math.floor(kNowMs / 1000));
  return { value: r.value, variant: r.variant, reason: r.reason, errorCode: r.errorCode, flagMetadata: r.flagMetadata };
}

function check(c: GeneratedCase, tally: Tally): void {
  tally.definitions++;
  const oracle = new FlagdCoreOracle();
  const parsed = parseFlagDefinition(c.document);
  if (!parsed.ok) {
    tally.refused++;
    // Refused: flagd-core loads the document but the flag fails to build (PARSE_ERROR), once enabled.
    const flags = c.document.flags as Record<string, Record<string, unknown>>;
    const enabled = { ...c.document, flags: { [c.key]: { ...flags[c.key], state: 'ENABLED' } } };
    oracle.load(enabled);
    const theirs = oracle.resolve(c.key, c.type, c.contexts[0]!, kNowMs);
    if (theirs.errorCode !== 'PARSE_ERROR') {
      throw new Error(`refused (${parsed.problems.map(problemText).join('; ')}) but flagd-core answers ${JSON.stringify(theirs)}`);
    }
    return;
  }
  oracle.load(c.document);
  const set = compileFlagSet(parsed.definition);
  for (let i = 0; i < c.contexts.length; i++) {
    const expected = oracle.resolve(c.key, c.askedTypes[i]!, c.contexts[i]!, kNowMs);
    const actual = ours(set, c, i);
    tally.evaluations++;
    tally.byReason[actual.errorCode ?? actual.reason] = (tally.byReason[actual.errorCode ?? actual.reason] ?? 0) + 1;
    if (!isDeepStrictEqual(actual, expected)) {
      throw new Error(
        `context ${JSON.stringify(c.contexts[i])} asked ${c.askedTypes[i]}: ours ${JSON.stringify(actual)}, flagd-core ${JSON.stringify(expected)}`,
      );
    }
  }
}

/** As JSON gives them (fast-check makes some objects without a prototype, which no JSON body has). */
function asJson(c: GeneratedCase): GeneratedCase {
  return JSON.parse(JSON.stringify(c)) as GeneratedCase;
}

t.test('generated definitions and contexts: same answers as flagd-core', async (t) => {
  const tally: Tally = { definitions: 0, refused: 0, evaluations: 0, byReason: {} };
  const started = process.hrtime.bigint();
  fc.assert(
    fc.property(caseArb, (c) => check(asJson(c), tally)),
    { numRuns: kRuns, seed: process.env.TARGETING_DIFF_SEED === undefined ? undefined : Number(process.env.TARGETING_DIFF_SEED) },
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  t.comment(
    `${tally.definitions} definitions (${tally.refused} refused, as flagd-core fails them), ${tally.evaluations} evaluations in ${ms.toFixed(0)} ms`,
  );
  t.comment(`answers: ${JSON.stringify(tally.byReason)}`);
  // Every kind of answer was exercised, not only the easy ones.
  for (const kind of ['TARGETING_MATCH', 'DEFAULT', 'STATIC', 'DISABLED', 'GENERAL', 'TYPE_MISMATCH'])
    t.ok(tally.byReason[kind]! > 0, kind);
  t.ok(tally.refused > 0, 'some definitions refused');
});

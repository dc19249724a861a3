// flagd-core (the OpenFeature project's own TypeScript evaluator) as the oracle of the differential
// tests: one definition loaded, one flag resolved at a fixed time, the answer in our Resolution's terms.
import { FlagdCore } from '@openfeature/flagd-core';
import { compileFlagSet } from '../../src/targeting/compiled-flag.js';
import type { FlagValueType } from '../../src/targeting/definition.js';
import { evaluateInSet } from '../../src/targeting/evaluate.js';
import { parseFlagDefinition } from '../../src/targeting/parse.js';
import { problemText } from '../../src/targeting/problems.js';

const kQuiet = { error() {}, warn() {}, info() {}, debug() {} };

/** What both evaluators are compared on. `value` undefined: the caller's default was returned. */
export interface Answer {
  value: unknown;
  variant: string | undefined;
  reason: string;
  errorCode: string | undefined;
  flagMetadata: unknown;
}

/** A default value per type that no generated variant has: flagd-core returns it where we return undefined. */
export const kCallerDefaults: Readonly<Record<FlagValueType, unknown>> = {
  boolean: false,
  string: '\u0000caller-default',
  number: -7777.5,
  object: { callerDefault: true },
};

export class FlagdCoreOracle {
  private readonly core = new FlagdCore(undefined, kQuiet);

  /** Loads a document; throws as flagd-core does on a document it refuses whole. */
  load(document: unknown): void {
    this.core.setConfigurations(JSON.stringify(document));
  }

  /** Resolves `key` as an OpenFeature SDK would ask for `type`, with Date.now held at `nowMs`. */
  resolve(key: string, type: FlagValueType, context: Record<string, unknown>, nowMs: number): Answer {
    const realNow = Date.now;
    Date.now = () => nowMs;
    try {
      const fallback = kCallerDefaults[type];
      const r = this.core.resolve(type, key, fallback as any, context as any);
      const usedDefault = r.value === fallback && r.variant === undefined;
      return {
        value: usedDefault ? undefined : r.value,
        variant: r.variant,
        reason: r.reason!,
        errorCode: r.errorCode,
        flagMetadata: r.flagMetadata,
      };
    } finally {
      Date.now = realNow;
    }
  }
}

/** Our answer for `key` of `document` (which must parse), in the oracle's terms. */
export function ourAnswer(document: unknown, key: string, type: FlagValueType, context: Record<string, unknown>, nowMs: number): Answer {
  const parsed = parseFlagDefinition(document);
  if (!parsed.ok) throw new Error(parsed.problems.map(problemText).join('; '));
  const r = evaluateInSet(compileFlagSet(parsed.definition), key, type, context, Math.floor(nowMs / 1000));
  return { value: r.value, variant: r.variant, reason: r.reason, errorCode: r.errorCode, flagMetadata: r.flagMetadata };
}

/** Both answers, for tests that pin a documented example and check flagd-core agrees. */
export function bothAnswers(document: unknown, key: string, type: FlagValueType, context: Record<string, unknown>, nowMs = Date.now()) {
  const oracle = new FlagdCoreOracle();
  oracle.load(document);
  return { ours: ourAnswer(document, key, type, context, nowMs), theirs: oracle.resolve(key, type, context, nowMs) };
}

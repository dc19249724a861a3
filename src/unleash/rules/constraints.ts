// Unleash's constraints, compiled once per flag version into predicates, each answering as Unleash's
// client specification (6.1) and its Node SDK (unleash-client 6.12) answer:
//
//   IN, NOT_IN         the context value (absent: no match) is one of the values, compared exactly
//   STR_CONTAINS,      text operators; caseInsensitive lowers both sides; an absent value is no match
//   STR_STARTS_WITH, STR_ENDS_WITH
//   NUM_EQ/GT/GTE/LT/LTE  Number(context value) against Number(value); NaN on either side is no match
//   DATE_AFTER/BEFORE  the context's currentTime (else the evaluation's time) against the value's date
//   SEMVER_EQ/GT/LT/GTE/LTE  a strict semantic version without a leading "v", against the value's version
//   REGEX              RE2 (re2js, as the Node SDK), found anywhere in the value; caseInsensitive: (?i);
//                      an expression RE2 rejects (lookaround, backreferences) is never met, as the SDK's
//                      caught compile error is (so inverted: always met), and never tried on a
//                      backtracking engine, whose time a crafted value could make exponential
//   IN_CIDR            the context value, an IPv4 or IPv6 address, is one of the ranges or in one
//   inverted           negates any of the above; an unknown operator is never met, inverted or not
//
// List values are cleaned as the SDKs clean them: empty ones dropped, the rest trimmed. Everything that
// depends only on the constraint (sets, lowered values, numbers, dates, versions, regular expressions,
// ranges) is made here; an evaluation reads the context and compares.
import type { Address4, Address6 } from 'ip-address';
import { ipAddress } from './ip-address.js';
import type * as Re2js from 're2js';
import { loadOnUse } from '../../load-on-use.js';
import { compareVersions, parseStrict, type SemVer } from '../../targeting/sem-ver.js';
import type { UnleashConstraint } from '../../model/unleash-model.js';

/** Unleash's context as a compiled model reads it; every value is text, as the SDKs turn them. */
export interface UnleashFields {
  /** The context's own field (userId, sessionId, remoteAddress, currentTime, ...), never a property. */
  unleashField(name: string): string | undefined;
  /** The SDKs' resolveContextValue: the context's own field of that name, else its property of that name. */
  unleashValue(name: string): string | undefined;
}

/** A compiled constraint: met by the context, at `nowMs` (the evaluation's time, for DATE_* without currentTime). */
export type Predicate = (ctx: UnleashFields, nowMs: number) => boolean;

const kNever: Predicate = () => false;

/**
 * re2js, loaded when a REGEX constraint is first compiled (src/load-on-use.ts): its load costs start-up
 * CPU in every thread that imported it (a node's main, writer and evaluation threads, every command),
 * and few models hold a regular expression (issue 57, item 2).
 */
const re2js = loadOnUse<typeof Re2js>('re2js');

function cleaned(values: readonly string[] | undefined): string[] {
  return (values ?? []).filter((v) => v !== '').map((v) => v.trim());
}

/** Whether the SDKs take `text` as a version: node-semver's strict form, not written with a leading "v". */
export function contextVersion(text: string): SemVer | null {
  return text.startsWith('v') ? null : parseStrict(text);
}

/** `value` compiled for REGEX, or null when RE2 refuses it (the constraint is then never met). */
export function compileRegex(value: string, caseInsensitive: boolean): Re2js.RE2JS | null {
  try {
    const { RE2JS: re2 } = re2js();
    return re2.compile(value, caseInsensitive ? re2.CASE_INSENSITIVE : 0);
  } catch {
    return null;
  }
}

function operatorPredicate(c: UnleashConstraint): Predicate | null {
  const field = c.contextName;
  switch (c.operator) {
    case 'IN':
    case 'NOT_IN': {
      const values = new Set(cleaned(c.values));
      const isIn: Predicate = (ctx) => {
        const v = ctx.unleashValue(field);
        return v !== undefined && values.has(v);
      };
      return c.operator === 'IN' ? isIn : (ctx, now) => !isIn(ctx, now);
    }
    case 'STR_CONTAINS':
    case 'STR_STARTS_WITH':
    case 'STR_ENDS_WITH': {
      const lower = c.caseInsensitive === true;
      const values = cleaned(c.values).map((v) => (lower ? v.toLocaleLowerCase() : v));
      const test =
        c.operator === 'STR_CONTAINS'
          ? (v: string, x: string) => v.includes(x)
          : c.operator === 'STR_STARTS_WITH'
            ? (v: string, x: string) => v.startsWith(x)
            : (v: string, x: string) => v.endsWith(x);
      return (ctx) => {
        let v = ctx.unleashValue(field);
        if (v === undefined) return false;
        if (lower) v = v.toLocaleLowerCase();
        for (let i = 0; i < values.length; i++) if (test(v, values[i]!)) return true;
        return false;
      };
    }
    case 'NUM_EQ':
    case 'NUM_GT':
    case 'NUM_GTE':
    case 'NUM_LT':
    case 'NUM_LTE': {
      const x = Number(c.value);
      if (Number.isNaN(x)) return kNever;
      const op = c.operator;
      return (ctx) => {
        const raw = ctx.unleashValue(field);
        const v = raw === undefined ? Number.NaN : Number(raw);
        if (Number.isNaN(v)) return false;
        return op === 'NUM_EQ' ? v === x : op === 'NUM_GT' ? v > x : op === 'NUM_GTE' ? v >= x : op === 'NUM_LT' ? v < x : v <= x;
      };
    }
    case 'DATE_AFTER':
    case 'DATE_BEFORE': {
      const at = Date.parse(c.value ?? '');
      const after = c.operator === 'DATE_AFTER';
      return (ctx, now) => {
        const given = ctx.unleashField('currentTime');
        const time = given === undefined ? now : Date.parse(given);
        return after ? time > at : time < at;
      };
    }
    case 'SEMVER_EQ':
    case 'SEMVER_GT':
    case 'SEMVER_LT':
    case 'SEMVER_GTE':
    case 'SEMVER_LTE': {
      const x = parseStrict(c.value ?? '');
      if (x === null) return kNever;
      const op = c.operator;
      return (ctx) => {
        const raw = ctx.unleashValue(field);
        if (raw === undefined || raw === '') return false;
        const v = contextVersion(raw);
        if (v === null) return false;
        const order = compareVersions(v, x);
        return op === 'SEMVER_EQ'
          ? order === 0
          : op === 'SEMVER_GT'
            ? order > 0
            : op === 'SEMVER_LT'
              ? order < 0
              : op === 'SEMVER_GTE'
                ? order >= 0
                : order <= 0;
      };
    }
    case 'REGEX': {
      const regex = compileRegex(c.value ?? '', c.caseInsensitive === true);
      if (regex === null) return kNever;
      return (ctx) => {
        const v = ctx.unleashValue(field);
        return v !== undefined && regex.matcher(v).find();
      };
    }
    case 'IN_CIDR': {
      const { Address4, Address6 } = ipAddress();
      const ranges = cleaned(c.values);
      const v4 = ranges.filter((r) => Address4.isValid(r)).map((r) => new Address4(r));
      const v6 = ranges.filter((r) => Address6.isValid(r)).map((r) => new Address6(r));
      return (ctx) => {
        const v = ctx.unleashValue(field);
        if (v === undefined) return false;
        if (Address4.isValid(v)) return inRanges(new Address4(v), v4);
        if (Address6.isValid(v)) return inRanges(new Address6(v), v6);
        return false;
      };
    }
    default:
      return null;
  }
}

function inRanges<A extends Address4 | Address6>(address: A, ranges: readonly A[]): boolean {
  const form = address.correctForm();
  for (const range of ranges) if (form === range.correctForm() || address.isInSubnet(range)) return true;
  return false;
}

/** One constraint, compiled. */
export function compileConstraint(constraint: UnleashConstraint): Predicate {
  const met = operatorPredicate(constraint);
  if (met === null) return kNever;
  return constraint.inverted === true ? (ctx, now) => !met(ctx, now) : met;
}

/** Constraints that all must be met (none: always met). A missing segment's place holds null: never met. */
export function compileConstraints(constraints: readonly (UnleashConstraint | null)[]): Predicate | null {
  if (constraints.length === 0) return null;
  if (constraints.includes(null)) return kNever;
  const predicates = (constraints as UnleashConstraint[]).map(compileConstraint);
  if (predicates.length === 1) return predicates[0]!;
  return (ctx, now) => {
    for (let i = 0; i < predicates.length; i++) if (!predicates[i]!(ctx, now)) return false;
    return true;
  };
}

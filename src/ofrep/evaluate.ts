// The OFREP front door of the eval workers: the same engine (compiled flags, caches, freshness rule),
// the same rules and bucketing as GET /v1/flags/{id}, answering in OFREP's shapes. One engine, two
// front doors: only the request parsing (a JSON body instead of a query) and the bodies differ.
//
//   POST /ofrep/v1/evaluate/flags/{key}   key = flag id; X-Flagwire-Project (optional) scopes it
//   POST /ofrep/v1/evaluate/flags         X-Flagwire-Project (required) picks the project; every flag
//
// Reasons come from which rule decided (decideState in evaluate.ts). A split that would need a random
// roll (no targetingKey and no cohort) is TARGETING_KEY_MISSING instead: OFREP clients cache answers
// (the bulk route is built for it), and a roll cached as if it were sticky would be wrong, and would
// change the bulk ETag on every request.
import type { EvalEngine, FlagEntry, ProjectEntry } from '../eval/engine.js';
import { kAudiencePlanDetail } from '../eval/bodies.js';
import {
  blockedByPlan, decideState, decidedBy, kDecidedAudience, kDecidedCohort, kDecidedDisabled, kDecidedRoll, kDecidedSplit, kDecidedStatic,
  type CompiledState, type Decision,
} from '../eval/evaluate.js';
import { murmur3x86_32 } from '../eval/murmur3.js';
import type { ResultWriter } from '../eval/protocol.js';
import { OfrepContext } from './context.js';
import type { OfrepErrorCode, OfrepReason } from './schemas.js';

const kReasons: Record<number, OfrepReason> = {
  [kDecidedDisabled]: 'DISABLED',
  [kDecidedCohort]: 'TARGETING_MATCH',
  [kDecidedAudience]: 'TARGETING_MATCH',
  [kDecidedStatic]: 'STATIC',
  [kDecidedSplit]: 'SPLIT',
};
// Slots of FlagEntry.ofrepBodies: 0..11 are decisions (reason << 1 | value); then two per-flag failures.
const kSlotAudiencePlan = 12;
const kSlotKeyMissing = 13;
const kSlots = 14;

const kKeyMissingDetails = 'This flag turns on for a percentage of callers, which needs a sticky key: add "targetingKey" '
  + '(or "cohort") to the context.';
const kProjectHeader = 'X-Flagwire-Project';

const kBulkOpen = Buffer.from('{"flags":[');
const kBulkClose = Buffer.from(']}');
const kComma = 0x2c;

/** `{"errorCode", "errorDetails"}` (bulk) or with `key` first (single flag), as bytes. */
export function ofrepFailureBody(key: string | null, code: OfrepErrorCode, details: string): Buffer {
  return Buffer.from(JSON.stringify(key === null ? { errorCode: code, errorDetails: details } : { key, errorCode: code, errorDetails: details }));
}

/** spec (OFREP): 500 generalErrorResponse. What every OFREP request of a failed batch gets. */
export const kOfrepInternalErrorBody = ofrepFailureBody(null, 'GENERAL', 'An unexpected error occurred while evaluating; it has been logged. Retry, and report it if it persists.');
/** The bounded evaluation queue is full or the server is stopping (503, Retry-After: 1). */
export const kOfrepOverloadedBody = ofrepFailureBody(null, 'GENERAL', 'The evaluation queue is full or the server is stopping; retry after a second.');
/** The process's request-body budget is spent (503, Retry-After: 1, connection closed): src/http/body.ts. */
export const kOfrepBusyBody = ofrepFailureBody(null, 'GENERAL', 'The server is buffering as many request bodies as it allows; the body was not read. Retry after a second.');

export class OfrepEvaluator {
  private readonly ctx = new OfrepContext();

  constructor(private readonly engine: EvalEngine) {}

  /** POST /ofrep/v1/evaluate/flags/{key}; `project` is the X-Flagwire-Project header ('' when absent). */
  evaluateFlag(rawKey: string, body: string, project: string, out: ResultWriter): void {
    const ctx = this.ctx;
    const entry = this.engine.lookupFlag(rawKey);
    const key = entry.found ? entry.id : rawKey;
    // Like the Evaluation API: a request that cannot be read is a 400 before the flag is looked up.
    if (!ctx.parse(body)) return out.put(400, ofrepFailureBody(key, ctx.errorCode, ctx.errorDetails));
    if (!entry.found || (project !== '' && entry.projectId !== project)) {
      const where = project !== '' ? ` in project "${project}"` : '';
      return out.put(404, ofrepFailureBody(key, 'FLAG_NOT_FOUND', `No flag with id "${key}" exists${where}. OFREP keys are flag ids.`));
    }
    let state = entry.state;
    if (state === null) {
      // Group flag: the environment comes from the context.
      if (ctx.env === null) {
        return out.put(400, ofrepFailureBody(key, 'INVALID_CONTEXT', `This flag belongs to a multi-environment project: add "env" to the context (${entry.validEnvs}).`));
      }
      state = entry.envs!.get(ctx.env) ?? null;
      if (state === null) {
        return out.put(400, ofrepFailureBody(key, 'INVALID_CONTEXT', `Unknown environment "${ctx.env}" for this flag; ${entry.validEnvs}.`));
      }
    }
    if (blockedByPlan(state, this.engine.audiencesAllowed(entry.org))) return out.put(400, flagBody(entry, kSlotAudiencePlan));
    const decision = decideState(entry.id, state, ctx, noRoll);
    if (decidedBy(decision) === kDecidedRoll) return out.put(400, flagBody(entry, kSlotKeyMissing));
    out.put(200, flagBody(entry, decision));
  }

  /**
   * POST /ofrep/v1/evaluate/flags. `ifNoneMatch` is the request's If-None-Match header ('' when absent).
   * The ETag is the project's configuration tag and a 64-bit hash of the answer's exact bytes, so it
   * changes when any flag, audience or the plan changes, and whenever this context's results differ.
   */
  evaluateBulk(project: string, body: string, ifNoneMatch: string, out: ResultWriter): void {
    const ctx = this.ctx;
    if (project === '') {
      return out.put(400, ofrepFailureBody(null, 'GENERAL', `Send the project id in the ${kProjectHeader} header: the bulk route evaluates every flag of one project.`));
    }
    if (!ctx.parse(body)) return out.put(400, ofrepFailureBody(null, ctx.errorCode, ctx.errorDetails));
    const entry = this.engine.lookupProject(project);
    if (!entry.found) {
      return out.put(400, ofrepFailureBody(null, 'GENERAL', `No project with id "${project}" exists (from the ${kProjectHeader} header).`));
    }
    let env: string | null = null;
    if (entry.multi) {
      env = ctx.env;
      if (env === null) return out.put(400, ofrepFailureBody(null, 'INVALID_CONTEXT', `This is a multi-environment project: add "env" to the context (${entry.validEnvs}).`));
      if (!entry.envs.has(env)) return out.put(400, ofrepFailureBody(null, 'INVALID_CONTEXT', `Unknown environment "${env}" for this project; ${entry.validEnvs}.`));
    }
    this.writeBulk(entry, env, ifNoneMatch, out);
  }

  private writeBulk(project: ProjectEntry, env: string | null, ifNoneMatch: string, out: ResultWriter): void {
    const ctx = this.ctx;
    const audiencesAllowed = this.engine.audiencesAllowed(project.org);
    out.open();
    out.push(kBulkOpen);
    const flags = project.flags;
    for (let i = 0; i < flags.length; i++) {
      if (i > 0) out.pushByte(kComma);
      const flag = flags[i]!;
      const state: CompiledState = flag.state ?? flag.envs!.get(env!)!;
      if (blockedByPlan(state, audiencesAllowed)) {
        out.push(flagBody(flag, kSlotAudiencePlan));
        continue;
      }
      const decision = decideState(flag.id, state, ctx, noRoll);
      out.push(flagBody(flag, decidedBy(decision) === kDecidedRoll ? kSlotKeyMissing : decision));
    }
    out.push(kBulkClose);
    const tag = etag(project.configTag, out.openBody());
    if (matchesIfNoneMatch(ifNoneMatch, tag)) {
      out.rewind();
      out.push(tag);
      out.close(304, tag.length);
      return;
    }
    out.push(tag);
    out.close(200, tag.length);
  }
}

/** The roll is never used: a decision that would roll is answered TARGETING_KEY_MISSING. */
function noRoll(): number {
  return 0;
}

/** A flag version's OFREP body for a decision or failure slot, built on first use and kept with the version. */
function flagBody(flag: FlagEntry, slot: Decision): Buffer {
  const bodies = (flag.ofrepBodies ??= new Array<Buffer | undefined>(kSlots));
  let body = bodies[slot];
  if (body === undefined) {
    if (slot === kSlotAudiencePlan) body = ofrepFailureBody(flag.id, 'GENERAL', kAudiencePlanDetail);
    else if (slot === kSlotKeyMissing) body = ofrepFailureBody(flag.id, 'TARGETING_KEY_MISSING', kKeyMissingDetails);
    else {
      const value = (slot & 1) === 1;
      body = Buffer.from(JSON.stringify({
        key: flag.id, value, reason: kReasons[decidedBy(slot)], variant: value ? 'on' : 'off', metadata: { name: flag.name },
      }));
    }
    bodies[slot] = body;
  }
  return body;
}

/** `"<config tag>-<64-bit hash of the body>"`: strong, since it names these exact bytes. */
export function etag(configTag: string, body: Uint8Array): Buffer {
  const a = murmur3x86_32(body, body.length, 0).toString(16).padStart(8, '0');
  const b = murmur3x86_32(body, body.length, 0x9747b28c).toString(16).padStart(8, '0');
  return Buffer.from(`"${configTag}-${a}${b}"`);
}

/** RFC 9110 If-None-Match: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored). */
export function matchesIfNoneMatch(header: string, tag: Uint8Array): boolean {
  if (header === '') return false;
  const wanted = Buffer.from(tag.buffer, tag.byteOffset, tag.byteLength).toString('latin1');
  for (const part of header.split(',')) {
    let candidate = part.trim();
    if (candidate === '*') return true;
    if (candidate.startsWith('W/')) candidate = candidate.slice(2);
    if (candidate === wanted) return true;
  }
  return false;
}

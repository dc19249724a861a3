// The OFREP evaluation route set of the eval workers: the same engine (compiled flags, caches, freshness rule),
// the same rules and bucketing as GET /v1/flags/{id}, answering in OFREP's shapes. One engine, two
// evaluation route sets: only the request parsing (a JSON body instead of a query) and the bodies differ.
//
//   POST /ofrep/v1/evaluate/flags/{key}   key = flag id, or flag name with X-Flagwire-Project (which
//                                         also scopes ids: another project's flag is not found)
//   POST /ofrep/v1/evaluate/flags         X-Flagwire-Project (required) picks the project; every flag,
//                                         under its id and under its name
//
// What each flag answers is decided in answer.ts (ofrepAnswer), which the Flagwire OpenFeature provider
// (src/provider) runs too; this file turns answers into bytes, cached per flag version.
import {
  type EvalEngine,
  type EvalState,
  type FlagEntry,
  kEnvMissing,
  kEnvUnknown,
  type ProjectEntry,
  projectEnv,
  stateInEnv,
  stateInProjectEnv,
} from '../evaluation/engine/engine.js';
import { kBatchTimedOutDetail } from '../evaluation/engine/bodies.js';
import { kAudiencePlanDetail } from '../evaluation/engine/evaluate.js';
import type { Decision } from '../evaluation/engine/evaluate.js';
import { etag, matchesIfNoneMatch } from '../http/entity-tags.js';
import { decodePathId } from '../http/path-id.js';
import { type DecidedEntries, ListPlans, listPlan, writeList } from '../evaluation/engine/list-plan.js';
import { kRevisionNotReachedDetail } from '../http/revisions.js';
import type { ResultWriter } from '../evaluation/engine/protocol.js';
import { OfrepContext } from './context.js';
import type { Resolution } from '../targeting/compiled-flag.js';
import type { OfrepErrorCode } from '../model/ofrep-schemas.js';
import { contextFreeAnswer, kKeyMissingDetails, kSlotAudiencePlan, kSlotKeyMissing, kSlots, ofrepAnswer } from './answer.js';
import {
  bulkTailText,
  contextTagText,
  decisionText,
  kMissingProjectDetails,
  notFoundDetails,
  ofrepFailureText,
  ruleErrorText,
  unknownProjectDetails,
  variantText,
} from './answer-text.js';

const kBulkOpen = Buffer.from('{"flags":[');
/** Past this many cached `eventStreams` tails (one per project and environment asked), start over. */
const kMaxTails = 10_000;
const kCommaBytes = Buffer.from(',');
/** Per compiled project (dropped with it when the store moves): whether one of its rules reads the clock. */
const kReadsClock = new WeakMap<ProjectEntry, boolean>();
/**
 * Bulk answers as written for every context (list-plan.ts), by whether the project's plan allows audiences
 * (1) or not (0): each flag's two entries where no context changes them.
 */
const kBulkPlans = new ListPlans<ProjectEntry>(2, (project, kind, env) =>
  listPlan(project.flags.length, (i) => {
    const flag = project.flags[i]!;
    const state = stateInProjectEnv(flag, env)!;
    const answer = contextFreeAnswer(state, kind === 1);
    if (answer === null) return null;
    if (typeof answer === 'number') return flagPair(flag, state, answer);
    return answer.errorCode === undefined ? variantPair(flag, state, answer) : null;
  }),
);

/** ofrepFailureText (answer-text.ts) as bytes. */
export function ofrepFailureBody(key: string | null, code: OfrepErrorCode, details: string, experiment: string | null = null): Buffer {
  return Buffer.from(ofrepFailureText(key, code, details, experiment));
}

/** spec (OFREP): 500 generalErrorResponse. What every OFREP request of a failed batch gets. */
export const kOfrepInternalErrorBody = ofrepFailureBody(
  null,
  'GENERAL',
  'An unexpected error occurred while evaluating; it has been logged. Retry, and report it if it persists.',
);
/** The bounded evaluation queue is full or the server is stopping (503, Retry-After: 1). */
export const kOfrepOverloadedBody = ofrepFailureBody(
  null,
  'GENERAL',
  'The evaluation queue is full or the server is stopping; retry after a second.',
);
/** The request's batch did not come back within the batcher's timeout (503, Retry-After: 1): batcher.ts. */
export const kOfrepBatchTimedOutBody = ofrepFailureBody(null, 'GENERAL', kBatchTimedOutDetail);
/** This node's copy did not reach the Flagwire-Min-Revision asked for within the wait (503, Retry-After: 1): src/http/revisions.ts. */
export const kOfrepRevisionNotReachedBody = ofrepFailureBody(null, 'GENERAL', kRevisionNotReachedDetail);
/** The process's request-body budget is spent (503, Retry-After: 1, connection closed): src/http/body.ts. */
export const kOfrepBusyBody = ofrepFailureBody(
  null,
  'GENERAL',
  'The server is buffering as many request bodies as it allows; the body was not read. Retry after a second.',
);

/** The bulk route without X-Flagwire-Project (answer-text.ts kMissingProjectDetails). */
export const kMissingProjectBody = ofrepFailureBody(null, 'GENERAL', kMissingProjectDetails);

export class OfrepEvaluator {
  private readonly ctx = new OfrepContext();
  /** The bulk answer's end (`],"eventStreams":[…]}`) per project and environment. */
  private readonly tails = new Map<string, Buffer>();
  /** The bulk answer being written (writeFlags): what decidedEntries reads, and whether a rule erred. */
  private listFlags: readonly FlagEntry[] = [];
  private listEnv: string | null = null;
  private listAllowed = false;
  private erred = false;
  private readonly listEntries: DecidedEntries = { decided: (i) => this.decidedEntries(i) };

  constructor(private readonly engine: EvalEngine) {}

  /**
   * POST /ofrep/v1/evaluate/flags/{key}; `project` is the X-Flagwire-Project header ('' when absent).
   * The key is a flag id, or with the header a flag name of that project (docs/decisions.md: OFREP, keys); the
   * answer's `key` is the key as asked. A flag of another project is not found, with the same bytes as a
   * key nothing has.
   */
  evaluateFlag(rawKey: string, body: string, project: string, out: ResultWriter): void {
    const ctx = this.ctx;
    const key = decodePathId(rawKey);
    // Like the Evaluation API: a request that cannot be read is a 400 before the flag is looked up.
    if (!ctx.parse(body)) return out.put(400, ofrepFailureBody(key, ctx.errorCode, ctx.errorDetails));
    let entry: FlagEntry | undefined;
    let byName = false;
    const byId = this.engine.lookupFlag(rawKey);
    if (byId.found && (project === '' || byId.projectId === project)) entry = byId;
    else if (project !== '') {
      entry = this.engine.lookupFlagByName(project, rawKey);
      byName = true;
    }
    if (entry === undefined) return out.put(404, ofrepFailureBody(key, 'FLAG_NOT_FOUND', notFoundDetails(key, project)));
    // A group flag: the environment comes from the context.
    const state = stateInEnv(entry, ctx.env);
    if (state === kEnvMissing) {
      return out.put(
        400,
        ofrepFailureBody(
          key,
          'INVALID_CONTEXT',
          `This flag belongs to a multi-environment project: add "env" to the context (${entry.validEnvs}).`,
        ),
      );
    }
    if (state === kEnvUnknown) {
      return out.put(400, ofrepFailureBody(key, 'INVALID_CONTEXT', `Unknown environment "${ctx.env}" for this flag; ${entry.validEnvs}.`));
    }
    this.engine.count(state);
    const answer = ofrepAnswer(state, ctx, this.engine.audiencesAllowed(entry.org), this.engine.batchTime);
    if (typeof answer === 'number') return out.put(answer < kSlotAudiencePlan ? 200 : 400, flagBody(entry, state, answer, byName));
    out.put(answer.errorCode === undefined ? 200 : 400, variantBody(entry, state, answer, byName));
  }

  /**
   * POST /ofrep/v1/evaluate/flags. `ifNoneMatch` is the request's If-None-Match header ('' when absent).
   * The ETag is `"<configuration tag>-<64-bit hash>"` (docs/decisions.md: OFREP, ETag): the hash is of what
   * decides the answer (the request's body as sent, the project and whether its plan allows audiences now)
   * where those alone decide it, so a 304 is answered before any flag is evaluated; else (a rule that reads
   * the clock, or a rule's error, which a batch's spent work budget can cause) of the answer's bytes.
   */
  evaluateBulk(project: string, body: string, ifNoneMatch: string, out: ResultWriter): void {
    const ctx = this.ctx;
    if (project === '') {
      return out.put(400, kMissingProjectBody);
    }
    if (!ctx.parse(body)) return out.put(400, ofrepFailureBody(null, ctx.errorCode, ctx.errorDetails));
    const entry = this.engine.lookupProject(project);
    if (!entry.found) {
      return out.put(400, ofrepFailureBody(null, 'GENERAL', unknownProjectDetails(project)));
    }
    const env = projectEnv(entry, ctx.env);
    if (env === kEnvMissing) {
      return out.put(
        400,
        ofrepFailureBody(null, 'INVALID_CONTEXT', `This is a multi-environment project: add "env" to the context (${entry.validEnvs}).`),
      );
    }
    if (env === kEnvUnknown) {
      return out.put(
        400,
        ofrepFailureBody(null, 'INVALID_CONTEXT', `Unknown environment "${ctx.env}" for this project; ${entry.validEnvs}.`),
      );
    }
    this.engine.countProject(entry, env);
    const audiencesAllowed = this.engine.audiencesAllowed(entry.org);
    const tag = projectReadsClock(entry) ? null : contextTag(entry, body, audiencesAllowed);
    // What a client that holds this context's answer sends back: answered before anything is evaluated.
    if (tag !== null && matchesIfNoneMatch(ifNoneMatch, tag)) {
      out.open();
      out.push(tag);
      out.close(304, tag.length);
      return;
    }
    out.open();
    const erred = this.writeFlags(entry, env, audiencesAllowed, out);
    out.push(this.bulkTail(entry.id, env));
    if (tag !== null && !erred) {
      out.push(tag);
      out.close(200, tag.length);
      return;
    }
    // The answer's bytes decide its tag: a context's answer may differ from one request to the next.
    out.closeTagged(etag(entry.configTag, out.openBody()), ifNoneMatch);
  }

  /**
   * `{"flags":[` and every flag's entries (each under its id, then its name), after `out.open()`. True when
   * a flag's rule answered an error: its work limit may have been its batch's (src/targeting/work-budget.ts).
   * The entries no context changes are copied as the project's bulk plan holds them: a project's kill
   * switches and finished rollouts cost a copy, not an evaluation each.
   */
  private writeFlags(project: ProjectEntry, env: string | null, audiencesAllowed: boolean, out: ResultWriter): boolean {
    out.push(kBulkOpen);
    this.listFlags = project.flags;
    this.listEnv = env;
    this.listAllowed = audiencesAllowed;
    this.erred = false;
    writeList(out, kBulkPlans.of(project, audiencesAllowed ? 1 : 0, env), this.listEntries);
    return this.erred;
  }

  /** Flag `i`'s two entries for this request, as its bulk plan leaves them to it (writeFlags). */
  private decidedEntries(i: number): Buffer {
    const flag = this.listFlags[i]!;
    const state = stateInProjectEnv(flag, this.listEnv)!;
    const answer = ofrepAnswer(state, this.ctx, this.listAllowed, this.engine.batchTime);
    // Each flag twice, under its id and under its name: the web provider looks flags up by the key
    // the application asks for, and either key must work (docs/decisions.md: OFREP, keys). Both
    // entries are one cached Buffer per answer: one copy per flag.
    if (typeof answer === 'number') return flagPair(flag, state, answer);
    if (answer.errorCode === undefined) return variantPair(flag, state, answer);
    // A rule's error names its cause, so its entries are made for this answer (rare: no cache to keep).
    this.erred = true;
    return Buffer.concat([variantBody(flag, state, answer, false), kCommaBytes, variantBody(flag, state, answer, true)]);
  }

  /**
   * `eventStreams` (open-feature/protocol ADR-0008): where a provider hears of changes instead of polling.
   * An endpoint without origin: the provider resolves it against its own baseUrl, so it works behind any
   * proxy or host name the provider reached us by.
   */
  private bulkTail(projectId: string, env: string | null): Buffer {
    const cacheKey = env === null ? projectId : `${projectId}\u0000${env}`;
    let tail = this.tails.get(cacheKey);
    if (tail === undefined) {
      tail = Buffer.from(bulkTailText(projectId, env));
      if (this.tails.size >= kMaxTails) this.tails.clear();
      this.tails.set(cacheKey, tail);
    }
    return tail;
  }
}

/**
 * The ETag of a project's bulk answer from what decides it, where that is all that does (no rule reads the
 * clock, none erred): the configuration tag (every flag, audience, fragment, environment and the plan), then
 * a hash of the request's body as sent (its context, env included), the project and whether its plan allows
 * audiences now (a trial that ends changes answers while nothing stored does). Two bodies of one context
 * written differently get different tags: a 200 where a 304 would do, never a stale 304.
 */
function contextTag(project: ProjectEntry, body: string, audiencesAllowed: boolean): Buffer {
  return etag(project.configTag, Buffer.from(contextTagText(project.id, body, audiencesAllowed)));
}

/** Whether a rule of one of the project's flags (any environment) may read `$flagd.timestamp`; once per compiled project. */
function projectReadsClock(project: ProjectEntry): boolean {
  let reads = kReadsClock.get(project);
  if (reads === undefined) {
    reads = false;
    for (const flag of project.flags) {
      if (flag.state?.variants?.readsClock) reads = true;
      if (flag.envs !== null) for (const state of flag.envs.values()) if (state.variants?.readsClock) reads = true;
    }
    kReadsClock.set(project, reads);
  }
  return reads;
}

/**
 * A flag version's OFREP body for a decision or failure slot, keyed by its id or by its name; built on
 * first use and kept with the version (slots 0..kSlots-1 by id, kSlots.. by name). A state with an
 * experiment keeps its own (they name it: src/evaluation/engine/engine.ts, ExperimentBodies).
 */
function flagBody(flag: FlagEntry, state: EvalState, slot: Decision, byName: boolean): Buffer {
  const holder = state.experimentBodies ?? flag;
  holder.ofrepBodies ??= new Array<Buffer | undefined>(2 * kSlots);
  const bodies = holder.ofrepBodies;
  const index = byName ? kSlots + slot : slot;
  let body = bodies[index];
  if (body === undefined) {
    const key = byName ? flag.name : flag.id;
    const experiment = state.experiment;
    if (slot === kSlotAudiencePlan) body = ofrepFailureBody(key, 'GENERAL', kAudiencePlanDetail, experiment);
    else if (slot === kSlotKeyMissing) body = ofrepFailureBody(key, 'TARGETING_KEY_MISSING', kKeyMissingDetails, experiment);
    else body = Buffer.from(decisionText(flag, key, slot, experiment));
    bodies[index] = body;
  }
  return body;
}

/** A flag version's two entries for a decision or failure slot, by id then by name, comma-separated (bulk). */
function flagPair(flag: FlagEntry, state: EvalState, slot: Decision): Buffer {
  const holder = state.experimentBodies ?? flag;
  holder.ofrepPairs ??= new Array<Buffer | undefined>(kSlots);
  let pair = holder.ofrepPairs[slot];
  if (pair === undefined) {
    pair = Buffer.concat([flagBody(flag, state, slot, false), kCommaBytes, flagBody(flag, state, slot, true)]);
    holder.ofrepPairs[slot] = pair;
  }
  return pair;
}

/** A variant state's two entries for a successful `answer`, by id then by name (bulk); kept with the version. */
function variantPair(flag: FlagEntry, state: EvalState, answer: Resolution): Buffer {
  flag.ofrepVariantPairs ??= new Map();
  let pair = flag.ofrepVariantPairs.get(answer);
  if (pair === undefined) {
    pair = Buffer.concat([variantBody(flag, state, answer, false), kCommaBytes, variantBody(flag, state, answer, true)]);
    flag.ofrepVariantPairs.set(answer, pair);
  }
  return pair;
}

/**
 * A variant state's OFREP body for `answer`, keyed by id or by name. A success carries the variant and
 * its value; where the caller's own default applies (DISABLED, DEFAULT without a default variant) it
 * has neither, as open-feature/protocol ADR-0006 says; a rule's error is GENERAL with flagd's message.
 * Kept with the version, but for errors (their message may name a variant the request computed). A state
 * with an experiment has its own answers (variants.ts), whose metadata already names it.
 */
function variantBody(flag: FlagEntry, state: EvalState, answer: Resolution, byName: boolean): Buffer {
  const key = byName ? flag.name : flag.id;
  if (answer.errorCode !== undefined) return Buffer.from(ruleErrorText(key, answer, state.experiment));
  flag.ofrepVariantBodies ??= [new Map(), new Map()];
  const bodies = flag.ofrepVariantBodies[byName ? 1 : 0];
  let body = bodies.get(answer);
  if (body === undefined) {
    body = Buffer.from(variantText(flag, key, answer));
    bodies.set(answer, body);
  }
  return body;
}

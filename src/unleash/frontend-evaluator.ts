// Worker side of Unleash's front-end API (hosted-routes.ts): the client key checked in the batch's
// snapshot (src/client-keys/access.ts), the context read (context.ts), each flag of the key's project
// environment evaluated by the worker's engine, as the Evaluation API evaluates it, and said as a toggle
// (frontend-answer.ts). Toggles no context changes (off, or on for everyone) are written as runs kept with
// the compiled project (kTogglePlans), not decided per request.
//
// The key decides the project and the environment (docs/decisions.md: Unleash's front-end API); the
// context's `environment` is not read. The ETag is a hash of the answer's bytes, as Unleash Edge's is: a
// poll whose answer is unchanged is a 304 (the flags are evaluated either way, since a roll or a rule that
// reads the clock may change the answer while nothing stored does).
import { identifyClientKey } from '../client-keys/access.js';
import { evalErrorBody } from '../evaluation/engine/bodies.js';
import {
  type EvalEngine,
  type FlagEntry,
  kEnvMissing,
  kEnvUnknown,
  type ProjectEntry,
  projectEnv,
  stateInEnv,
  stateInProjectEnv,
} from '../evaluation/engine/engine.js';
import type { ResultWriter, Route } from '../evaluation/engine/protocol.js';
import type { RouteEvaluator } from '../evaluation/engine/routes.js';
import { FlagwireError } from '../errors.js';
import { etag } from '../http/entity-tags.js';
import { decodePathId } from '../http/path-id.js';
import type { ClientKey } from '../client-keys/client-key.js';
import { UnleashContext } from './context.js';
import { contextFreeToggle, decideToggle, type ToggleDecision, toggleBody } from './frontend-answer.js';
import { type FrontendKind, kFrontendKinds } from './frontend-kinds.js';
import { type DecidedEntries, ListPlans, listPlan, writeList } from '../evaluation/engine/list-plan.js';

const kOpen = Buffer.from('{"toggles":[');
const kClose = Buffer.from(']}');
const kEmpty = Buffer.alloc(0);
/** The answer's form, in its ETag: a release that says an unchanged answer differently bumps it. */
const kTagForm = 'u1';
const kOff: ToggleDecision = Object.freeze({ enabled: false, answer: null });
/** Client keys kept at most (clientKey()): far more than one node's front ends use at once. */
const kMaxKeys = 10_000;
/** Per compiled project (dropped with it when the store moves): its flags by name, as Unleash Edge orders toggles. */
const kByName = new WeakMap<ProjectEntry, readonly FlagEntry[]>();
/**
 * Toggle lists as written for every context (list-plan.ts), by kind: whether the project's plan allows
 * audiences (2) or not (0), plus 1 for /all (a context-free toggle that is off is in no on-only list).
 */
const kTogglePlans = new ListPlans<ProjectEntry>(4, (project, kind, env) => {
  const flags = byName(project);
  const all = kind % 2 === 1;
  return listPlan(flags.length, (i) => {
    const state = stateInProjectEnv(flags[i]!, env);
    const decision = state === null ? kOff : contextFreeToggle(state, kind >= 2);
    if (decision === null) return null;
    return all || decision.enabled ? toggleBody(flags[i]!, decision) : undefined;
  });
});

/** `routes`: the route set's numbers, kFrontendKinds' order for /api/frontend, then again for /api/proxy. */
export default function frontendEvaluator(engine: EvalEngine, routes: readonly Route[]): RouteEvaluator {
  const kinds: FrontendKind[] = [];
  routes.forEach((route, i) => {
    kinds[route] = kFrontendKinds[i % kFrontendKinds.length]!;
  });
  const frontend = new FrontendEvaluator(engine);
  return (route, name, input, extra, out) => frontend.evaluate(kinds[route]!, name, input, extra, out);
}

export class FrontendEvaluator {
  private readonly ctx = new UnleashContext();
  /** Keys that passed, by Authorization header as sent, at `keysRevision` (clientKey()). */
  private readonly keys = new Map<string, ClientKey>();
  private keysRevision = -1;
  /** The list being written (toggles): what decidedToggle reads. */
  private listFlags: readonly FlagEntry[] = [];
  private listEnv: string | null = null;
  private listAllowed = false;
  private listAll = false;
  private readonly listEntries: DecidedEntries = { decided: (i) => this.decidedToggle(i) };

  constructor(private readonly engine: EvalEngine) {}

  /** One request: `input` is its query or body, as `extra`'s first character says (hosted-routes.ts). */
  evaluate(kind: FrontendKind, rawName: string, input: string, extra: string, out: ResultWriter): void {
    const split = extra.indexOf('\n');
    const authorization = extra.slice(1, split);
    const ifNoneMatch = extra.slice(split + 1);
    let key: ClientKey;
    try {
      key = this.clientKey(authorization);
    } catch (err) {
      if (err instanceof FlagwireError) return out.put(err.status, evalErrorBody(err.code, err.detail));
      throw err;
    }
    // The SDKs' reports: their counts would count again the evaluations this API already counts as the
    // flags' usage (docs/api.md), so they are accepted and not kept, as Unleash Edge answers them (202).
    if (kind === 'metrics' || kind === 'register') return out.put(202, kEmpty);
    const ctx = this.ctx;
    if (!(extra[0] === 'q' ? ctx.parseQuery(input) : ctx.parseBody(input))) {
      return out.put(400, evalErrorBody('INVALID_REQUEST', ctx.error!));
    }
    const refusal = kind === 'feature' ? this.feature(key, decodePathId(rawName), out) : this.toggles(key, kind === 'all', out);
    if (refusal !== null) return out.put(refusal.status, refusal.body);
    out.closeTagged(etag(kTagForm, out.openBody()), ifNoneMatch);
  }

  /**
   * The key `authorization` names, allowed the use `frontend`, or its refusal (thrown). Kept while the
   * store's revision stands: a key made, changed or revoked moves it (client keys are relayed records,
   * which move configSeq, the revision of a node on its own data file, as a commit moves a copy's), so
   * a kept key is never staler than the flags it answers. Only keys that passed are kept, at most
   * kMaxKeys: unknown keys sent at random cannot grow it.
   */
  private clientKey(authorization: string): ClientKey {
    const revision = this.engine.revision;
    if (revision !== this.keysRevision) {
      this.keys.clear();
      this.keysRevision = revision;
    }
    let key = this.keys.get(authorization);
    if (key === undefined) {
      key = identifyClientKey(this.engine.snapshot, authorization, 'frontend');
      if (this.keys.size >= kMaxKeys) this.keys.clear();
      this.keys.set(authorization, key);
    }
    return key;
  }

  /** Opens and writes `{"toggles":[...]}`: every flag, or only those on (as Unleash Edge lists them); or the refusal. */
  private toggles(key: ClientKey, all: boolean, out: ResultWriter): Refusal | null {
    const { engine, ctx } = this;
    const project = engine.lookupProject(key.projectId);
    if (!project.found) return { status: 404, body: project.body };
    const env = projectEnv(project, key.environment);
    if (env === kEnvMissing || env === kEnvUnknown) return environmentGone(key);
    engine.countProject(project, env);
    ctx.env = env;
    const audiencesAllowed = engine.audiencesAllowed(project.org);
    this.listFlags = byName(project);
    this.listEnv = env;
    this.listAllowed = audiencesAllowed;
    this.listAll = all;
    out.open();
    out.push(kOpen);
    writeList(out, kTogglePlans.of(project, (audiencesAllowed ? 2 : 0) + (all ? 1 : 0), env), this.listEntries);
    out.push(kClose);
    return null;
  }

  /** Flag `i`'s toggle for this request, as its list's plan leaves it to it (toggles): null where the list omits it. */
  private decidedToggle(i: number): Buffer | null {
    const flag = this.listFlags[i]!;
    const decision = decideToggle(stateInProjectEnv(flag, this.listEnv)!, this.ctx, this.listAllowed, this.engine.batchTime);
    return this.listAll || decision.enabled ? toggleBody(flag, decision) : null;
  }

  /** Opens and writes one flag's toggle; or the refusal (a 404 for a name no flag of the key's project has). */
  private feature(key: ClientKey, name: string, out: ResultWriter): Refusal | null {
    const { engine, ctx } = this;
    const flag = engine.lookupFlagByName(key.projectId, name);
    if (flag === undefined) {
      return { status: 404, body: evalErrorBody('NOT_FOUND', `No flag named "${name}" exists in this client key's project.`) };
    }
    const state = stateInEnv(flag, key.environment);
    if (state === kEnvMissing || state === kEnvUnknown) return environmentGone(key);
    engine.count(state);
    ctx.env = key.environment;
    out.open();
    out.push(toggleBody(flag, decideToggle(state, ctx, engine.audiencesAllowed(flag.org), engine.batchTime)));
    return null;
  }
}

/** An answer other than the toggles. */
interface Refusal {
  status: number;
  body: Buffer;
}

function environmentGone(key: ClientKey): Refusal {
  const detail = `Client key ${key.id}'s environment is no longer one of its project's: make a key of one that is.`;
  return { status: 403, body: evalErrorBody('FORBIDDEN', detail) };
}

function byName(project: ProjectEntry): readonly FlagEntry[] {
  let flags = kByName.get(project);
  if (flags === undefined) {
    flags = [...project.flags].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    kByName.set(project, flags);
  }
  return flags;
}

// OFREP's two evaluation routes at the edge, from one project environment's snapshot (edge-project.ts):
// the same rules (src/ofrep/answer.ts), the same texts (src/ofrep/answer-text.ts) and the same ETags as
// the eval workers' route set (src/ofrep/evaluate.ts), written as strings with nothing of Node's.
//
// What differs (docs/edge.md): an edge holds one project, and of a multi-environment project one
// environment; a request for another project, or another (or no) environment, is answered as the server
// answers for a project or environment that it does not have.
import { kAudiencePlanDetail } from '../evaluation/engine/evaluate.js';
import { etagText, ifNoneMatchNames } from '../http/entity-tag-text.js';
import { decodePathId } from '../http/path-id.js';
import { kKeyMissingDetails, kSlotAudiencePlan, kSlotKeyMissing, kSlots, ofrepAnswer } from '../ofrep/answer.js';
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
} from '../ofrep/answer-text.js';
import { OfrepContext } from '../ofrep/context.js';
import type { Resolution } from '../targeting/compiled-flag.js';
import type { EdgeFlag, EdgeProject } from './edge-project.js';

/** An answer before it is a Response: `etag` '' when it has none. */
export interface EdgeAnswer {
  readonly status: number;
  readonly body: string;
  readonly etag: string;
}

const kEncoder = new TextEncoder();

export class OfrepEdge {
  private readonly ctx = new OfrepContext();

  /** POST /ofrep/v1/evaluate/flags/{key}; `project`: the X-Flagwire-Project header ('' when absent). */
  evaluateFlag(project: EdgeProject, rawKey: string, body: string, projectHeader: string, nowMs: number): EdgeAnswer {
    const ctx = this.ctx;
    const key = decodePathId(rawKey);
    if (!ctx.parse(body)) return plain(400, ofrepFailureText(key, ctx.errorCode, ctx.errorDetails));
    const own = projectHeader === '' || projectHeader === project.compiled.projectId;
    let found = own ? project.byId.get(key) : undefined;
    let byName = false;
    if (found === undefined && projectHeader !== '' && own) {
      found = project.byName.get(key);
      byName = true;
    }
    if (found === undefined) return plain(404, ofrepFailureText(key, 'FLAG_NOT_FOUND', notFoundDetails(key, projectHeader)));
    const envProblem = this.envProblem(project);
    if (envProblem !== null) return plain(400, ofrepFailureText(key, 'INVALID_CONTEXT', envProblem));
    const answer = ofrepAnswer(found.flag.state, ctx, audiencesAllowed(project, nowMs), nowMs);
    if (typeof answer === 'number') return plain(answer < kSlotAudiencePlan ? 200 : 400, slotText(found, answer, byName));
    return plain(answer.errorCode === undefined ? 200 : 400, resolutionText(found, answer, byName));
  }

  /** POST /ofrep/v1/evaluate/flags; `ifNoneMatch`: the If-None-Match header ('' when absent). */
  evaluateBulk(project: EdgeProject, projectHeader: string, body: string, ifNoneMatch: string, nowMs: number): EdgeAnswer {
    const ctx = this.ctx;
    if (projectHeader === '') return plain(400, ofrepFailureText(null, 'GENERAL', kMissingProjectDetails));
    if (!ctx.parse(body)) return plain(400, ofrepFailureText(null, ctx.errorCode, ctx.errorDetails));
    const { compiled } = project;
    if (projectHeader !== compiled.projectId) return plain(400, ofrepFailureText(null, 'GENERAL', unknownProjectDetails(projectHeader)));
    const envProblem = this.envProblem(project);
    if (envProblem !== null) return plain(400, ofrepFailureText(null, 'INVALID_CONTEXT', envProblem));
    const allowed = audiencesAllowed(project, nowMs);
    const tag = project.readsClock ? '' : etagText(project.configTag, kEncoder.encode(contextTagText(compiled.projectId, body, allowed)));
    if (tag !== '' && ifNoneMatchNames(ifNoneMatch, tag)) return { status: 304, body: '', etag: tag };
    const settled = allowed ? 1 : 0;
    const parts: string[] = [];
    let erred = false;
    for (const flag of project.flags) {
      const answer = flag.settled[settled] ?? ofrepAnswer(flag.flag.state, ctx, allowed, nowMs);
      if (typeof answer === 'number') parts.push(slotText(flag, answer, false), slotText(flag, answer, true));
      else {
        if (answer.errorCode !== undefined) erred = true;
        parts.push(resolutionText(flag, answer, false), resolutionText(flag, answer, true));
      }
    }
    const text = `{"flags":[${parts.join(',')}${bulkTailText(compiled.projectId, compiled.environment)}`;
    if (tag !== '' && !erred) return { status: 200, body: text, etag: tag };
    // The answer's bytes decide its tag: a context's answer may differ from one request to the next.
    const bytesTag = etagText(project.configTag, kEncoder.encode(text));
    return ifNoneMatchNames(ifNoneMatch, bytesTag)
      ? { status: 304, body: '', etag: bytesTag }
      : { status: 200, body: text, etag: bytesTag };
  }

  /** Why the parsed context cannot be answered from this environment's snapshot; null when it can. */
  private envProblem(project: EdgeProject): string | null {
    const served = project.compiled.environment;
    if (served === null || this.ctx.env === served) return null;
    return `This edge evaluates environment "${served}" of its project: add "env": "${served}" to the context (docs/edge.md).`;
  }
}

/** As EvalEngine.audiencesAllowed at `nowMs`: a trial that ended since the snapshot no longer allows them. */
function audiencesAllowed(project: EdgeProject, nowMs: number): boolean {
  return project.compiled.audiencesAllowed && nowMs < project.compiled.audiencesUntil;
}

function plain(status: number, body: string): EdgeAnswer {
  return { status, body, etag: '' };
}

/** src/ofrep/evaluate.ts flagBody's text: a decision, or one of the two failures. */
function slotText(edge: EdgeFlag, slot: number, byName: boolean): string {
  const index = byName ? kSlots + slot : slot;
  let text = edge.slotTexts[index];
  if (text === undefined) {
    const { flag } = edge;
    const key = byName ? flag.name : flag.id;
    const experiment = flag.state.experiment;
    if (slot === kSlotAudiencePlan) text = ofrepFailureText(key, 'GENERAL', kAudiencePlanDetail, experiment);
    else if (slot === kSlotKeyMissing) text = ofrepFailureText(key, 'TARGETING_KEY_MISSING', kKeyMissingDetails, experiment);
    else text = decisionText(flag, key, slot, experiment);
    edge.slotTexts[index] = text;
  }
  return text;
}

/** src/ofrep/evaluate.ts variantBody's text; a rule's error is made for its answer. */
function resolutionText(edge: EdgeFlag, answer: Resolution, byName: boolean): string {
  const { flag } = edge;
  const key = byName ? flag.name : flag.id;
  if (answer.errorCode !== undefined) return ruleErrorText(key, answer, flag.state.experiment);
  const texts = edge.variantTexts[byName ? 1 : 0];
  let text = texts.get(answer);
  if (text === undefined) {
    text = variantText(flag, key, answer);
    texts.set(answer, text);
  }
  return text;
}

// `@flagwire/edge/provider`: an OpenFeature server provider for code running in the same worker as a
// FlagwireEdge, answering from the snapshot that edge holds with the Flagwire OpenFeature provider's own
// resolution (src/provider/resolve.ts: OFREP's answers as resolution details), so in-worker code and the
// worker's OFREP routes answer alike. Exposures (its `hook`) and outcomes (`track`) go to Flagwire's
// events API through FlagwireEvents (src/provider/events.ts), in batches; `flush(ctx)` sends what waits
// under the runtime's waitUntil, once per request, so that nothing waits on an isolate that may be
// evicted before its timer fires.
//
// A Worker may not set timers or make random values at global scope: make the provider (and its
// FlagwireEvents) in the fetch handler, once per isolate. OpenFeature's server SDK imports node:events,
// which Cloudflare gives a worker with the `nodejs_compat` flag (docs/edge.md).
import type { EvaluationContext, Hook, JsonValue, Provider, ResolutionDetails, TrackingEventDetails } from '@openfeature/server-sdk';
import { OfrepContext } from '../ofrep/context.js';
import type { FlagwireEvents } from '../provider/events.js';
import { resolveFlag } from '../provider/resolve.js';
import type { FlagwireEdge, WaitUntil } from './edge.js';
import { heldProject } from './edge-project.js';

export { FlagwireEvents, type FlagwireEventsOptions } from '../provider/events.js';

export interface FlagwireEdgeProviderOptions {
  /** Where exposures and `client.track(...)` go; absent: neither is sent. */
  events?: FlagwireEvents;
}

export class FlagwireEdgeProvider implements Provider {
  readonly metadata = { name: 'flagwire-edge' } as const;
  readonly runsOn = 'server' as const;
  /** The events' exposure hook, when there are events. */
  readonly hooks: Hook[];
  private readonly ctx = new OfrepContext();
  private readonly sender: FlagwireEvents | null;

  constructor(
    private readonly edge: FlagwireEdge,
    options: FlagwireEdgeProviderOptions = {},
  ) {
    this.sender = options.events ?? null;
    this.hooks = this.sender === null ? [] : [this.sender.hook as Hook];
  }

  /** Waits for the edge's first snapshot. */
  async initialize(): Promise<void> {
    await this.edge.ready();
  }

  /** Sends the events waiting, kept alive past the answer by the runtime's waitUntil: once per request. */
  flush(ctx: WaitUntil): void {
    if (this.sender !== null) ctx.waitUntil(this.sender.flush());
  }

  track(name: string, context: EvaluationContext, details: TrackingEventDetails): void {
    this.sender?.track(name, context, details);
  }

  async resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): Promise<ResolutionDetails<boolean>> {
    return this.resolve(flagKey, 'boolean', defaultValue, context);
  }

  async resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<ResolutionDetails<string>> {
    return this.resolve(flagKey, 'string', defaultValue, context);
  }

  async resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<ResolutionDetails<number>> {
    return this.resolve(flagKey, 'number', defaultValue, context);
  }

  async resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return this.resolve(flagKey, 'object', defaultValue, context);
  }

  private resolve<T extends boolean | string | number | JsonValue>(
    flagKey: string,
    type: 'boolean' | 'string' | 'number' | 'object',
    defaultValue: T,
    context: EvaluationContext,
  ): ResolutionDetails<T> {
    return resolveFlag(heldProject(this.edge)?.compiled ?? null, this.ctx, flagKey, type, defaultValue, context, Date.now());
  }
}

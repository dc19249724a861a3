// GET /api/client/streaming's events (routes.ts serves the route; Flagwire's change feed, src/stream,
// carries the connections, their limits, heartbeats and slow-reader drops): Unleash's streaming as its
// server SDKs read it (unleash-client-node's `experimentalMode: {type: 'streaming'}`), as Unleash Edge
// sends it:
//
//   event: unleash-connected   data: {"events": [{"type": "hydration", "eventId": N, "features": [...], "segments": []}]}
//   event: unleash-updated     data: {"events": [{"type": "feature-updated", "eventId": N, "feature": {...}},
//                                                {"type": "feature-removed", "eventId": N, "featureName": "...", "project": "..."}]}
//
// each with the store revision as its id (and eventId), the features exactly as GET /api/client/features
// says them (client-features.ts). Every connection is hydrated in full, a reconnect's Last-Event-ID
// included: the SDK replaces what it has, so nothing a reconnect missed can linger. What the updates are
// compared with is kept once per watched project environment, not per connection: every connection of a
// group has seen the group's revision (its hydration, then each update).
import type { Clock } from '../clock.js';
import { event } from '../stream/events.js';
import type { FeedStore, FollowedGroup, StreamFollower } from '../stream/change-feed.js';
import { saidFeatures, type UnleashFeature } from './client-features.js';
import { readFeaturesSource } from './features-source.js';

/** What a group's connections were last sent: the features' tag, and each feature's JSON by name. */
interface Sent {
  tag: string;
  features: Map<string, string>;
}

type StreamEvent =
  | { type: 'feature-updated'; eventId: number; feature: UnleashFeature }
  | { type: 'feature-removed'; eventId: number; featureName: string; project: string };

export class UnleashStream implements StreamFollower {
  /** By group: forgotten with the group when the change feed forgets it. */
  private readonly sent = new WeakMap<FollowedGroup, Sent>();

  constructor(private readonly clock: Clock) {}

  first(group: FollowedGroup, store: FeedStore): string {
    const { tag, features } = this.read(group, store);
    this.sent.set(group, { tag, features: byName(features) });
    const revision = group.seenRevision;
    return event(revision, 'unleash-connected', { events: [{ type: 'hydration', eventId: revision, features, segments: [] }] });
  }

  advanced(group: FollowedGroup, revision: number, store: FeedStore): string {
    const sent = this.sent.get(group);
    if (sent === undefined) return '';
    const { tag, features } = this.read(group, store);
    // The features route's ETag: the same tag, the same features.
    if (tag === sent.tag) return '';
    const now = byName(features);
    const events: StreamEvent[] = [];
    for (const feature of features) {
      if (sent.features.get(feature.name) !== now.get(feature.name)) events.push({ type: 'feature-updated', eventId: revision, feature });
    }
    for (const name of sent.features.keys()) {
      if (!now.has(name)) events.push({ type: 'feature-removed', eventId: revision, featureName: name, project: group.projectId });
    }
    this.sent.set(group, { tag, features: now });
    return events.length === 0 ? '' : event(revision, 'unleash-updated', { events });
  }

  /** The group's features now; a project deleted meanwhile has none. */
  private read(group: FollowedGroup, store: FeedStore): { tag: string; features: UnleashFeature[] } {
    const project = store.getProject(group.projectId);
    if (project === undefined) return { tag: '', features: [] };
    const { input, tag } = readFeaturesSource(store, project, group.env, '', this.clock.now());
    return { tag, features: saidFeatures(input).features };
  }
}

function byName(features: readonly UnleashFeature[]): Map<string, string> {
  return new Map(features.map((feature) => [feature.name, JSON.stringify(feature)]));
}

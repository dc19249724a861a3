// GET /api/client/streaming's events (service-routes.ts serves the route; Flagwire's change feed, src/stream,
// carries the connections, their limits, heartbeats and slow-reader drops): Unleash's streaming as its
// server SDKs read it (unleash-client-node's `experimentalMode: {type: 'streaming'}`), as Unleash Edge
// sends it:
//
//   event: unleash-connected   data: {"events": [{"type": "hydration", "eventId": N, "features": [...], "segments": [...]}]}
//   event: unleash-updated     data: {"events": [{"type": "segment-updated", "eventId": N, "segment": {...}},
//                                                {"type": "segment-removed", "eventId": N, "segmentId": 1},
//                                                {"type": "feature-updated", "eventId": N, "feature": {...}},
//                                                {"type": "feature-removed", "eventId": N, "featureName": "...", "project": "..."}]}
//
// (segments are those of flags in Unleash's model, ids as the features route numbers them; they come
// first, so a feature updated in the same event finds the segments it names.)
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
import type { UnleashSegment } from '../model/unleash-model.js';
import { readFeaturesSource } from './features-source.js';
import { getProject } from '../model/records/project-records.js';

/** What a group's connections were last sent: the features' tag, each feature's JSON by name, each segment's by id. */
interface Sent {
  tag: string;
  features: Map<string, string>;
  segments: Map<number, string>;
}

type StreamEvent =
  | { type: 'segment-updated'; eventId: number; segment: UnleashSegment }
  | { type: 'segment-removed'; eventId: number; segmentId: number }
  | { type: 'feature-updated'; eventId: number; feature: UnleashFeature }
  | { type: 'feature-removed'; eventId: number; featureName: string; project: string };

export class UnleashStream implements StreamFollower {
  /** By group: forgotten with the group when the change feed forgets it. */
  private readonly sent = new WeakMap<FollowedGroup, Sent>();

  constructor(private readonly clock: Clock) {}

  first(group: FollowedGroup, store: FeedStore): string {
    const { tag, features, segments } = this.read(group, store);
    this.sent.set(group, { tag, features: byName(features), segments: byId(segments) });
    const revision = group.seenRevision;
    return event(revision, 'unleash-connected', { events: [{ type: 'hydration', eventId: revision, features, segments }] });
  }

  advanced(group: FollowedGroup, revision: number, store: FeedStore): string {
    const sent = this.sent.get(group);
    if (sent === undefined) return '';
    const { tag, features, segments } = this.read(group, store);
    // The features route's ETag: the same tag, the same features.
    if (tag === sent.tag) return '';
    const now = byName(features);
    const nowSegments = byId(segments);
    const events: StreamEvent[] = [];
    for (const segment of segments) {
      if (sent.segments.get(segment.id) !== nowSegments.get(segment.id))
        events.push({ type: 'segment-updated', eventId: revision, segment });
    }
    for (const id of sent.segments.keys())
      if (!nowSegments.has(id)) events.push({ type: 'segment-removed', eventId: revision, segmentId: id });
    for (const feature of features) {
      if (sent.features.get(feature.name) !== now.get(feature.name)) events.push({ type: 'feature-updated', eventId: revision, feature });
    }
    for (const name of sent.features.keys()) {
      if (!now.has(name)) events.push({ type: 'feature-removed', eventId: revision, featureName: name, project: group.projectId });
    }
    this.sent.set(group, { tag, features: now, segments: nowSegments });
    return events.length === 0 ? '' : event(revision, 'unleash-updated', { events });
  }

  /** The group's features now; a project deleted meanwhile has none. */
  private read(group: FollowedGroup, store: FeedStore): { tag: string; features: UnleashFeature[]; segments: UnleashSegment[] } {
    const project = getProject(store, group.projectId);
    if (project === undefined) return { tag: '', features: [], segments: [] };
    const { input, tag } = readFeaturesSource(store, project, group.env, '', this.clock.now());
    const { features, segments } = saidFeatures(input);
    return { tag, features, segments };
  }
}

function byId(segments: readonly UnleashSegment[]): Map<number, string> {
  return new Map(segments.map((segment) => [segment.id, JSON.stringify(segment)]));
}

function byName(features: readonly UnleashFeature[]): Map<string, string> {
  return new Map(features.map((feature) => [feature.name, JSON.stringify(feature)]));
}

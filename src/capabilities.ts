// Every capability of Flagwire, listed once. Adding a capability is one line here (docs/architecture.md,
// "Adding a capability"); the tables the rest of Flagwire reads are derived below.
import type { Capability, WriteCheck } from './capability/capability.js';
import type { Change } from './store/changes.js';
import type { StoreReader } from './store/interfaces.js';
import type { GrpcServiceSpec } from './capability/grpc-service.js';
import { kApprovals } from './approvals/capability.js';
import { kAudit } from './audit-log/capability.js';
import { kAuditStream } from './audit-stream/capability.js';
import { kClientKeys } from './client-keys/capability.js';
import { kCodeRefs } from './code-refs/capability.js';
import { kEvaluation } from './evaluation/capability.js';
import { kEvents } from './events/capability.js';
import { kExperiments } from './experiments/capability.js';
import { kFlagsAsCode } from './flags-as-code/capability.js';
import { kFragments } from './fragments/capability.js';
import { kInvitations } from './invitations/capability.js';
import { kMail } from './mail/capability.js';
import { kMcp } from './mcp/capability.js';
import { kOpenFeatureManifest } from './openfeature-manifest/capability.js';
import { kOrgs } from './orgs/capability.js';
import { kProjects } from './projects/capability.js';
import { kRelay } from './relay/capability.js';
import { kScim } from './scim/capability.js';
import { kSso } from './sso/capability.js';
import { kFlags } from './flags/capability.js';
import { kReleasePlans } from './release-plans/capability.js';
import { kSessions } from './sessions/capability.js';
import type { RecordKind } from './store/record-kinds.js';
import { kDemoRecordOwner, type kDemoSeededRecords } from './writer/thread/demo-records.js';
import { storeLayout, type RecordOwner, type StoreLayout } from './store/store-layout.js';
import { kSnapshots } from './snapshots/capability.js';
import { kSync } from './sync/capability.js';
import { kTokens } from './tokens/capability.js';
import { kUnleash } from './unleash/capability.js';
import { kUsageReports } from './usage-reports/capability.js';
import { kWebhooks } from './webhooks/capability.js';
import type { WebhookEvent } from './capability/webhook-events.js';
import type { AnyCommand } from './writer/command.js';
import { kTestSwitches } from './test-switches.js';

export const kCapabilities = [
  kOrgs,
  kSessions,
  kInvitations,
  kScim,
  kSso,
  kProjects,
  kFlags,
  kFragments,
  kReleasePlans,
  kWebhooks,
  kFlagsAsCode,
  kCodeRefs,
  kOpenFeatureManifest,
  kTokens,
  kClientKeys,
  kEvents,
  kExperiments,
  kAudit,
  kAuditStream,
  kMail,
  kSnapshots,
  kSync,
  kUnleash,
  kRelay,
  kUsageReports,
  kEvaluation,
  kApprovals,
  kMcp,
] as const satisfies readonly Capability[];

/**
 * The capabilities' values, as every derivation reads them: with FLAGWIRE_TEST_HOOKS=1 and
 * FLAGWIRE_TEST_CAPABILITY, a test's own capability after them (src/test-switches.ts), in every thread.
 */
export const kCapabilityList: readonly Capability[] =
  kTestSwitches.capabilityModule === null
    ? kCapabilities
    : [...kCapabilities, ((await import(kTestSwitches.capabilityModule)) as { testCapability: Capability }).testCapability];

/** Whoever declares storage beside the store itself: every capability, and the demo seed (its mark). */
export const kRecordOwners: readonly RecordOwner[] = [...kCapabilityList, kDemoRecordOwner];

/**
 * The store's layout: the databases and record kinds the store and kRecordOwners declare, from which
 * the store derives the databases it opens, what a full copy clears and copies, what migrate-to-postgres
 * exports and the change kinds (src/store/store-layout.ts). A database declared twice is a start-up error.
 */
export const kStoreLayout: StoreLayout = storeLayout(kRecordOwners);

/** The capabilities' writer commands by name; a name declared twice is an error. */
export function capabilityCommands(capabilities: readonly Capability[]): ReadonlyMap<string, AnyCommand> {
  return uniqueBy(
    capabilities.flatMap((c) => Object.values(c.commands ?? {})),
    (command) => command.name,
    'writer command',
  );
}

/** Every capability's writer commands by name; a name declared twice is a start-up error. */
export const kCapabilityCommands: ReadonlyMap<string, AnyCommand> = capabilityCommands(kCapabilityList);

/** Every capability's write checks (Capability.writeChecks), run after each writer command in its transaction. */
const kWriteChecks: readonly WriteCheck[] = kCapabilityList.flatMap((c) => c.writeChecks ?? []);

/** Runs every capability's write check on what a command wrote (`changes`); one throws to refuse it. */
export function checkWrites(r: StoreReader, changes: readonly Change[]): void {
  for (const check of kWriteChecks) check(r, changes);
}

/** Every capability's gRPC services, hosted on the sync service's port; a name declared twice is a start-up error. */
export const kCapabilityGrpcServices: readonly GrpcServiceSpec[] = [
  ...uniqueBy(
    kCapabilityList.flatMap((c) => c.grpcServices ?? []),
    (service) => service.name,
    'gRPC service',
  ).values(),
];

/**
 * Every audit action a capability declares, and the webhook event it is sent as (its capability's
 * webhookEvent; null: no webhook hears of it). An action declared twice is a start-up error.
 */
export const kAuditActionEvents: ReadonlyMap<string, WebhookEvent | null> = auditActionEvents(kCapabilityList);

/** The capabilities' audit actions, each with the webhook event it is sent as; an action declared twice is an error. */
export function auditActionEvents(capabilities: readonly Capability[]): ReadonlyMap<string, WebhookEvent | null> {
  return new Map(
    uniqueBy(
      capabilities.flatMap((c) => (c.auditActions ?? []).map((action) => [action, c.webhookEvent ?? null] as const)),
      ([action]) => action,
      'audit action',
    ).values(),
  );
}

/** The webhook event an audit action is sent as; null: no webhook hears of it (webhook and membership changes). */
export function webhookEventOf(action: string): WebhookEvent | null {
  return kAuditActionEvents.get(action) ?? null;
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string, what: string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    if (map.has(k)) throw new Error(`${what} ${k} is declared twice`);
    map.set(k, item);
  }
  return map;
}

/** Every audit action a capability declares, as a type: what an audit entry is appended with (NewAuditEntry). */
export type AuditAction = (typeof kCapabilities)[number] extends infer C
  ? C extends { auditActions: readonly (infer A)[] }
    ? A
    : never
  : never;

/** Every record kind the capabilities and the demo seed (its mark: src/writer/thread/demo-records.ts) declare, as a type. */
type DeclaredRecordKind =
  | typeof kDemoSeededRecords
  | ((typeof kCapabilities)[number] extends infer C ? (C extends { records: readonly (infer K)[] } ? K : never) : never);

/** A kind's change kinds (its write's, and its deletion's), each with the record it carries. */
type ChangesOf<K> = K extends RecordKind<infer V, infer N, infer R> ? { [P in N | R]: V } : never;

declare module './store/changes.js' {
  /** What a change set holds (Change): the kinds declared above. */
  interface DeclaredChanges extends UnionToIntersection<ChangesOf<DeclaredRecordKind>> {}
}

declare module './store/interfaces.js' {
  /** What StoreWriter.appendAudit takes: the actions declared above. */
  interface DeclaredAuditActions extends Record<AuditAction, true> {}
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every capability's commands in one type, by name: what a call by name is typed with (src/writer/thread/commands.ts). */
export type CapabilityCommands = UnionToIntersection<
  (typeof kCapabilities)[number] extends infer C ? (C extends { commands: infer T } ? T : never) : never
>;

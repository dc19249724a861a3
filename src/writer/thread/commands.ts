// Every command the writer applies, by name: the message protocol of the writer actor, and the
// functions the console runs in its own process. Each takes (store writer, input, now).
import { type CapabilityCommands, checkWrites, kCapabilityCommands, webhookEventOf } from '../../capabilities.js';
import { FlagwireError } from '../../errors.js';
import { unicodeProblems } from '../../model/validation.js';
import type { StoreWriter } from '../../store/interfaces.js';
import type { WriterCommand } from '../command.js';
import { kWriterCommands } from './demo-seed.js';
import { queueWebhookDeliveries } from '../../webhooks/webhook-commands.js';
import { gate } from '../../approvals/gate.js';
import { actorIdOf, type Principal } from '../../actor/audit-actor.js';
import { scopedStore, scopeOf } from '../../actor/org-scope.js';
import { requestView, type ChangeRequestView } from '../../approvals/request-view.js';

type AllCommands = typeof kWriterCommands & CapabilityCommands;

/**
 * Every command's function by name, the writer's own and the capabilities': what a call by name (the
 * command line, tests) is typed with. Code inside a capability calls its commands by value instead.
 */
export type Commands = {
  readonly [K in keyof AllCommands]: AllCommands[K] extends WriterCommand<infer I, infer O>
    ? (w: StoreWriter, input: I, now: number) => O
    : never;
};
export type CommandName = keyof Commands;
export type CommandInput<N extends CommandName> = Parameters<Commands[N]>[1];
export type CommandOutput<N extends CommandName> = ReturnType<Commands[N]>;

/** Whether the writer has a command of this name: one of a capability's (src/capabilities.ts), or its own. */
export function isCommandName(name: unknown): name is CommandName {
  return typeof name === 'string' && (kCapabilityCommands.has(name) || Object.hasOwn(kWriterCommands, name));
}

/** The function of the command named `name` (isCommandName said it exists). */
function commandFunction(name: string): (w: StoreWriter, input: unknown, now: number) => unknown {
  const own = Object.hasOwn(kWriterCommands, name) ? kWriterCommands[name as keyof typeof kWriterCommands] : undefined;
  const fn = (kCapabilityCommands.get(name) ?? own)?.run;
  if (fn === undefined) throw new Error(`unknown writer command ${name}`);
  return fn as (w: StoreWriter, input: unknown, now: number) => unknown;
}

/** A command's outcome through the approvals gate: applied, with its value, or held as a change request. */
export type Outcome<O> = { applied: true; value: O } | { applied: false; request: ChangeRequestView; edited: boolean };

/**
 * Runs one command; the caller provides the transaction. Every string a command is given must be
 * valid Unicode (the rule in unicodeProblems), checked here once for all commands and callers: the
 * console, the demo seed and the API's structured inputs (an API body arrives as bytes, and its
 * strings are checked where it is parsed). Every command passes the approvals gate here
 * (src/approvals/gate.ts): a change to a guarded environment becomes a change request instead; and the
 * capabilities' write checks (checkWrites), which refuse a change whatever made it.
 */
export function runOutcome<I, O>(w: StoreWriter, command: WriterCommand<I, O>, input: I, now: number): Outcome<O>;
export function runOutcome<N extends CommandName>(w: StoreWriter, name: N, input: CommandInput<N>, now: number): Outcome<CommandOutput<N>>;
export function runOutcome(
  w: StoreWriter,
  command: string | WriterCommand<unknown, unknown>,
  input: unknown,
  now: number,
): Outcome<unknown> {
  const problems = unicodeProblems(input, { quoteKeys: false });
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const fn = commandFunction(typeof command === 'string' ? command : command.name);
  const principal = principalOf(input);
  // A person signed in by single sign-on acts in that organisation alone: the command sees the store as
  // they may (src/actor/org-scope.ts), so no role check of any command can find them elsewhere. The gate
  // and the write checks keep the whole store: their rules are the organisations', not the asker's.
  const scope = scopeOf(principal);
  const scoped = scope === null ? w : scopedStore(w, scope);
  const asker = principal === undefined ? null : actorIdOf(principal);
  const gated = gate(w, () => w.collectAudit(() => fn(scoped, input, now)), now, asker, checkWrites);
  // Every change the command audits is offered to its project's webhooks in this same transaction: the
  // outbox holds a delivery exactly when the change was committed (src/webhooks/webhook-commands.ts).
  if (gated.entries.length > 0) queueWebhookDeliveries(w, gated.entries, webhookEventOf, now);
  return gated.applied
    ? { applied: true, value: gated.value }
    : { applied: false, request: requestView(w, gated.request), edited: gated.edited };
}

/** The principal a command's input says it acts for, if it names one. */
function principalOf(input: unknown): Principal | undefined {
  const principal = (input as { principal?: Principal } | null)?.principal;
  return principal !== undefined && typeof principal === 'object' && principal !== null && 'kind' in principal ? principal : undefined;
}

/**
 * As runOutcome, for callers that need the change applied (the demo seed, tests): a change the gate
 * would hold as a request is refused here, and nothing of it is written.
 */
export function runCommand<I, O>(w: StoreWriter, command: WriterCommand<I, O>, input: I, now: number): O;
export function runCommand<N extends CommandName>(w: StoreWriter, name: N, input: CommandInput<N>, now: number): CommandOutput<N>;
export function runCommand(w: StoreWriter, command: string | WriterCommand<unknown, unknown>, input: unknown, now: number): unknown {
  const outcome = runOutcome(w, command as string as CommandName, input as never, now);
  if (!outcome.applied)
    throw new FlagwireError('APPROVAL_REQUIRED', `${outcome.request.summary} needs approval; this caller applies changes only.`);
  return outcome.value;
}

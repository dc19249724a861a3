// What the approvals gate (src/approvals/gate.ts) costs a write, in process, side by side in one run:
// the same flag PATCH (one command, one LMDB write transaction, synced to disk as every write is)
// applied as runCommand applied it before issue 46 (no gate), through the gate on a
// project with no policy (one nested transaction), through the gate on a project whose other
// environment is guarded (judged, rolled back and run again; the flag on there, and one off there, whose
// view asks what pending plans and requests will turn on), and held as a change request (judged,
// rolled back, a request written; edits of one request after the first). Rounds alternate the cases.
// Each case is reported as wall time and as this process's CPU time per write.
// Run: npm run build && node dist/bench/approvals-gate.bench.js [writes per case per round, default 300] [rounds, default 5]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kOperator, principalOf } from '../src/actor/audit-actor.js';
import { runCommand, runOutcome } from '../src/writer/thread/commands.js';
import { unicodeProblems } from '../src/model/validation.js';
import { queueWebhookDeliveries } from '../src/webhooks/webhook-commands.js';
import { kFlagCommands } from '../src/flags/command-table.js';
import { kStoreLayout, webhookEventOf } from '../src/capabilities.js';
import { LmdbStore } from '../src/store/lmdb-store.js';
import type { StoreWriter } from '../src/store/interfaces.js';
import { getFlag } from '../src/flags/records/flag-store.js';

const kWrites = Number(process.argv[2] ?? 300);
const kRounds = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'flagwire-gate-bench-'));
const store = LmdbStore.open(dir, { layout: kStoreLayout });
const run = <T>(fn: (w: StoreWriter) => T): T => store.transact(fn);
const now = Date.now();

const org = run((w) => runCommand(w, 'orgCreate', { principal: kOperator, name: 'Bench', plan: 'teams' }, now));
const editor = run((w) => runCommand(w, 'userCreate', { email: 'bench@x.test' }, now));
const approver = run((w) => runCommand(w, 'userCreate', { email: 'approver@x.test' }, now));
run((w) => runCommand(w, 'orgAddMember', { principal: kOperator, orgId: org.id, userId: editor.id, role: 'editor' }, now));
run((w) => runCommand(w, 'orgAddMember', { principal: kOperator, orgId: org.id, userId: approver.id, role: 'admin' }, now));
const principal = principalOf(editor.id);

/** A multi project with one flag on in production; `guard`: production guarded (staging is what the free cases change). */
function project(name: string, guard: boolean): string {
  const made = run((w) =>
    runCommand(
      w,
      'projectCreate',
      { principal: kOperator, name, orgId: org.id, kind: 'multi', environments: ['staging', 'production'] },
      now,
    ),
  );
  const body = { name: 'f', environments: { production: { enabled: true } } };
  const flag = run((w) => runCommand(w, 'flagCreate', { projectId: made.id, principal, body }, now));
  if (guard)
    run((w) =>
      runCommand(w, 'approvalsSet', { projectId: made.id, env: 'production', required: 1, principal: principalOf(approver.id) }, now),
    );
  return flag.id;
}

/**
 * runCommand as it was before the gate (issue 46): the Unicode check, the command with its audit
 * entries collected, and their webhook deliveries queued. Kept here only to measure against.
 */
function ungated(w: StoreWriter, input: ReturnType<typeof patch>): void {
  if (unicodeProblems(input, { quoteKeys: false }).length > 0) throw new Error('not Unicode');
  const { entries } = w.collectAudit(() => kFlagCommands.flagPatch.run(w, input, now));
  if (entries.length > 0) queueWebhookDeliveries(w, entries, webhookEventOf, now);
}

const open = project('open', false);
const guarded = project('guarded', true);
// A flag off in the guarded environment: its view there asks what pending plans and requests will turn on.
const guardedOff = run((w) =>
  runCommand(
    w,
    'flagCreate',
    { projectId: getFlag(w, guarded)!.projectId, principal, body: { name: 'off', environments: { production: {} } } },
    now,
  ),
).id;
let n = 0;
const patch = (flagId: string, env: string) => ({ flagId, env, principal, patch: { trafficPercentage: n++ % 101 } });

const cases: Record<string, () => void> = {
  'no gate (runCommand before it)': () => run((w) => ungated(w, patch(open, 'staging'))),
  'gate, no policy': () => run((w) => runOutcome(w, kFlagCommands.flagPatch, patch(open, 'staging'), now)),
  'gate, another environment guarded': () => run((w) => runOutcome(w, kFlagCommands.flagPatch, patch(guarded, 'staging'), now)),
  'gate, other env guarded, off there': () => run((w) => runOutcome(w, kFlagCommands.flagPatch, patch(guardedOff, 'staging'), now)),
  'gate, held as a request': () => run((w) => runOutcome(w, kFlagCommands.flagPatch, patch(guarded, 'production'), now)),
};

// Wall time, and this process's CPU time (user + system): on a machine whose disk other work keeps busy,
// the wait for each write's sync swamps the wall time, while the CPU time is what the gate itself spends.
const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round < kRounds; round++) {
  for (const [name, fn] of Object.entries(cases)) {
    const started = process.hrtime.bigint();
    const used = process.cpuUsage();
    for (let i = 0; i < kWrites; i++) fn();
    const spent = process.cpuUsage(used);
    times[name]!.push(Number(process.hrtime.bigint() - started) / 1e3 / kWrites);
    cpu[name]!.push((spent.user + spent.system) / kWrites);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(times['no gate (runCommand before it)']!);
const cpuBase = median(cpu['no gate (runCommand before it)']!);
console.log(
  `${kWrites} writes per case, ${kRounds} rounds; median µs per write (each its own synced transaction), and ÷ no gate; wall, then CPU:`,
);
for (const [name, xs] of Object.entries(times)) {
  const c = median(cpu[name]!);
  console.log(
    `  ${name.padEnd(36)} ${median(xs).toFixed(0).padStart(6)} µs ${(median(xs) / base).toFixed(2)}   CPU ${c.toFixed(0).padStart(5)} µs ${(c / cpuBase).toFixed(2)}`,
  );
}
await store.close();
rmSync(dir, { recursive: true, force: true });

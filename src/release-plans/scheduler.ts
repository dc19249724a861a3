// The node's scheduler: every kPollMs it reads the scheduled changes, rollout steps and guard readings
// due now and asks the writer to run each (scheduleRun, rolloutAdvance and rolloutGuardRecord apply one
// exactly once, whichever node asks, however often). A rollout's guard is read before its step is taken,
// so a breach found at the step's time stops the step. Guards are read beside the schedule, not in front
// of it: a reading runs on its own time (at most the read timeout), one at a time per rollout, and only
// that rollout's step waits for it; scheduled changes and other rollouts go on at every poll.
// It runs beside the request path on the main thread, as the mailer does: a write that fails (storage
// busy, PostgreSQL away) is retried at the next poll, and a change that fell due while the node was down
// runs at its first poll, the log saying how late. Time is the service clock's, which tests move forward.
import type { Logger } from 'pino';
import { Periodic } from '../background/periodic.js';
import type { Clock } from '../clock.js';
import type { RolloutPlan } from './rollouts.js';
import type { ScheduledChange } from './schedules.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { GuardReader, RawReading } from './guard-reader.js';
import { listDueRollouts, listDueSchedules } from './records.js';

const kPollMs = 500;
/** Changes run per poll at most; the rest wait for the next one. */
const kBatch = 50;
/** Batches run at start, before the node listens, at most. */
const kStartRounds = 100;
/** A change run later than this after it fell due is logged as late (the node was down, or busy). */
const kLateMs = 5000;

/** What the scheduler asks the writer: run one scheduled change, advance one rollout; null when there was nothing to do. */
export interface ScheduledWork {
  runSchedule(scheduleId: string): Promise<ScheduledChange | null>;
  advanceRollout(rolloutId: string): Promise<RolloutPlan | null>;
  recordGuardReading(rolloutId: string, dueAt: number, reading: RawReading): Promise<RolloutPlan | null>;
}

/** Whether the plan's guard is due a reading at `now`. */
function guardDue(plan: RolloutPlan, now: number): boolean {
  return plan.guard != null && plan.guardNextAt != null && plan.guardNextAt <= now;
}

export class Scheduler {
  private readonly polls: Periodic;
  /** Guard readings under way, by rollout: one at a time each, however many polls pass meanwhile. */
  private readonly reading = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly store: SnapshotReader,
    private readonly work: ScheduledWork,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly guards: GuardReader,
    pollMs = kPollMs,
  ) {
    this.polls = new Periodic(
      async () => {
        await this.poll(false);
      },
      { intervalMs: pollMs, onError: (err) => this.log.error({ err }, 'scheduler: a poll failed; the next one tries again') },
    );
  }

  /**
   * Runs what is due now (changes that fell due while the node was down), batch after batch, then polls.
   * At most kStartRounds batches: a write that keeps failing leaves its change due, and must not keep the
   * node from listening; what is left runs at the next polls. Before listening the guards' readings are
   * awaited, so a step due at start is taken (or stopped) at start.
   */
  async start(): Promise<void> {
    for (let round = 0; round < kStartRounds; round++) if ((await this.poll(true)) < kBatch) break;
    this.polls.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.polls.stop();
    // Readings still out are not awaited (each ends within the read timeout) and record nothing now.
  }

  /**
   * Runs one batch of what is due; returns the largest count found due of either kind. `awaitGuards`:
   * wait for the guard readings this poll started (at start); otherwise they finish on their own time,
   * so a slow or hanging Prometheus never holds the next poll's scheduled changes.
   */
  private async poll(awaitGuards: boolean): Promise<number> {
    this.store.resetReadTxn();
    const now = this.clock.now();
    const changes = listDueSchedules(this.store, now, kBatch);
    const rollouts = listDueRollouts(this.store, now, kBatch);
    const readings = rollouts.filter((plan) => guardDue(plan, now) && !this.reading.has(plan.id)).map((plan) => this.readGuard(plan));
    await this.runChanges(changes);
    let stepping = rollouts;
    if (awaitGuards && readings.length > 0) {
      await Promise.all(readings);
      // The readings just recorded (a breach pauses the rollout): read again what is due.
      this.store.resetReadTxn();
      stepping = listDueRollouts(this.store, now, kBatch);
    }
    await this.advanceRollouts(stepping, now);
    return Math.max(changes.length, rollouts.length);
  }

  private async runChanges(changes: readonly ScheduledChange[]): Promise<void> {
    for (const change of changes) {
      if (this.stopped) return;
      try {
        const done = await this.work.runSchedule(change.id);
        if (done !== null) this.report(done);
      } catch (err) {
        this.log.warn({ err, scheduleId: change.id }, 'scheduled change: the write failed; retrying at the next poll');
      }
    }
  }

  /**
   * Takes the steps due. A rollout whose guard reading is due or still being read waits for it: its
   * guard is read before its step, so a breach found when the step falls due stops the step.
   */
  private async advanceRollouts(rollouts: readonly RolloutPlan[], now: number): Promise<void> {
    for (const plan of rollouts) {
      if (this.stopped) return;
      if (plan.status !== 'running' || plan.nextAt === null || plan.nextAt > now) continue;
      if (guardDue(plan, now) || this.reading.has(plan.id)) continue;
      try {
        const done = await this.work.advanceRollout(plan.id);
        if (done !== null) this.reportRollout(plan, done);
      } catch (err) {
        this.log.warn({ err, rolloutId: plan.id }, 'rollout: the write failed; retrying at the next poll');
      }
    }
  }

  /** Reads the plan's guard and records the reading, once at a time per rollout; never throws. */
  private readGuard(plan: RolloutPlan): Promise<void> {
    const dueAt = plan.guardNextAt!;
    const done = this.guards
      .read(plan)
      .then((reading) => (this.stopped ? null : this.work.recordGuardReading(plan.id, dueAt, reading)))
      .then((recorded) => {
        // null: stopped, or another node recorded this reading; the step is then any poll's to try (it runs once).
        if (recorded === null || recorded === undefined) return;
        if (recorded.status !== 'running') {
          this.log.warn(
            { rolloutId: plan.id, flagId: plan.flagId, env: plan.env, status: recorded.status, reading: recorded.guardReading },
            `rollout ${recorded.status}: ${recorded.pausedReason}`,
          );
        } else if (recorded.guardReading?.failures) {
          this.log.warn({ rolloutId: plan.id, reading: recorded.guardReading }, 'rollout guard: no reading');
        }
      })
      .catch((err) => this.log.warn({ err, rolloutId: plan.id }, 'rollout guard: the write failed; reading again at the next poll'))
      .finally(() => this.reading.delete(plan.id));
    this.reading.set(plan.id, done);
    return done;
  }

  private reportRollout(before: RolloutPlan, plan: RolloutPlan): void {
    const lateMs = plan.updatedAt - (before.nextAt ?? plan.updatedAt);
    const step = plan.steps[plan.current]!;
    const fields = {
      rolloutId: plan.id,
      flagId: plan.flagId,
      env: plan.env,
      status: plan.status,
      step: plan.current + 1,
      ...('variantWeights' in step ? { variantWeights: step.variantWeights } : { trafficPercentage: step.trafficPercentage }),
      lateMs,
    };
    if (plan.status === 'paused') this.log.warn({ ...fields, reason: plan.pausedReason }, 'rollout paused');
    else if (lateMs > kLateMs) this.log.warn(fields, `rollout step applied late, ${Math.round(lateMs / 1000)} s after it fell due`);
    else this.log.info(fields, 'rollout step applied');
  }

  private report(change: ScheduledChange): void {
    const lateMs = (change.doneAt ?? change.at) - change.at;
    const fields = {
      scheduleId: change.id,
      flagId: change.flagId,
      env: change.env,
      status: change.status,
      outcome: change.outcome,
      lateMs,
    };
    if (change.status === 'failed') this.log.warn(fields, 'scheduled change failed');
    else if (lateMs > kLateMs) this.log.warn(fields, `scheduled change applied late, ${Math.round(lateMs / 1000)} s after it fell due`);
    else this.log.info(fields, 'scheduled change applied');
  }
}

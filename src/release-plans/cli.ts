// Release plans on the command line: `flag schedule`, `flag rollout`, the lists of a project's
// scheduled changes and rollouts (a page at a time, src/release-plans/list-pages.ts), and the actions on
// one. Each change is one of the capability's writer commands, given the operator or the `--as` user.
import { principalOf } from '../actor/audit-actor.js';
import { parseIsoTime, UsageError, type Args } from '../cli/command/args.js';
import { bool, command, type CliCommand, jsonOption, kAsFlagEditor, str } from '../cli/command/cli-command.js';
import * as out from '../cli/command/output.js';
import { requireProject } from '../model/records/lookups.js';
import type { RolloutPlan, RolloutStep } from './rollouts.js';
import type { ScheduledChange } from './schedules.js';
import { kReleasePlanCommands } from './command-table.js';
import type { GuardInput } from './guards.js';
import { kDefaultPage, kMaxPage, pageAnswer, pageRequest } from './list-pages.js';
import { kRolloutActionSummary, kUnitMs, renderRollouts, renderSchedule, renderSchedules, rolloutStepsFromText } from './schedule-text.js';
import { kRolloutActions } from './schemas.js';
import { listRollouts, listSchedules } from './records.js';

/** The options of a list read a page at a time (src/release-plans/list-pages.ts). */
const kPageOptions = {
  limit: str('N', `entries per page, 1 to ${kMaxPage} (default ${kDefaultPage}); past the first, a page stops at 4 MiB`),
  after: str('NEXT', "where the page starts: the previous page's next"),
};

/** Under a page printed for a person: how to get the next one. */
function nextPageLine(next: string | null): string {
  return next === null ? '' : `\nMore: add --after ${next}`;
}

const kFlagScheduleUsage = 'flag schedule FLAG_ID --at TIME --patch JSON [--env NAME] [--as USER_ID]';
const kRelativeTime = /^\+(\d{1,9})(s|m|h|d)$/;

/** --at: an ISO-8601 date-time with a zone, or `+N` seconds, minutes, hours or days from now (`+30m`). */
function scheduleTime(args: Args, now: number): number {
  const raw = args.required('at');
  const relative = kRelativeTime.exec(raw);
  if (relative) return now + Number(relative[1]) * kUnitMs[relative[2]!]!;
  const at = parseIsoTime(raw);
  if (at === null)
    throw new UsageError(
      `--at must be an ISO-8601 date-time with a zone (2031-06-30T09:00:00Z) or +N s, m, h or d from now (+30m), not "${raw}"`,
      `Usage: flagwire ${kFlagScheduleUsage}`,
    );
  return at;
}
const kFlagRolloutUsage =
  'flag rollout FLAG_ID --steps STEP:HOLD,...,STEP [--guard-prometheus EXPR | --guard-metric SELECTOR] [--guard-max N] [--guard-min N] [--guard-every 30s] [--on-breach pause|rollback] [--env NAME] [--as USER_ID]';

/** The guard the --guard-* options describe; undefined when none is given (checked by the writer, as the API's). */
function rolloutGuard(args: Args): GuardInput | undefined {
  const prometheus = args.string('guard-prometheus');
  const flagwire = args.string('guard-metric');
  const given = ['guard-prometheus', 'guard-metric', 'guard-max', 'guard-min', 'guard-every', 'on-breach'].filter(
    (o) => args.string(o) !== undefined,
  );
  if (given.length === 0) return undefined;
  const usage = `Usage: flagwire ${kFlagRolloutUsage}`;
  const number = (option: string) => {
    const raw = args.string(option);
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${option}: "${raw}" is not a number`, usage);
    return n;
  };
  const guard: GuardInput = {};
  if (prometheus !== undefined) guard.prometheus = prometheus;
  if (flagwire !== undefined) guard.flagwire = flagwire;
  const max = number('guard-max');
  const min = number('guard-min');
  if (max !== undefined) guard.max = max;
  if (min !== undefined) guard.min = min;
  const every = args.string('guard-every');
  if (every !== undefined) {
    const m = /^(\d{1,9})(s|m|h)$/.exec(every);
    if (!m) throw new UsageError(`--guard-every: "${every}" is not a duration (N s/m/h: 30s, 1m)`, usage);
    guard.intervalMs = Number(m[1]) * kUnitMs[m[2]!]!;
  }
  const onBreach = args.string('on-breach');
  if (onBreach !== undefined) {
    if (onBreach !== 'pause' && onBreach !== 'rollback') throw new UsageError(`--on-breach: "${onBreach}" is not pause or rollback`, usage);
    guard.onBreach = onBreach;
  }
  return guard;
}

/** --steps: percentages or variant weights, each but the last held for a duration (rolloutStepsFromText). */
function rolloutSteps(text: string): RolloutStep[] {
  const read = rolloutStepsFromText(text);
  if ('problem' in read) throw new UsageError(`--steps: ${read.problem}`, `Usage: flagwire ${kFlagRolloutUsage}`);
  return read.steps;
}

/** In the order the command line's index lists them. */
export const kReleasePlanCli: readonly CliCommand[] = [
  command({
    name: 'flag schedule',
    usage: kFlagScheduleUsage,
    summary: 'schedule a change of a flag: a PATCH body applied at a time, audited as plan:<id> -> the scheduled change',
    positionals: ['FLAG_ID'],
    options: {
      at: str('TIME', 'when: an ISO-8601 date-time with a zone (2031-06-30T09:00:00Z), or +N s/m/h/d from now (+30m, +2d)', true),
      patch: str('JSON', 'what to change: a PATCH body ({"enabled": true}, {"trafficPercentage": 50}, variants, rules ...)', true),
      env: str('NAME', "a group flag's environment (required there)"),
      as: str('USER_ID', kAsFlagEditor),
    },
    notes:
      'The running server applies it when it falls due (a change due while no server ran is applied when one starts, logged as late), once, even with several nodes; it is checked now and again then. `schedule cancel` cancels it until then.',
    run(args, ctx) {
      const help = `Usage: flagwire ${kFlagScheduleUsage}`;
      const at = scheduleTime(args, ctx.now);
      const patch = jsonOption('patch', args.required('patch'), help);
      return ctx.write(kReleasePlanCommands.scheduleCreate, {
        flagId: args.positional('FLAG_ID'),
        env: args.string('env') ?? null,
        body: { at, patch },
        principal: principalOf(args.string('as')),
      });
    },
    human: (change: ScheduledChange) => renderSchedule(change, out.renderTable),
  }),
  command({
    name: 'flag rollout',
    usage: kFlagRolloutUsage,
    summary:
      "start a progressive rollout of a flag's traffic percentage or of its variant weights: the first step now, each next after its hold -> the rollout",
    positionals: ['FLAG_ID'],
    options: {
      steps: str(
        'STEP:HOLD,...',
        'steps in order, each but the last held for a duration (N s/m/h/d): percentages (10:1h,50:1h,100), or variant weights, VARIANT=WEIGHT joined by / (on=10/off=90:1h,on=50/off=50:1h,on=100/off=0)',
        true,
      ),
      'guard-prometheus': str('EXPR', 'guard: a PromQL expression asked of FLAGWIRE_PROMETHEUS_URL by the running server'),
      'guard-metric': str(
        'SELECTOR',
        'guard: a metric of the running server, name{label="value"} (a counter is read as its rate per second)',
      ),
      'guard-max': str('N', 'a reading above N is a breach'),
      'guard-min': str('N', 'a reading below N is a breach'),
      'guard-every': str('DURATION', 'how often the guard is read (N s/m/h; default 30s)'),
      'on-breach': str('pause|rollback', 'what a breach does (default pause)'),
      env: str('NAME', "a group flag's environment (required there)"),
      as: str('USER_ID', kAsFlagEditor),
    },
    notes:
      'The running server takes each next step when its hold ends, audited as plan:<id>. A step of variant weights sets the flag\'s targeting to flagd\'s split, {"fractional": [[VARIANT, WEIGHT], ...]}: the flag needs typed variants and a targeting of {} or a bare fractional. A change made by hand to the percentage (or the targeting) pauses the rollout (it says why); `rollout resume` sets its step again. With a guard, the server reads it every interval while the rollout runs; a reading above --guard-max or below --guard-min pauses it (or rolls it back with --on-breach rollback), the reading in the audit entry.',
    run: (args, ctx) =>
      ctx.write(kReleasePlanCommands.rolloutStart, {
        flagId: args.positional('FLAG_ID'),
        env: args.string('env') ?? null,
        body: { steps: rolloutSteps(args.required('steps')), guard: rolloutGuard(args) },
        principal: principalOf(args.string('as')),
        // The operator's own command: not held to FLAGWIRE_PROMETHEUS_METRICS here (the server is, at every reading).
        guardMetrics: null,
      }),
    human: (plan: RolloutPlan) => renderRollouts([plan], out.renderTable),
  }),
  command({
    name: 'rollout list',
    usage: 'rollout list PROJECT_ID [--limit N] [--after NEXT]',
    summary: "a page of a project's rollouts, oldest first -> {rollouts: [...], next}",
    positionals: ['PROJECT_ID'],
    options: kPageOptions,
    run: (args, ctx) =>
      ctx.read((r) => {
        const page = pageRequest(args.string('limit'), args.string('after'));
        return pageAnswer('rollouts', listRollouts(r, requireProject(r, args.positional('PROJECT_ID')).id, page), (p) => p);
      }),
    human: (result: { rollouts: RolloutPlan[]; next: string | null }) =>
      renderRollouts(result.rollouts, out.renderTable) + nextPageLine(result.next),
  }),
  ...kRolloutActions.map((action) =>
    command({
      name: `rollout ${action}`,
      usage: `rollout ${action} ROLLOUT_ID [--as USER_ID]`,
      summary: kRolloutActionSummary[action],
      positionals: ['ROLLOUT_ID'],
      options: { as: str('USER_ID', kAsFlagEditor) },
      run: (args, ctx) =>
        ctx.write(kReleasePlanCommands.rolloutAct, {
          rolloutId: args.positional('ROLLOUT_ID'),
          action,
          principal: principalOf(args.string('as')),
        }),
      human: (plan: RolloutPlan) => renderRollouts([plan], out.renderTable),
    }),
  ),
  command({
    name: 'schedule list',
    usage: 'schedule list PROJECT_ID [--pending] [--limit N] [--after NEXT]',
    summary: "a page of a project's scheduled changes, pending and done, by due time -> {schedules: [...], next}",
    positionals: ['PROJECT_ID'],
    options: { ...kPageOptions, pending: bool('only the changes still to apply') },
    run: (args, ctx) =>
      ctx.read((r) => {
        const page = { ...pageRequest(args.string('limit'), args.string('after')), pendingOnly: args.flag('pending') };
        return pageAnswer('schedules', listSchedules(r, requireProject(r, args.positional('PROJECT_ID')).id, page), (c) => c);
      }),
    human: (result: { schedules: ScheduledChange[]; next: string | null }) =>
      renderSchedules(result.schedules, out.renderTable) + nextPageLine(result.next),
  }),
  command({
    name: 'schedule cancel',
    usage: 'schedule cancel SCHEDULE_ID [--as USER_ID]',
    summary: 'cancel a pending scheduled change -> the scheduled change',
    positionals: ['SCHEDULE_ID'],
    options: { as: str('USER_ID', kAsFlagEditor) },
    run: (args, ctx) =>
      ctx.write(kReleasePlanCommands.scheduleCancel, {
        scheduleId: args.positional('SCHEDULE_ID'),
        principal: principalOf(args.string('as')),
      }),
    human: (change: ScheduledChange) => renderSchedule(change, out.renderTable),
  }),
];

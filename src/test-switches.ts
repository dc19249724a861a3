// The switches only the tests and the bench set (FLAGWIRE_TEST_*), kept apart from the user's settings
// (src/config.ts, docs/configuration.md): read once, when this module loads, in each thread that asks
// (a worker thread's environment is a copy of its parent's, so every thread reads the same values).
// Fault injection, the console hold and the rate-limit switch act only with FLAGWIRE_TEST_HOOKS=1, so no
// production setting reaches them; the change stream's and the follower's timings are plain test knobs
// (shorter or longer heartbeats, and a reader dropped sooner). docs/architecture.md, "Test switches", lists them.
export interface TestSwitches {
  /** FLAGWIRE_TEST_HOOKS=1: the /__test routes, the console's hook lines and the switches below. */
  readonly hooks: boolean;
  /** FLAGWIRE_TEST_RATE_LIMIT=off: the bench's twin without the per-IP limit ((j)/(k)). */
  readonly rateLimitOff: boolean;
  /** FLAGWIRE_TEST_EVAL_CRASH_ID / _HANG_ID: an eval worker asked for this flag id dies / hangs. */
  readonly evalCrashFlagId: string | null;
  readonly evalHangFlagId: string | null;
  /** FLAGWIRE_TEST_CONSOLE_HOLD=1: a console write stops inside its transaction and after its commit until stdin has a byte. */
  readonly consoleHold: boolean;
  /** FLAGWIRE_TEST_STREAM_HEARTBEAT_MS / _MAX_STALL_MS (positive whole numbers): the change stream's heartbeat and slow-reader bound. */
  readonly streamHeartbeatMs: number | null;
  readonly streamMaxStallMs: number | null;
  /**
   * FLAGWIRE_TEST_REPLICA_HEARTBEAT_MS (a positive whole number): how often a PostgreSQL node's follower
   * reads the latest revision besides the notices; a test makes it longer than itself to prove a change
   * came by notice.
   */
  readonly replicaHeartbeatMs: number | null;
  /**
   * FLAGWIRE_TEST_ACTIVITY_FLUSH_MS (a positive whole number): how often a front end writes its tokens'
   * activity (1 s otherwise); a test makes it longer than itself when each write's revision would land
   * between a change and what it checks of the change log.
   */
  readonly activityFlushMs: number | null;
  /**
   * FLAGWIRE_TEST_READ_FLUSH_MS (a positive whole number): how often a node writes the flag set reads it
   * marked (src/sync/read-recorder.ts; a minute otherwise), so a test sees a stock flagd provider's read
   * in the lifecycle without waiting a minute.
   */
  readonly readFlushMs: number | null;
  /**
   * FLAGWIRE_TEST_CAPABILITY: the URL of a module exporting `testCapability`, a capability every thread of
   * this process lists after Flagwire's own (src/capabilities.ts): the test-only capability of
   * test/helpers/widget-capability.ts, run by a server, a relay and the command line.
   */
  readonly capabilityModule: string | null;
  /**
   * FLAGWIRE_TEST_EVENTS_CRASH_BATCH_ID: the first events thread of each front end dies (an uncaught
   * error) once it has counted the batch of this batch id, before it answers it (src/events/events-thread.ts).
   */
  readonly eventsCrashBatchId: string | null;
  /**
   * FLAGWIRE_TEST_PORTS_UNTRIED=1: start-up does not try its ports before it starts (src/server/listen.ts),
   * so a taken one is found where a port taken after that try is, at listening, with the writer, the
   * threads and a relay's follower running (test/relay/relay-ports.test.ts).
   */
  readonly portsUntried: boolean;
  /**
   * FLAGWIRE_TEST_PASSWORD_COST (a whole number from 1 to 14): console passwords are hashed with scrypt's
   * N = 2^this instead of 2^15 (src/model/passwords.ts). The test runner sets it for every file, as test
   * suites of password-keeping services lower their hash's cost: a hash at the real cost is slow and
   * takes 32 MiB on purpose, and the suite's sign-ins, demo starts and password commands made it the largest single
   * item of the suite's CPU. A hash names its own cost, so either kind verifies wherever it is read.
   */
  readonly passwordCostLog2: number | null;
}

/** What FLAGWIRE_TEST_PASSWORD_COST may be: a cost below the real one (any other value is ignored). */
const kLowerPasswordCosts = new Set(Array.from({ length: 14 }, (_, i) => String(i + 1)));

/** The FLAGWIRE_TEST_* switches of `env` (see TestSwitches). */
export function readTestSwitches(env: NodeJS.ProcessEnv): TestSwitches {
  const hooks = env.FLAGWIRE_TEST_HOOKS === '1';
  const positive = (raw: string | undefined) => (Number(raw) > 0 ? Math.floor(Number(raw)) : null);
  return Object.freeze({
    hooks,
    rateLimitOff: hooks && env.FLAGWIRE_TEST_RATE_LIMIT === 'off',
    evalCrashFlagId: (hooks && env.FLAGWIRE_TEST_EVAL_CRASH_ID) || null,
    evalHangFlagId: (hooks && env.FLAGWIRE_TEST_EVAL_HANG_ID) || null,
    consoleHold: hooks && env.FLAGWIRE_TEST_CONSOLE_HOLD === '1',
    streamHeartbeatMs: positive(env.FLAGWIRE_TEST_STREAM_HEARTBEAT_MS),
    streamMaxStallMs: positive(env.FLAGWIRE_TEST_STREAM_MAX_STALL_MS),
    replicaHeartbeatMs: positive(env.FLAGWIRE_TEST_REPLICA_HEARTBEAT_MS),
    activityFlushMs: positive(env.FLAGWIRE_TEST_ACTIVITY_FLUSH_MS),
    readFlushMs: positive(env.FLAGWIRE_TEST_READ_FLUSH_MS),
    capabilityModule: (hooks && env.FLAGWIRE_TEST_CAPABILITY) || null,
    eventsCrashBatchId: (hooks && env.FLAGWIRE_TEST_EVENTS_CRASH_BATCH_ID) || null,
    portsUntried: hooks && env.FLAGWIRE_TEST_PORTS_UNTRIED === '1',
    passwordCostLog2: kLowerPasswordCosts.has(env.FLAGWIRE_TEST_PASSWORD_COST ?? '') ? Number(env.FLAGWIRE_TEST_PASSWORD_COST) : null,
  });
}

/** This process's test switches: all off unless a test or the bench set them. */
export const kTestSwitches: TestSwitches = readTestSwitches(process.env);

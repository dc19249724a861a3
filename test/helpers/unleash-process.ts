// A real Unleash (the npm package unleash-server, 7.5.1: the last line that runs on Node 20) in a
// process of its own, for test/helpers/unleash-server.ts: on loopback, against the PostgreSQL database
// it is given, with the API tokens it is given made at start (Unleash's authentication.initApiTokens),
// and nothing sent out (no version check, no telemetry). It prints `ready PORT` once it listens.
import { start } from 'unleash-server';

const kTokens = JSON.parse(process.env.UNLEASH_TEST_TOKENS ?? '[]') as {
  secret: string;
  type: string;
  project: string;
  environment: string;
}[];

const unleash = await start({
  databaseUrl: process.env.UNLEASH_TEST_DATABASE_URL,
  db: { ssl: false, pool: { min: 0, max: 4 } },
  server: { host: '127.0.0.1', port: Number(process.env.UNLEASH_TEST_PORT), gracefulShutdownEnable: false },
  authentication: {
    type: 'open-source',
    createAdminUser: false,
    initApiTokens: kTokens.map((t) => ({
      secret: t.secret,
      type: t.type,
      projects: [t.project],
      environment: t.environment,
      tokenName: `test-${t.type}`,
    })),
  },
  versionCheck: { enable: false },
  telemetry: false,
  logLevel: 'error',
} as Parameters<typeof start>[0]);
process.stdout.write('ready\n');
const stop = () => void unleash.stop().finally(() => process.exit(0));
process.once('SIGTERM', stop);
// Its standard input is a pipe from the test: closed when the test process ends, however it ends, so an
// Unleash never outlives the file that started it.
process.stdin.once('close', stop);
process.stdin.resume();

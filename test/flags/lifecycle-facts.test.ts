// A flag's lifecycle read from what the server knows (issue 99): the code scans pushed for its project
// (never scanned, scanned without the key, scanned with it) and whether a path that reports nothing may
// evaluate it (a flagd flag set serving it), through the writer's own commands, in process.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { flagLifecycle, projectFacts } from '../../src/flags/lifecycle-facts.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { getProject } from '../../src/model/records/project-records.js';
import { jsonBody } from '../../src/model/request-body.js';
import type { Flag } from '../../src/model/flags.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());
const kDayMs = 24 * 3600 * 1000;

const created = world.run('flagCreate', {
  projectId: world.ids.single,
  principal: kOperator,
  body: { name: 'done-release', enabled: false, trafficPercentage: 0 },
});
const project = () => {
  world.store.resetReadTxn();
  return getProject(world.store, world.ids.single)!;
};
const flag = (): Flag => getFlag(world.store, created.id)!;
const reference = (key: string, line: number) => ({
  file: 'src/app.ts',
  line,
  column: 30,
  language: 'typescript',
  sdk: 'openfeature' as const,
  method: 'getBooleanValue',
  kind: 'literal' as const,
  key,
  expression: `'${key}'`,
  context: [`client.getBooleanValue('${key}', false)`],
  contextStart: line,
});
const push = (references: ReturnType<typeof reference>[]) =>
  world.run('codeRefsPush', {
    principal: kOperator,
    projectId: world.ids.single,
    received: jsonBody(JSON.stringify({ repository: 'acme/app', branch: 'main', commit: 'c1', references })),
  });
// Past a release's 40-day lifetime, and unchanged for the whole 30-day window: settled, off everywhere.
const later = () => flag().createdAt + 45 * kDayMs;

t.test('never scanned: no count of references, and a flag a flag set serves is not known unused', async (t) => {
  const facts = projectFacts(world.store, project(), later());
  t.equal(facts.codeReferences(flag()), undefined, 'no scan pushed: unknown, not zero');
  t.equal(facts.usageKnown(flag()), false, 'a stock flagd provider may read its flag set and report nothing');
  const view = flagLifecycle(world.store, flag(), project(), later());
  t.equal(view.codeReferences, null);
  t.equal(view.usageKnown, false);
  t.equal(view.stage, 'settled', 'settled, never ready to archive on missing data');
});

t.test('a scan that names the key holds the flag back; one that does not lets it go', async (t) => {
  push([reference('done-release', 3), reference('done-release', 9), reference('another-flag', 12)]);
  t.equal(projectFacts(world.store, project(), later()).codeReferences(flag()), 2, 'its two call sites counted');
  t.equal(flagLifecycle(world.store, flag(), project(), later()).stage, 'settled', 'referenced in code: not ready');

  push([reference('another-flag', 12)]);
  const view = flagLifecycle(world.store, flag(), project(), later());
  t.equal(view.codeReferences, 0, "the branch's new scan replaced the old one");
  t.equal(view.stage, 'ready-to-archive', 'settled, past its lifetime, in no code');
  t.equal(flagLifecycle(world.store, flag(), project(), flag().createdAt + 10 * kDayMs).stage, 'new', 'within its lifetime: not yet');
});

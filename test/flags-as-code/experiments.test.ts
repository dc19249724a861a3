// Experiments in a flag file, in process (issue 59, item 1; docs/flags-as-code.md: Experiments): a file
// declares them under `experiments`, plan shows each made, changed and deleted field by field, apply makes
// them through the experiments' own commands and runs one exactly while its flag state names it (the
// key wins: docs/decisions.md); a change to a running experiment's plan or to its flag's allocation is
// refused as the API refuses it, nothing written; export writes them back, and the export plans to
// nothing; a file without `experiments` leaves them alone; prune deletes the undeclared; a guarded
// environment holds a start as a change request, applied when approved; a token applies them in its
// environments only; an export applied to an empty project exports again to the same bytes.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { flagsPlan } from '../../src/flags-as-code/apply-commands.js';
import { fileText } from '../../src/flags-as-code/flag-file.js';
import { renderPlan } from '../../src/flags-as-code/plan-text.js';
import { getExperiment, putExperiment } from '../../src/experiments/records.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { jsonBody } from '../../src/model/request-body.js';
import { type ExportedFile, exportedFile } from '../helpers/flag-file-export.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const world = buildWorld(tempDataDir());
const { ids } = world;
const key = 'checkout-2026';

/** The experiment a file declares on the single project's `checkout` flag: off (the control) against on. */
const declared = (weights = [50, 50]) => ({
  flag: 'checkout',
  variants: [
    { variant: 'off', weight: weights[0] },
    { variant: 'on', weight: weights[1] },
  ],
  control: 'off',
  metrics: [
    { metric: 'purchase', kind: 'conversion' },
    { metric: 'revenue', kind: 'mean' },
  ],
  primaryMetric: 'purchase',
  plannedSubjects: 20_000,
});

/** The single project's export with `edit` made to its `checkout` flag and `experiments` set (undefined: none). */
function fileWith(experiments: unknown, edit: Record<string, unknown> = {}): ExportedFile {
  const file = exportedFile(world, ids.single);
  file.flags.checkout = { ...file.flags.checkout, ...edit };
  if (experiments === undefined) delete file.experiments;
  else file.experiments = experiments;
  return file;
}

function plan(projectId: string, document: unknown, prune = false) {
  world.store.resetReadTxn();
  return flagsPlan(world.store, { projectId, document, prune });
}

const applyInput = (projectId: string, document: unknown, prune = false) => ({
  principal: kOperator,
  projectId,
  received: jsonBody(JSON.stringify(document)),
  prune,
  ifProjectRevision: null,
  ifPlan: null,
});
const apply = (projectId: string, document: unknown, prune = false, now?: number) =>
  world.run('flagsApply', applyInput(projectId, document, prune), now);

function stored(projectId = ids.single, env: string | null = null, k = key) {
  world.store.resetReadTxn();
  return getExperiment(world.store, projectId, env, k);
}
function flagKey(flagId = ids.flag, env: string | null = null) {
  world.store.resetReadTxn();
  return effectiveState(getFlag(world.store, flagId)!, env).experiment;
}
/** Every record a refused apply could have written: the world's, and the experiment's. */
const records = () => `${world.snapshot()}${JSON.stringify(stored() ?? null)}`;

t.test('a file without experiments plans none and leaves them alone (the file as before)', async (t) => {
  const file = fileWith(undefined);
  t.notOk('experiments' in exportedFile(world, ids.single), 'a project without experiments exports none');
  t.same(plan(ids.single, file).changes, []);
});

t.test('declared and named by its flag state: plan shows it made and run, apply makes and starts it, export writes it back', async (t) => {
  const file = fileWith({ [key]: declared() }, { experiment: key });
  const planned = plan(ids.single, file);
  t.same(
    planned.changes.map((c) => [c.op, c.kind, c.name]),
    [
      ['update', 'flag', 'checkout'],
      ['create', 'experiment', key],
    ],
  );
  t.same(planned.changes[0]!.fields, [{ path: 'experiment', before: null, after: key }]);
  t.same(
    planned.changes[1]!.fields.map((f) => [f.path, f.after]),
    [
      ['flag', 'checkout'],
      ['variants', declared().variants],
      ['control', 'off'],
      ['metrics', declared().metrics],
      ['primaryMetric', 'purchase'],
      ['plannedSubjects', 20_000],
      ['alpha', 0.05],
      ['running', true],
    ],
  );
  t.match(renderPlan(planned), /\+ experiment checkout-2026\n {4}flag: "checkout"\n/);

  const applied = apply(ids.single, file, false, 5_000);
  t.equal(applied.changed, true);
  t.match(stored(), { flagId: ids.flag, startedAt: 5_000, stoppedAt: null, plannedSubjects: 20_000 });
  t.equal(flagKey(), key, "its flag's state carries the key");
  world.store.resetReadTxn();
  const actions = world.store.listAudit(ids.single, { limit: 5, before: null }).map((e) => e.action);
  t.same(actions.slice(0, 3), ['experiment.start', 'experiment.create', 'flag.patch'], 'each change audited by its own command');

  const exported = exportedFile(world, ids.single);
  t.same(exported.experiments, { [key]: { ...declared(), alpha: 0.05 } }, 'export writes it back, alpha included');
  t.same(plan(ids.single, exported).changes, [], 'the export plans to nothing');
  t.equal(fileText(exportedFile(world, ids.single)), fileText(exported), 'the same bytes again');
  t.same(apply(ids.single, file).changes, [], 'applying the file again changes nothing');
});

t.test('a running experiment: its plan and its flag allocation are refused as the API refuses them, nothing written', async (t) => {
  const before = records();
  const weights = fileWith({ [key]: declared([1, 3]) }, { experiment: key });
  t.match(
    plan(ids.single, weights).changes,
    [{ op: 'update', kind: 'experiment', name: key, fields: [{ path: 'variants' }] }],
    'plan shows the change',
  );
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => apply(ids.single, weights)),
    /experiments\.checkout-2026: Experiment "checkout-2026" is running: its plan .* cannot change while it runs/,
  );
  const traffic = fileWith({ [key]: declared() }, { experiment: key, trafficPercentage: 80 });
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => apply(ids.single, traffic)),
    /Flag checkout runs experiment "checkout-2026".*nothing was changed/,
  );
  t.equal(records(), before, 'the experiment and its flag as they were');
  const described = fileWith({ [key]: declared() }, { experiment: key, description: 'still running' });
  t.equal(apply(ids.single, described).changed, true, 'what does not move the allocation passes');
});

t.test('the flag state drops the key: stopped (before its plan changes); names it again: started again', async (t) => {
  const file = fileWith({ [key]: declared([1, 3]) });
  delete file.flags.checkout!.experiment;
  const planned = plan(ids.single, file);
  t.match(planned.changes.at(-1), {
    kind: 'experiment',
    fields: [
      { path: 'variants', after: declared([1, 3]).variants },
      { path: 'running', before: true, after: false },
    ],
  });
  apply(ids.single, file, false, 9_000);
  t.match(stored(), { stoppedAt: 9_000, variants: declared([1, 3]).variants }, 'stopped, then changed');
  t.equal(flagKey(), undefined);

  apply(ids.single, fileWith({ [key]: declared([1, 3]) }, { experiment: key }), false, 10_000);
  t.match(stored(), { startedAt: 10_000, stoppedAt: null });
  t.equal(flagKey(), key);
});

t.test('the key wins: a record still running after the key was ended on the flag plans as stopping, and apply stops it', async (t) => {
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () =>
      world.run('flagPatch', { principal: kOperator, flagId: ids.flag, env: null, patch: { experiment: null } }),
    ),
    /runs experiment "checkout-2026": its experiment key cannot be changed or dropped while the experiment runs.*Stop the experiment first/,
    'the key is no longer ended on the flag while the experiment runs',
  );
  t.equal(flagKey(), key);
  // What an older build let a flag patch leave: the key ended on the flag, the record still running.
  const running = stored()!;
  world.run('experimentStop', { principal: kOperator, projectId: ids.single, env: null, key }, 11_000);
  world.store.transact((w) => putExperiment(w, running));
  t.equal(flagKey(), undefined);
  t.match(stored(), { stoppedAt: null }, 'the record still says running');
  const exported = exportedFile(world, ids.single);
  t.notOk('experiment' in exported.flags.checkout!, 'the export writes what evaluation reads: no key');
  t.match(plan(ids.single, exported).changes, [{ kind: 'experiment', fields: [{ path: 'running', before: true, after: false }] }]);
  apply(ids.single, exported, false, 12_000);
  t.match(stored(), { stoppedAt: 12_000 }, 'reconciled: stopped');
  t.same(plan(ids.single, exportedFile(world, ids.single)).changes, []);
});

t.test('a bad declaration is refused naming each place, and nothing is written', async (t) => {
  const before = records();
  const bad = fileWith(
    {
      [key]: { ...declared(), control: 'both' },
      'Bad Key': declared(),
      elsewhere: { ...declared(), flag: 'nope', primaryMetric: 'clicks' },
    },
    { experiment: 'undeclared' },
  );
  const detail = refusedCommand(t, world, 'INVALID_REQUEST', () => apply(ids.single, bad));
  for (const problem of [
    /experiments\.checkout-2026\.control: "both" must be one of variants/,
    /experiments\["Bad Key"\]: an experiment key is a slug/,
    /experiments\.elsewhere\.flag: "nope" is not one of the file's flags/,
    /experiments\.elsewhere\.primaryMetric: "clicks" must be one of metrics/,
    /flags\.checkout\.experiment: "undeclared" is not among the file's experiments on this flag/,
  ])
    t.match(detail, problem);
  t.throws(() => plan(ids.single, bad), /The file cannot be applied/, 'plan refuses it too');
  t.equal(records(), before);
});

t.test('an experiment the file does not declare is kept and named, or with prune deleted', async (t) => {
  const file = fileWith({});
  const kept = plan(ids.single, file);
  t.same(kept.changes, []);
  t.same(kept.notInFile, [`experiment ${key}`]);
  const pruned = plan(ids.single, file, true);
  t.match(pruned.changes, [{ op: 'delete', kind: 'experiment', name: key, fields: [] }]);
  apply(ids.single, file, true);
  t.equal(stored(), undefined, 'deleted');
});

t.test('a multi-environment file: by environment, then key; a guarded environment holds the start as a change request', async (t) => {
  const file = exportedFile(world, ids.multi);
  const search = file.flags.search as { environments: Record<string, Record<string, unknown>> };
  search.environments.production = { ...search.environments.production, experiment: 'search-exp' };
  file.experiments = { production: { 'search-exp': { ...declared(), flag: 'search' } } };
  const planned = plan(ids.multi, file);
  t.match(planned.changes.at(-1), { op: 'create', kind: 'experiment', name: 'search-exp', environment: 'production' });
  t.match(renderPlan(planned), /\+ experiment search-exp in production\n/);

  world.run('approvalsSet', { projectId: ids.multi, env: 'production', required: 1, principal: principalOf(ids.admin) });
  const outcome = world.outcome('flagsApply', { ...applyInput(ids.multi, file), principal: principalOf(ids.editor) });
  t.notOk(outcome.applied, 'held as a change request');
  t.equal(stored(ids.multi, 'production', 'search-exp'), undefined, 'nothing made yet');
  t.equal(flagKey(ids.groupFlag, 'production'), undefined, 'its flag carries no key');
  if (!outcome.applied) world.run('requestApprove', { requestId: outcome.request.id, principal: principalOf(ids.admin) }, 20_000);
  t.match(stored(ids.multi, 'production', 'search-exp'), { startedAt: 20_000, stoppedAt: null }, 'approved: made and running');
  t.equal(flagKey(ids.groupFlag, 'production'), 'search-exp', 'its flag carries the key');

  const staging = exportedFile(world, ids.multi);
  t.same(Object.keys(staging.experiments as object), ['production'], 'the export declares the approved one');
  staging.experiments = { ...(staging.experiments as object), staging: { 'search-exp': { ...declared(), flag: 'search' } } };
  (staging.flags.search as typeof search).environments.staging!.experiment = 'search-exp';
  t.match(apply(ids.multi, staging).changes.at(-1), { kind: 'experiment', environment: 'staging' });
  t.match(stored(ids.multi, 'staging', 'search-exp'), { stoppedAt: null }, 'an unguarded environment starts at once');
  t.same(
    Object.keys(exportedFile(world, ids.multi).experiments as object),
    ['staging', 'production'],
    "by environment, in the project's order",
  );
});

t.test("a token applies experiments as it makes them: in its environments, and refused another's, nothing written", async (t) => {
  const token = { kind: 'token' as const, tokenId: world.tokenIds.stagingWrite! };
  const declaring = (env: string) => {
    const file = exportedFile(world, ids.multi);
    const experiments = file.experiments as Record<string, Record<string, unknown>>;
    experiments[env] = { ...experiments[env], 'token-exp': { ...declared(), flag: 'search' } };
    return { ...applyInput(ids.multi, file), principal: token };
  };
  t.match(
    refusedCommand(t, world, 'ENVIRONMENT_NOT_PERMITTED', () => world.run('flagsApply', declaring('production'))),
    /limited to: staging/,
  );
  t.equal(stored(ids.multi, 'production', 'token-exp'), undefined, 'nothing made');
  const applied = world.run('flagsApply', declaring('staging'));
  t.match(applied.changes, [{ op: 'create', kind: 'experiment', name: 'token-exp', environment: 'staging' }]);
  t.match(
    stored(ids.multi, 'staging', 'token-exp'),
    { startedAt: null, createdBy: `token:${world.tokenIds.stagingWrite}` },
    'made, as the token',
  );
});

t.test('exported, applied to an empty project and exported again: the same bytes, experiments and their runs included', async (t) => {
  const text = fileText(exportedFile(world, ids.multi));
  t.match(text, /"experiments": \{\n {4}"staging": \{\n {6}"search-exp"/, 'the export declares experiments');
  const copy = world.run('projectCreate', {
    principal: kOperator,
    name: 'Platform copy',
    orgId: ids.orgA,
    kind: 'multi',
    environments: ['staging', 'production'],
  }).id;
  apply(copy, JSON.parse(text));
  t.equal(fileText(exportedFile(world, copy)), text, 'the same bytes');
  t.match(stored(copy, 'production', 'search-exp'), { stoppedAt: null, startedAt: Number }, 'running where its flag names it');
  t.match(stored(copy, 'staging', 'token-exp'), { startedAt: null }, 'a draft where none does');
});

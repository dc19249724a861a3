// `flagwire flags import` of Flagwire's own flagd export of flags running experiments (issue 58): the
// export names each exposure in a twin variant (src/flags/flagd-flag.ts); the import takes the flag back
// to what the export says of the same state without the twins (src/flags/flagd-exposure-undo.ts). An
// export -> import round trip gives flags that OFREP answers as it answers the originals (value, variant,
// error; the reason as the export's documented differences allow), stored as the import of the same
// export without the experiment stores them (experimentKey kept in the metadata); a hand-edited document
// with the marker but a shape the export never writes is refused, naming the flag, and changes nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { compileState } from '../../src/evaluation/engine/evaluate.js';
import { compileVariants } from '../../src/evaluation/engine/variants.js';
import { decidedBy, decisionValue } from '../../src/evaluation/engine/evaluate.js';
import { FlagwireError } from '../../src/errors.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { listFlags } from '../../src/flags/records/flag-store.js';
import { exportProject } from '../../src/flags-as-code/export.js';
import type { Flag } from '../../src/model/flags.js';
import type { FlagCreate } from '../../src/model/schemas.js';
import { OfrepContext } from '../../src/ofrep/context.js';
import { kReasons, kSlotKeyMissing, ofrepAnswer } from '../../src/ofrep/answer.js';
import { buildWorld } from '../helpers/world.js';
import { kDocumentedReasons } from '../sync/flag-set-differential.js';
import { getProject, listAudiences } from '../../src/model/records/project-records.js';

const kNow = Date.now();
const kContexts = 600;

const dir = mkdtempSync(join(tmpdir(), 'flagwire-flagd-import-exposures-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const world = buildWorld(dir);
const project = (name: string) => world.run('projectCreate', { principal: kOperator, name, orgId: world.ids.orgA, kind: 'single' }).id;
const source = project('Experiments');
const audienceId = world.run('audienceCreate', {
  principal: kOperator,
  projectId: source,
  name: 'Pro',
  rules: [
    { attribute: 'plan', values: ['pro', '1'] },
    { attribute: 'region', values: ['eu'] },
  ],
}).id;

const kOriginals: FlagCreate[] = [
  // A boolean split behind cohorts and an audience: both sides of the split are exposures.
  {
    name: 'bool-split',
    enabled: true,
    trafficPercentage: 40,
    bucketing: 'fractional',
    experiment: 'exp-bool',
    cohorts: ['vip'],
    audienceId,
  },
  { name: 'bool-bare', enabled: true, trafficPercentage: 25, bucketing: 'fractional', experiment: 'exp-bare' },
  // A typed flag with a rule at 100%: the rule wrapped so that a variant it names becomes its twin.
  {
    name: 'typed-rule',
    enabled: true,
    trafficPercentage: 100,
    experiment: 'exp-rule',
    variants: { red: 'r', blue: 'b', green: 'g' },
    defaultVariant: 'red',
    targeting: { if: [{ in: [{ var: 'plan' }, ['pro']] }, 'blue', { '==': [{ var: 'tier' }, 'gold'] }, 'green', null] },
    metadata: { team: 'web' },
  },
  // Typed splits, with a rule behind cohorts and an audience, and without one.
  {
    name: 'typed-split',
    enabled: true,
    trafficPercentage: 30,
    bucketing: 'fractional',
    experiment: 'exp-split',
    cohorts: ['vip'],
    audienceId,
    variants: { small: 1, large: 2 },
    defaultVariant: 'small',
    targeting: {
      fractional: [
        ['small', 50],
        ['large', 50],
      ],
    },
  },
  {
    name: 'typed-split-bare',
    enabled: true,
    trafficPercentage: 50,
    bucketing: 'fractional',
    experiment: 'exp-bare-typed',
    variants: { a: 'A', b: 'B' },
    defaultVariant: 'b',
    targeting: {},
  },
  // A variant already ending in "~": the marker is "~1".
  {
    name: 'tilde',
    enabled: true,
    trafficPercentage: 60,
    bucketing: 'fractional',
    experiment: 'exp-tilde',
    variants: { 'on~': true, off: false },
    defaultVariant: 'off',
    targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on~', null] },
  },
  // A typed rule at 100% behind cohorts and an audience, with a variant named "null" (the wrapper's
  // fourth arm catches a null answer first).
  {
    name: 'typed-gated',
    enabled: true,
    trafficPercentage: 100,
    experiment: 'exp-gated',
    cohorts: ['vip'],
    audienceId,
    variants: { null: 'n', x: 'X', y: 'Y' },
    defaultVariant: 'y',
    targeting: { if: [{ '==': [{ var: 'tier' }, 'gold'] }, 'x', { '==': [{ var: 'plan' }, 1] }, 'null', null] },
  },
  // No experiment: imported as before.
  { name: 'plain', enabled: true, trafficPercentage: 100 },
];
for (const body of kOriginals) world.run('flagCreate', { projectId: source, body, principal: kOperator });

function flagdExport(projectId: string): { flags: Record<string, Record<string, unknown>> } & Record<string, unknown> {
  const p = getProject(world.store, projectId)!;
  return exportProject(world.store, p, { format: 'flagd', env: null }, 'api', kNow) as never;
}

function importInto(projectId: string, document: unknown) {
  return world.run('flagsImport', { principal: kOperator, projectId, document: JSON.stringify(document), env: null });
}

function byName(projectId: string): Map<string, Flag> {
  return new Map(listFlags(world.store, projectId).map((f) => [f.name, f]));
}

/** OFREP's answer (src/ofrep/answer.ts, the code the server's routes run) for `flag` in `ctx`. */
function answer(flag: Flag, ctx: OfrepContext) {
  const state = effectiveState(flag, null);
  const audience = listAudiences(world.store, flag.projectId).find((a) => a.id === state.audienceId);
  const compiled = {
    ...compileState(flag.id, state, audience, flag.bucketing),
    variants: state.typed === undefined ? null : compileVariants(state.typed, flag.name, null, state.experiment ?? null),
  };
  const a = ofrepAnswer(compiled, ctx, true, kNow);
  if (a === kSlotKeyMissing) return { errorCode: 'TARGETING_KEY_MISSING' };
  if (typeof a === 'number') {
    const value = decisionValue(a);
    return { value, variant: value ? 'on' : 'off', reason: kReasons[decidedBy(a)]!, errorCode: undefined };
  }
  return { value: a.value, variant: a.variant, reason: a.reason, errorCode: a.errorCode };
}

const exported = flagdExport(source);

t.test('the export names the exposures of every experiment flag in twins, with its marker', async (t) => {
  t.notOk(Object.hasOwn(exported, 'x-flagwire-omitted'), 'every flag is said');
  for (const body of kOriginals.filter((b) => b.experiment !== undefined)) {
    const metadata = exported.flags[body.name]!.metadata as Record<string, unknown>;
    t.equal(metadata.flagwireExposureMarker, body.name === 'tilde' ? '~1' : '~', body.name);
    t.equal(metadata.experimentKey, body.experiment);
  }
});

const imported = project('Imported');

t.test('export -> import: OFREP answers the imported flags as it answers the originals', async (t) => {
  const result = importInto(imported, exported);
  t.same(result.flags.map((f) => [f.key, f.outcome]).sort(), kOriginals.map((b) => [b.name, 'created']).sort());
  const originals = byName(source);
  const copies = byName(imported);
  for (const [name, copy] of copies) {
    const typed = effectiveState(copy, null).typed!;
    const marker = (exported.flags[name]!.metadata as Record<string, string>).flagwireExposureMarker;
    t.notOk(Object.hasOwn(typed.metadata ?? {}, 'flagwireExposureMarker'), `${name}: no marker stored`);
    if (marker === undefined) continue;
    t.notOk(
      Object.keys(typed.variants).some((v) => v.endsWith(marker)),
      `${name}: no twin variant stored (${Object.keys(typed.variants)})`,
    );
    t.equal(
      typed.metadata?.experimentKey,
      effectiveState(originals.get(name)!, null).experiment,
      `${name}: experimentKey kept in its metadata`,
    );
  }
  const ctx = new OfrepContext();
  const plans = ['pro', 'free', '1', 1, undefined];
  let compared = 0;
  const reasons = new Set<string>();
  for (let i = 0; i < kContexts; i++) {
    const context: Record<string, unknown> = { targetingKey: `user-${i}` };
    const plan = plans[i % plans.length];
    if (plan !== undefined) context.plan = plan;
    if (i % 3 !== 0) context.region = 'eu';
    if (i % 7 === 0) context.cohort = 'vip';
    if (i % 4 === 0) context.tier = 'gold';
    t.ok(ctx.parse(JSON.stringify({ context })));
    for (const [name, original] of originals) {
      const ours = answer(original, ctx);
      const theirs = answer(copies.get(name)!, ctx);
      const same = ours.value === theirs.value && ours.variant === theirs.variant && ours.errorCode === theirs.errorCode;
      const reason = ours.reason === theirs.reason || kDocumentedReasons.has(`${ours.reason}>${theirs.reason}`);
      if (!same || !reason) {
        t.fail(`${name} in ${JSON.stringify(context)}: original ${JSON.stringify(ours)}, imported ${JSON.stringify(theirs)}`);
        return;
      }
      reasons.add(`${ours.variant}:${ours.reason}`);
      compared++;
    }
  }
  t.equal(compared, kContexts * kOriginals.length, `${compared} answers compared`);
  t.ok(reasons.size > 8, `every kind of answer reached: ${[...reasons].sort()}`);
});

t.test('the import stores what it stores for the same export without the experiments (experimentKey aside)', async (t) => {
  const plain = structuredClone(exported);
  for (const original of byName(source).values()) {
    if (effectiveState(original, null).experiment === undefined) continue;
    world.run('flagPatch', { principal: kOperator, flagId: original.id, env: null, patch: { experiment: null } });
  }
  const without = flagdExport(source);
  t.notSame(without, plain, 'the export without experiments differs');
  const control = project('Control');
  importInto(control, without);
  const copies = byName(imported);
  for (const [name, flag] of byName(control)) {
    const ours = structuredClone(effectiveState(copies.get(name)!, null));
    const theirs = effectiveState(flag, null);
    if (ours.typed?.metadata !== undefined) delete ours.typed.metadata.experimentKey;
    t.same(ours, theirs, name);
  }
  // A typed flag at 100% with no gate: the stored rule, variants and metadata are the original's own.
  const original = effectiveState(byName(source).get('typed-rule')!, null).typed!;
  const copy = effectiveState(copies.get('typed-rule')!, null).typed!;
  t.same({ ...copy, metadata: { team: copy.metadata!.team } }, original, "typed-rule: the original's variants, default variant and rule");
});

t.test('a hand-edited document with the marker and a shape the export never writes is refused; nothing changes', async (t) => {
  const target = project('Refused');
  const edits: [string, (d: typeof exported) => void][] = [
    [
      'a twin renamed',
      (d) => {
        const v = d.flags['bool-split']!.variants as Record<string, unknown>;
        v['on~x'] = v['on~'];
        delete v['on~'];
      },
    ],
    [
      'a twin dropped',
      (d) => {
        delete (d.flags['typed-split-bare']!.variants as Record<string, unknown>)['b~'];
      },
    ],
    [
      'the split edited',
      (d) => {
        const text = JSON.stringify(d.flags['typed-split']!.targeting).replace('["in",30]', '["in",31]');
        d.flags['typed-split']!.targeting = JSON.parse(text);
      },
    ],
    [
      'the wrapper removed',
      (d) => {
        const flag = d.flags['typed-rule']!;
        flag.targeting = kOriginals[2]!.targeting as Record<string, unknown>;
      },
    ],
    [
      'the marker changed',
      (d) => {
        (d.flags.tilde!.metadata as Record<string, unknown>).flagwireExposureMarker = '~';
      },
    ],
  ];
  for (const [what, edit] of edits) {
    const document = structuredClone(exported);
    edit(document);
    importRefused(
      t,
      target,
      document,
      /^The file was not imported, nothing changed: flags\.[a-z~-]+: it names an exposure marker \(metadata "flagwireExposureMarker"\) but is not a flag Flagwire's flagd export writes/,
      what,
    );
  }
});

/** Imports `document` into the (empty) project `target`, checking that it is refused as `detail` says and changes nothing. */
function importRefused(t: Test, target: string, document: unknown, detail: RegExp, what: string): void {
  const before = world.snapshot();
  let error: unknown = null;
  try {
    importInto(target, document);
  } catch (err) {
    error = err;
  }
  t.ok(error instanceof FlagwireError && error.code === 'INVALID_REQUEST', `${what}: refused`);
  t.match((error as FlagwireError).detail, detail, what);
  t.equal(world.snapshot(), before, `${what}: nothing changed`);
  t.equal(listFlags(world.store, target).length, 0);
}

t.test("the marker in the flag set's own metadata (which flagd lays under every flag's) is refused; nothing changes", async (t) => {
  const document = structuredClone(exported);
  document.metadata = { ...(document.metadata as Record<string, unknown> | undefined), flagwireExposureMarker: '~' };
  importRefused(
    t,
    project('Set marker'),
    document,
    /^The file was not imported, nothing changed: flags\.[a-z~-]+: "?metadata\.flagwireExposureMarker"?: is Flagwire's own/,
    'a document-level marker',
  );
});

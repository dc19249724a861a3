// The three-way differential of issue 44 (item 5): one real Flagwire, generated flags, generated
// contexts, and every flag asked three ways for every context: OFREP over HTTP (the bulk route), the
// Flagwire provider (src/provider, in-process from the native snapshot) and the stock
// @openfeature/flagd-provider in in-process mode (fed by the sync service), both through the
// OpenFeature server SDK. The Flagwire provider must give OFREP's value, variant, reason and error
// exactly; the flagd provider OFREP's value and variant for every flag the flag set serves (reasons
// differ where docs/design.md §2c says), FLAG_NOT_FOUND for every flag it leaves out, and nothing is
// compared where OFREP answers TARGETING_KEY_MISSING (a split without a key: design §2c). Keys and names
// are ASCII: flagd-core hashes UTF-16 code units (docs/design.md §2c). Some flags run an experiment
// (issue 58): the flagd provider's variant is compared with its exposure marker taken off, and the marker
// must end it exactly where OFREP says inExperiment: true. Used by three-way.test.ts, and with a million
// contexts by bench/three-way.bench.ts.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { FlagdProvider } from '@openfeature/flagd-provider';
import { type Client, type EvaluationContext, type JsonValue, OpenFeature } from '@openfeature/server-sdk';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { FlagwireProvider } from '../../src/provider/provider.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { call } from '../helpers/http.js';
import { unmarked } from './flag-set-differential.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer } from '../helpers/server.js';
import { kFlagdDeadlineMs } from '../helpers/flagd-provider.js';

type ValueType = 'boolean' | 'string' | 'number' | 'object';

/** A default value per type that no generated variant has: where an SDK hands it back, the caller's default applied. */
const kDefaults: Record<ValueType, boolean | string | number | JsonValue> = {
  boolean: false,
  string: '\u0000caller-default',
  number: -7777.5,
  object: { callerDefault: true },
};

// A seeded generator (mulberry32): the same flags and contexts on every run, so a failure reproduces.
function random(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const kCohorts = ['alice', 'bob', 'vip', 'qa'];
const kPlans = ['beta', 'alpha', 'free'];
const kCountries = ['NL', 'DE', 'SE'];
const kVersions = ['1.9.9', '2.0.0', '2.3.1', '10.0.0'];

const kVariantSets: Record<ValueType, Record<string, JsonValue>> = {
  boolean: { yes: true, no: false },
  string: { red: '#d33', green: '#2a2', blue: '#22d' },
  number: { low: 10, mid: 55.5, high: 1000 },
  object: { dark: { theme: 'dark', size: 2 }, light: { theme: 'light' } },
};

/** Rules over the context's attributes, each naming variants of the set by position (0, 1, 2). */
function ruleOf(kind: number, names: string[]): Record<string, unknown> {
  const [a, b, c] = [names[0]!, names[1]!, names[2] ?? names[0]!];
  switch (kind) {
    case 0:
      return { if: [{ '==': [{ var: 'plan' }, 'beta'] }, a, null] };
    case 1:
      return { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, b, { in: [{ var: 'country' }, ['NL', 'SE']] }, c, null] };
    case 2:
      return { if: [{ sem_ver: [{ var: 'version' }, '>=', '2.0.0'] }, a, b] };
    case 3:
      return {
        fractional: [
          [a, 30],
          [b, 70],
        ],
      };
    default:
      return { fractional: [{ var: 'email' }, [a, 50], [b, 25], [c, 25]] };
  }
}

export interface ThreeWayOptions {
  flags: number;
  contexts: number;
  seed: number;
}

export interface ThreeWayTally {
  /** Flags asked of each path, and how many of them the flag set leaves out. */
  flags: number;
  omitted: number;
  contexts: number;
  /** Answers compared: OFREP with the Flagwire provider, and OFREP with the flagd provider. */
  flagwireCompared: number;
  flagdCompared: number;
  /** Answers not compared with flagd: OFREP's TARGETING_KEY_MISSING. */
  flagdSkipped: number;
  /** flagd answers OFREP calls exposures (inExperiment: true), each marked. */
  flagdExposures: number;
  /** The first few differences, in words; empty when the three agree. */
  mismatches: string[];
  mismatchCount: number;
}

interface Generated {
  name: string;
  type: ValueType;
}

/** Runs the whole comparison: a server with generated flags, both providers, and every context. */
export async function threeWay(options: ThreeWayOptions, log: (line: string) => void = () => {}): Promise<ThreeWayTally> {
  const rnd = random(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
  const world = buildEvalWorld();
  const { ids } = world;
  const projectId = ids.empty;
  const rules = [
    { attribute: 'plan', values: ['beta', 'alpha'] },
    { attribute: 'country', values: ['NL', 'SE'] },
  ];
  const audienceId = world.run('audienceCreate', { principal: kOperator, projectId, name: 'Beta', rules }).id;
  const generated: Generated[] = [];
  for (let i = 0; i < options.flags; i++) {
    const type: ValueType | null = rnd() < 0.3 ? null : pick(['boolean', 'string', 'number', 'object'] as const);
    const body: Record<string, unknown> = {
      name: `g${i}`,
      bucketing: rnd() < 0.6 ? 'fractional' : 'modulo',
      enabled: rnd() < 0.85,
      trafficPercentage: pick([0, 100, 100, 30, 50, 75]),
      cohorts: kCohorts.filter(() => rnd() < 0.3),
    };
    if (rnd() < 0.3) body.audienceId = audienceId;
    if (rnd() < 0.4) body.experiment = `exp-${i}`;
    if (type !== null) {
      const variants = kVariantSets[type];
      const names = Object.keys(variants);
      body.variants = variants;
      body.defaultVariant = rnd() < 0.15 ? null : pick(names);
      if (rnd() < 0.75) body.targeting = ruleOf(Math.floor(rnd() * 5), names);
    }
    world.run('flagCreate', { projectId, principal: kOperator, body: body as never });
    generated.push({ name: `g${i}`, type: type ?? 'boolean' });
  }
  const secret = world.run('tokenCreate', { projectId, principal: principalOf(ids.owner), name: 'three-way', permission: 'read' }).secret;
  await world.store.close();

  const server = await startTestServer({ dataDir: world.dataDir, syncPort: 'free' });
  const snapshotPath = join(world.dataDir, '..', `three-way-snapshot-${options.seed}`);
  try {
    const flagSet = await call(server.baseUrl, 'GET', `/v1/flag-sets/${projectId}`, { token: secret });
    if (flagSet.status !== 200) throw new Error(`flag set: ${flagSet.status} ${flagSet.text}`);
    const served = new Set(Object.keys(JSON.parse(flagSet.text).flags as object));
    const flagd = new FlagdProvider({
      resolverType: 'in-process',
      deadlineMs: kFlagdDeadlineMs,
      host: '127.0.0.1',
      port: server.syncPort,
      selector: `flagSetId=${projectId},token=${secret}`,
    });
    const flagwire = new FlagwireProvider({ url: server.baseUrl, token: secret, project: projectId, environment: null, snapshotPath });
    const domain = `three-way-${options.seed}`;
    await OpenFeature.setProviderAndWait(`${domain}-flagd`, flagd);
    await OpenFeature.setProviderAndWait(`${domain}-flagwire`, flagwire);
    const clients = { flagd: OpenFeature.getClient(`${domain}-flagd`), flagwire: OpenFeature.getClient(`${domain}-flagwire`) };
    // Both hold the set the server serves now (the stream's first message, the snapshot's first fetch).
    await pollUntil(
      'the flagd provider holds the set',
      () => details(clients.flagd, generated[0]!, {}),
      (d) => d.errorCode !== 'PROVIDER_NOT_READY',
    );

    const tally: ThreeWayTally = {
      flags: generated.length,
      omitted: generated.filter((g) => !served.has(g.name)).length,
      contexts: options.contexts,
      flagwireCompared: 0,
      flagdCompared: 0,
      flagdSkipped: 0,
      flagdExposures: 0,
      mismatches: [],
      mismatchCount: 0,
    };
    const differ = (what: string) => {
      tally.mismatchCount++;
      if (tally.mismatches.length < 10) tally.mismatches.push(what);
    };
    const contextOf = (): EvaluationContext => {
      const context: EvaluationContext = {};
      const shape = rnd();
      if (shape < 0.8) context.targetingKey = `user-${Math.floor(rnd() * 1e6)}`;
      if (shape > 0.6) context.cohort = rnd() < 0.5 ? pick(kCohorts) : `c${Math.floor(rnd() * 100)}`;
      if (rnd() < 0.7) context.plan = pick(kPlans);
      if (rnd() < 0.7) context.country = pick(kCountries);
      if (rnd() < 0.5) context.email = rnd() < 0.5 ? `u${Math.floor(rnd() * 1000)}@example.com` : `u${Math.floor(rnd() * 1000)}@other.test`;
      if (rnd() < 0.5) context.version = pick(kVersions);
      return context;
    };
    const kBatch = 16;
    for (let done = 0; done < options.contexts; done += kBatch) {
      const batch = Array.from({ length: Math.min(kBatch, options.contexts - done) }, contextOf);
      await Promise.all(
        batch.map(async (context) => {
          const bulk = await call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
            body: { context },
            headers: { 'X-Flagwire-Project': projectId },
          });
          if (bulk.status !== 200) throw new Error(`OFREP bulk: ${bulk.status} ${bulk.text}`);
          const ofrep = new Map<string, OfrepAnswer>((bulk.json.flags as OfrepAnswer[]).map((f) => [f.key, f]));
          for (const flag of generated) {
            const expected = ofrep.get(flag.name);
            if (expected === undefined) {
              differ(`${flag.name}: not in OFREP's bulk answer`);
              continue;
            }
            const ours = await details(clients.flagwire, flag, context);
            tally.flagwireCompared++;
            const want = expectedDetails(flag, expected);
            if (!same({ ...ours, flagMetadata: undefined }, want))
              differ(`${flag.name} ${JSON.stringify(context)}: Flagwire provider ${JSON.stringify(ours)}, OFREP ${JSON.stringify(want)}`);
            const theirs = await details(clients.flagd, flag, context);
            if (!served.has(flag.name)) {
              if (theirs.errorCode !== 'FLAG_NOT_FOUND')
                differ(`${flag.name}: left out of the set, yet flagd answers ${JSON.stringify(theirs)}`);
              continue;
            }
            const { variant, exposure } = unmarked(theirs.variant, theirs.flagMetadata);
            if (expected.errorCode === 'TARGETING_KEY_MISSING') {
              tally.flagdSkipped++;
              if (exposure) differ(`${flag.name} ${JSON.stringify(context)}: no key, yet flagd marks an exposure`);
              continue;
            }
            tally.flagdCompared++;
            if (!same({ value: theirs.value, variant }, { value: want.value, variant: want.variant }))
              differ(`${flag.name} ${JSON.stringify(context)}: flagd provider ${JSON.stringify(theirs)}, OFREP ${JSON.stringify(want)}`);
            const exposed = expected.metadata?.inExperiment === true && want.variant !== undefined;
            if (exposed) tally.flagdExposures++;
            if (exposure !== exposed)
              differ(`${flag.name} ${JSON.stringify(context)}: flagd marks ${exposure}, OFREP says inExperiment ${exposed}`);
          }
        }),
      );
      if ((done / kBatch) % 500 === 0) log(`${done + batch.length} of ${options.contexts} contexts, ${tally.mismatchCount} differences`);
    }
    return tally;
  } finally {
    await OpenFeature.close();
    await server.stop();
    rmSync(snapshotPath, { force: true });
  }
}

interface OfrepAnswer {
  key: string;
  value?: JsonValue;
  variant?: string;
  reason?: string;
  errorCode?: string;
  metadata?: { inExperiment?: boolean };
}

interface Details {
  value: unknown;
  variant: string | undefined;
  reason: string | undefined;
  errorCode: string | undefined;
  /** Only the flagd provider's are read (its exposure marker). */
  flagMetadata?: Readonly<Record<string, unknown>>;
}

async function details(client: Client, flag: Generated, context: EvaluationContext): Promise<Details> {
  const fallback = kDefaults[flag.type];
  const d =
    flag.type === 'boolean'
      ? await client.getBooleanDetails(flag.name, fallback as boolean, context)
      : flag.type === 'string'
        ? await client.getStringDetails(flag.name, fallback as string, context)
        : flag.type === 'number'
          ? await client.getNumberDetails(flag.name, fallback as number, context)
          : await client.getObjectDetails(flag.name, fallback as JsonValue, context);
  return { value: d.value, variant: d.variant, reason: d.reason, errorCode: d.errorCode, flagMetadata: d.flagMetadata };
}

/** What an SDK client must hand back for OFREP's answer: the caller's default where OFREP gives no value. */
function expectedDetails(flag: Generated, answer: OfrepAnswer): Details {
  if (answer.errorCode !== undefined)
    return { value: kDefaults[flag.type], variant: undefined, reason: 'ERROR', errorCode: answer.errorCode };
  return { value: answer.value ?? kDefaults[flag.type], variant: answer.variant, reason: answer.reason, errorCode: undefined };
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

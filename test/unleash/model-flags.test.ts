// Black-box: flags in Unleash's model (issue 60, item 3) on a real server. Each specification file of
// Unleash's client specification (@unleash/client-specification, Apache-2.0) becomes a project whose flags
// are its features, made through the flag command every route uses; then every case of the file is asked
//   - of the stock Unleash server SDK (unleash-client), which fetches GET /api/client/features with a read
//     token and evaluates locally what Flagwire serves verbatim,
//   - of Unleash's front-end API (POST /api/frontend/features/{name}, a client key), which Flagwire's eval
//     workers answer,
//   - of OFREP (POST /ofrep/v1/evaluate/flags/{name}), the context flattened,
//   - of the Evaluation API (GET /v1/flags/{id}), the same flat context as its query,
// and each answer must be the case's expected one. Then the three are compared with one another over
// generated contexts. Every feature is stored, those with parts the SDKs never meet (model-problems.ts:
// an unknown operator, a missing segment, an expression RE2 does not compile) too, named on the flag.
// Each answer is checked against the case (and the generated ones against each other): none is left out.
import { isDeepStrictEqual } from 'node:util';
import t, { type Test } from 'tap';
import type { Context, Unleash } from 'unleash-client';
import { startUnleashSdk } from '../helpers/unleash-sdk.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { modelWarnings } from '../../src/unleash/rules/model-problems.js';
// Some 20,000 requests: over kept-alive node:http, far cheaper for this process than fetch.
import { keptAliveCall as call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { loadSpecifications, type Specification, type VectorContext, type VectorVariant } from './specification-vectors.js';

const { server, world } = await startWorldServer(t);
const { ids } = world;
const specifications = loadSpecifications();

interface Toggle {
  name: string;
  enabled: boolean;
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string } };
}

/** A specification file as a project: its flags, a read token (the SDK's) and a front-end key. */
interface SpecProject {
  spec: Specification;
  projectId: string;
  token: string;
  frontendKey: string;
  /** Each flag's id, by name. */
  flagIds: Map<string, string>;
  /** Features the Management API names parts of as never met, with the flag's id. */
  warned: Map<string, string>;
}

function makeProject(spec: Specification): SpecProject {
  const projectId = world.run('projectCreate', { principal: kOperator, name: spec.file, orgId: ids.orgA, kind: 'single' }).id;
  const token = world.run('tokenCreate', { projectId, principal: principalOf(ids.editor), name: 'sdk', permission: 'read' }).secret;
  const frontendKey = world.run('clientKeyCreate', {
    principal: kOperator,
    projectId,
    received: jsonBody(JSON.stringify({ name: 'web', uses: ['frontend'] })),
  }).secret;
  const flagIds = new Map<string, string>();
  const warned = new Map<string, string>();
  for (const feature of spec.features) {
    const body = { name: feature.name, enabled: feature.enabled, unleash: feature.model };
    const { id } = world.run('flagCreate', { projectId, body, principal: kOperator });
    flagIds.set(feature.name, id);
    if (modelWarnings(feature.model).length > 0) warned.set(feature.name, id);
  }
  return { spec, projectId, token, frontendKey, flagIds, warned };
}

const projects = specifications.map(makeProject);

/** The stock SDK on a project, once it has its first answer; destroyed at `t`'s end. */
const startSdk = (t: Test, token: string): Promise<Unleash> => startUnleashSdk(t, server.baseUrl, token, 'flagwire-model-test');

/** The SDK's context: its fields, and properties as text (the front-end API and OFREP take text too). */
function sdkContext(context: VectorContext): Context {
  return JSON.parse(JSON.stringify(context)) as Context;
}

/** A vector's context flattened for OFREP: fields and properties side by side, userId also as targetingKey. */
function flatContext(context: VectorContext): Record<string, unknown> {
  const { properties, ...fields } = context;
  const flat: Record<string, unknown> = { ...(properties ?? {}), ...fields };
  if (typeof fields.userId === 'string' && fields.userId !== '') flat.targetingKey = fields.userId;
  return JSON.parse(JSON.stringify(flat)) as Record<string, unknown>;
}

async function frontendToggle(p: SpecProject, name: string, context: VectorContext): Promise<Toggle | null> {
  const r = await call(server.baseUrl, 'POST', `/api/frontend/features/${encodeURIComponent(name)}`, {
    headers: { authorization: p.frontendKey },
    body: { context },
  });
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`front-end API ${name}: ${r.status} ${r.text}`);
  return r.json as Toggle;
}

interface OfrepAnswer {
  value: boolean;
  variant: string;
  metadata: Record<string, unknown>;
}

async function ofrep(p: SpecProject, name: string, context: VectorContext): Promise<OfrepAnswer | null> {
  const r = await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${encodeURIComponent(name)}`, {
    headers: { 'x-flagwire-project': p.projectId },
    body: { context: flatContext(context) },
  });
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`OFREP ${name}: ${r.status} ${r.text}`);
  return r.json as OfrepAnswer;
}

/**
 * The Evaluation API's answer for the flat context as its query (a null value left out: absent, as on
 * OFREP), in OFREP's shape (its metadata beside the answer); null for a name no flag has.
 */
async function evaluationApi(p: SpecProject, name: string, context: VectorContext): Promise<OfrepAnswer | null> {
  const id = p.flagIds.get(name);
  if (id === undefined) return null;
  const query = new URLSearchParams();
  for (const [field, value] of Object.entries(flatContext(context))) if (value !== null) query.set(field, String(value));
  const r = await call(server.baseUrl, 'GET', `/v1/flags/${id}?${query}`);
  if (r.status !== 200) throw new Error(`Evaluation API ${name}: ${r.status} ${r.text}`);
  const { enabled, variant, ...metadata } = r.json as { enabled: boolean; variant: string };
  return { value: enabled, variant, metadata };
}

/** The variant a toggle or an OFREP answer says, in the specification's shape. */
function variantOfToggle(toggle: Toggle | null): VectorVariant {
  if (toggle === null) return { name: 'disabled', enabled: false, feature_enabled: false };
  return { ...toggle.variant, feature_enabled: toggle.enabled };
}

function variantOfOfrep(answer: OfrepAnswer | null): VectorVariant {
  if (answer === null || answer.variant === 'disabled')
    return { name: 'disabled', enabled: false, feature_enabled: answer?.value === true };
  const { unleashPayloadType: type, unleashPayload: value } = answer.metadata;
  const variant: VectorVariant = { name: answer.variant, enabled: true, feature_enabled: answer.value };
  if (typeof type === 'string' && typeof value === 'string') variant.payload = { type, value };
  return variant;
}

function sdkVariant(unleash: Unleash, name: string, context: VectorContext): VectorVariant {
  const v = unleash.getVariant(name, sdkContext(context));
  const out: VectorVariant = { name: v.name, enabled: v.enabled, feature_enabled: v.feature_enabled };
  if (v.payload !== undefined) out.payload = { type: v.payload.type, value: String(v.payload.value) };
  return out;
}

/** The expected variant as compared: older cases leave feature_enabled out. */
function comparable(got: VectorVariant, expected: VectorVariant): VectorVariant {
  if (expected.feature_enabled !== undefined) return got;
  const { feature_enabled: _, ...rest } = got;
  return rest;
}

let asked = 0;

t.test('every case of the client specification, asked of the stock SDK, the front-end API, OFREP and the Evaluation API', async (t) => {
  for (const p of projects) {
    t.test(p.spec.file, async (t) => {
      const unleash = await startSdk(t, p.token);
      for (const c of p.spec.tests) {
        t.equal(unleash.isEnabled(c.toggleName, sdkContext(c.context)), c.expectedResult, `SDK: ${c.description}`);
        t.equal((await frontendToggle(p, c.toggleName, c.context))?.enabled ?? false, c.expectedResult, `front-end API: ${c.description}`);
        t.equal((await ofrep(p, c.toggleName, c.context))?.value ?? false, c.expectedResult, `OFREP: ${c.description}`);
        const evaluated = await evaluationApi(p, c.toggleName, c.context);
        t.equal(evaluated?.value ?? false, c.expectedResult, `Evaluation API: ${c.description}`);
        asked++;
      }
      for (const c of p.spec.variantTests) {
        const expected = c.expectedResult;
        t.same(comparable(sdkVariant(unleash, c.toggleName, c.context), expected), expected, `SDK: ${c.description}`);
        const toggle = await frontendToggle(p, c.toggleName, c.context);
        t.same(comparable(variantOfToggle(toggle), expected), expected, `front-end API: ${c.description}`);
        t.same(comparable(variantOfOfrep(await ofrep(p, c.toggleName, c.context)), expected), expected, `OFREP: ${c.description}`);
        const evaluated = variantOfOfrep(await evaluationApi(p, c.toggleName, c.context));
        t.same(comparable(evaluated, expected), expected, `Evaluation API: ${c.description}`);
        asked++;
      }
    });
  }
});

t.test('every case is asked; the flags with parts never met are stored, and their representation names the parts', async (t) => {
  t.equal(asked, 279, 'every case of the specification asked of all four');
  const warned = projects.flatMap((p) => [...p.warned].map(([name, id]) => ({ p, name, id })));
  t.same(
    warned.map((w) => `${w.p.spec.file} ${w.name}`),
    [
      '13-constraint-operators.json F7.invalid-operator',
      '15-global-constraints.json F9.withMissingSegment',
      '21-regex-constraint-operators.json invalid-regex-defaults-to-false',
      '21-regex-constraint-operators.json R90.reject_lookahead',
      '21-regex-constraint-operators.json R91.reject_backreference',
    ],
    'an unknown operator, a missing segment and three expressions RE2 does not compile',
  );
  for (const w of warned) {
    const r = await call(server.baseUrl, 'GET', `/api/v1/flags/${w.id}`, { token: w.p.token });
    t.equal(r.status, 200);
    t.same(
      r.json.unleashWarnings,
      modelWarnings(w.p.spec.features.find((f) => f.name === w.name)!.model).map((line) => `unleash.${line}`),
      `${w.name}: the Management API names what is never met`,
    );
  }
});

// Contexts drawn from the values the specification's own cases use, so that constraints meet and miss;
// always with a user id, a session id and an address (the SDK rolls at random without them), ASCII only
// (the Node SDK hashes UTF-16 code units cut to a byte, Flagwire UTF-8: they agree for ASCII).
function generatedContexts(spec: Specification, n: number): VectorContext[] {
  const values = new Map<string, Set<string>>();
  const add = (name: string, value: unknown) => {
    if (typeof value !== 'string' && typeof value !== 'number') return;
    const text = String(value);
    if (!/^[\x20-\x7e]*$/.test(text)) return;
    if (!values.has(name)) values.set(name, new Set());
    values.get(name)!.add(text);
  };
  for (const c of [...spec.tests, ...spec.variantTests]) {
    for (const [name, value] of Object.entries(c.context)) if (name !== 'properties') add(name, value);
    for (const [name, value] of Object.entries(c.context.properties ?? {})) add(`properties.${name}`, value);
  }
  const pick = (name: string, i: number, fallback: string) => {
    const list = [...(values.get(name) ?? [])];
    return list.length === 0 || i % 4 === 3 ? fallback : list[i % list.length]!;
  };
  const contexts: VectorContext[] = [];
  for (let i = 0; i < n; i++) {
    const properties: Record<string, string> = {};
    for (const name of values.keys())
      if (name.startsWith('properties.') && i % 3 !== 2) properties[name.slice(11)] = pick(name, i + 1, `p${i}`);
    contexts.push({
      userId: pick('userId', i, `user-${i}`),
      sessionId: pick('sessionId', i + 2, `session-${i}`),
      remoteAddress: pick('remoteAddress', i + 3, `10.0.${i % 7}.${i % 250}`),
      ...(values.has('environment') && i % 2 === 0 ? { environment: pick('environment', i, 'dev') } : {}),
      ...(values.has('appName') && i % 2 === 1 ? { appName: pick('appName', i, 'web') } : {}),
      ...(values.has('currentTime') && i % 5 !== 4 ? { currentTime: pick('currentTime', i, '2024-01-01T00:00:00.000Z') } : {}),
      properties,
    });
  }
  return contexts;
}

/** Features whose answers the SDK rolls at random for some contexts: compared only where sticky. */
function rolls(spec: Specification, name: string): boolean {
  const feature = spec.features.find((f) => f.name === name);
  return (feature?.model.strategies ?? []).some(
    (s) => s.name === 'gradualRolloutRandom' || s.parameters?.stickiness === 'random' || (s.variants?.length ?? 0) > 0,
  );
}

t.test('generated contexts: the SDK, the front-end API and OFREP agree on every flag', async (t) => {
  let compared = 0;
  for (const p of projects) {
    // One SDK at a time: each is destroyed at its subtest's end.
    await t.test(p.spec.file, async (t) => {
      const unleash = await startSdk(t, p.token);
      const names = p.spec.features.map((f) => f.name).filter((name) => !rolls(p.spec, name));
      for (const context of generatedContexts(p.spec, 40)) {
        const all = await call(server.baseUrl, 'POST', '/api/frontend/all', {
          headers: { authorization: p.frontendKey },
          body: { context },
        });
        t.equal(all.status, 200);
        const toggles = new Map((all.json.toggles as Toggle[]).map((toggle) => [toggle.name, toggle]));
        for (const name of names) {
          const sdk = sdkVariant(unleash, name, context);
          const frontend = variantOfToggle(toggles.get(name) ?? null);
          const ofrepVariant = variantOfOfrep(await ofrep(p, name, context));
          if (!isDeepStrictEqual(sdk, frontend) || !isDeepStrictEqual(sdk, ofrepVariant)) {
            t.fail(
              `${name} ${JSON.stringify(context)}: SDK ${JSON.stringify(sdk)}, front-end ${JSON.stringify(frontend)}, OFREP ${JSON.stringify(ofrepVariant)}`,
            );
          }
          if (unleash.isEnabled(name, sdkContext(context)) !== sdk.feature_enabled) t.fail(`${name}: isEnabled and getVariant disagree`);
          compared++;
        }
      }
    });
  }
  t.comment(`${compared} answers compared`);
  t.ok(compared > 3000, 'thousands of answers compared');
});

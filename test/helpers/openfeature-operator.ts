// The OpenFeature Operator at the version Flagwire's manifests are checked against (docs/kubernetes.md):
// its two CRDs' schemas, vendored unchanged under test/fixtures/openfeature-operator/, as validators; the
// manifests in deploy/kubernetes/openfeature-operator as `kubectl kustomize` renders them; and the
// environment the operator's webhook gives an application's containers for in-process evaluation.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';

export const kOperatorVersion = 'v0.9.2';
const kRoot = fileURLToPath(new URL('../../../', import.meta.url));
const kFixtures = `${kRoot}test/fixtures/openfeature-operator/${kOperatorVersion}/`;

export interface CustomResource {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

/** The manifests, rendered as a platform engineer renders them. */
export function renderOperatorManifests(): CustomResource[] {
  const text = execFileSync('kubectl', ['kustomize', `${kRoot}deploy/kubernetes/openfeature-operator`], { encoding: 'utf8' });
  return parseAllDocuments(text).map((doc) => doc.toJS() as CustomResource);
}

type Schema = { [keyword: string]: unknown };

/**
 * A CRD's OpenAPI schema as JSON Schema, stricter where the API server is lenient: an object that lists
 * its fields refuses any other (the server prunes an unknown field, so a misspelt one would vanish and
 * its default apply unseen), and int-or-string is said as JSON Schema says it.
 */
function structural(schema: Schema): Schema {
  const {
    properties,
    items,
    additionalProperties,
    'x-kubernetes-int-or-string': intOrString,
    'x-kubernetes-preserve-unknown-fields': preserve,
    ...rest
  } = schema;
  const out: Schema = { ...rest };
  if (intOrString === true) {
    // Kubernetes checks an int-or-string's pattern (a quantity's) against the string form only.
    const { pattern } = out;
    delete out.pattern;
    out.anyOf = [{ type: 'integer' }, pattern === undefined ? { type: 'string' } : { type: 'string', pattern }];
  }
  if (items !== undefined) out.items = structural(items as Schema);
  if (properties !== undefined) {
    out.properties = Object.fromEntries(Object.entries(properties as Record<string, Schema>).map(([k, v]) => [k, structural(v)]));
    if (additionalProperties === undefined && preserve !== true) out.additionalProperties = false;
  }
  if (typeof additionalProperties === 'object') out.additionalProperties = structural(additionalProperties as Schema);
  return out;
}

// `useDefaults`: a validated copy gets the CRD's defaults, as the API server stores the resource.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });
// Annotations for the API server's merges and list handling: they constrain no value.
for (const keyword of ['x-kubernetes-map-type', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys']) ajv.addKeyword(keyword);
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });

/** The validator of `kind` (FeatureFlagSource, InProcessConfiguration) at the pinned version, from its CRD. */
export function crdValidator(kind: string): ValidateFunction {
  const file = `${kFixtures}core.openfeature.dev_${kind.toLowerCase()}s.yaml`;
  const crd = parse(readFileSync(file, 'utf8')) as {
    spec: { names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
  };
  if (crd.spec.names.kind !== kind) throw new Error(`${file} defines ${crd.spec.names.kind}, not ${kind}`);
  const version = crd.spec.versions.find((v) => v.name === 'v1beta1');
  if (version === undefined) throw new Error(`${file} has no v1beta1`);
  return ajv.compile(structural(version.schema.openAPIV3Schema));
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}

export interface InProcessSpec {
  host: string;
  port: number;
  tls: boolean;
  cache: string;
  cacheMaxSize: number;
  envVarPrefix: string;
  selector?: string;
  socketPath?: string;
  offlineFlagSourcePath?: string;
  envVars?: EnvVar[];
}

/**
 * What the operator's webhook puts in each container of a pod annotated with one InProcessConfiguration
 * of `spec` (its CRD's defaults applied): InProcessConfigurationSpec.ToEnvVars at the pinned version
 * (api/core/v1beta1/inprocessconfiguration_types.go). Its own defaults, which the spec is merged onto,
 * are the CRD's, so one spec says it all.
 */
export function injectedInProcessEnv(spec: InProcessSpec): EnvVar[] {
  const key = (name: string) => (spec.envVarPrefix.trim() === '' ? name : `${spec.envVarPrefix}_${name}`);
  const env: EnvVar[] = (spec.envVars ?? []).map((e) => ({ ...e, name: key(e.name) }));
  env.push(
    { name: key('HOST'), value: spec.host },
    { name: key('PORT'), value: String(spec.port) },
    { name: key('TLS'), value: String(spec.tls) },
    { name: key('CACHE'), value: spec.cache },
    { name: key('MAX_CACHE_SIZE'), value: String(spec.cacheMaxSize) },
    { name: key('RESOLVER'), value: 'in-process' },
  );
  if (spec.socketPath) env.push({ name: key('SOCKET_PATH'), value: spec.socketPath });
  if (spec.offlineFlagSourcePath) env.push({ name: key('OFFLINE_FLAG_SOURCE_PATH'), value: spec.offlineFlagSourcePath });
  if (spec.selector) env.push({ name: key('SOURCE_SELECTOR'), value: spec.selector });
  return env;
}

/** The manifests' InProcessConfiguration, validated and with its CRD's defaults, as the cluster stores it. */
export function storedInProcessConfiguration(): InProcessSpec {
  const resource = renderOperatorManifests().find((r) => r.kind === 'InProcessConfiguration');
  if (resource === undefined) throw new Error('no InProcessConfiguration in deploy/kubernetes/openfeature-operator');
  const stored = structuredClone(resource);
  const validate = crdValidator('InProcessConfiguration');
  if (!validate(stored)) throw new Error(`InProcessConfiguration: ${ajv.errorsText(validate.errors)}`);
  return stored.spec as unknown as InProcessSpec;
}

/** The errors of a failed validation, in one line. */
export function errorsText(validate: ValidateFunction): string {
  return ajv.errorsText(validate.errors);
}

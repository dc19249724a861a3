// The OpenFeature Operator's custom resources (deploy/kubernetes/openfeature-operator; docs/kubernetes.md),
// issue 97 item 4. Rendered by `kubectl kustomize`, each is validated against its CRD's schema at the
// pinned operator version (vendored: test/fixtures/openfeature-operator/), an unknown field refused; they
// name Flagwire's Services and a selector Flagwire reads. Then, black-box, the stock flagd provider
// configured by nothing but the environment the operator injects for the InProcessConfiguration follows
// changes made through the Management API (how fast: bench/operator-in-process.bench.ts).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { percentile } from '../../bench/stats.js';
import { parseSelector } from '../../src/sync/selector.js';
import { crdValidator, errorsText, kOperatorVersion, renderOperatorManifests } from '../helpers/openfeature-operator.js';
import { operatorConvergence } from '../helpers/operator-convergence.js';

const kRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** A Service of an overlay as rendered: its name and its sync port. */
function syncService(dir: string): { name: string; port: number } {
  const text = execFileSync('kubectl', ['kustomize', `${kRoot}deploy/kubernetes/${dir}`], { encoding: 'utf8' });
  const service = parseAllDocuments(text)
    .map((doc) => doc.toJS() as { kind: string; metadata: { name: string }; spec: { ports: { name: string; port: number }[] } })
    .find((o) => o.kind === 'Service')!;
  return { name: service.metadata.name, port: service.spec.ports.find((p) => p.name === 'sync')!.port };
}

const resources = renderOperatorManifests();
const source = resources.find((r) => r.kind === 'FeatureFlagSource')!;
const inProcess = resources.find((r) => r.kind === 'InProcessConfiguration')!;

t.test(`every resource is valid at the operator's ${kOperatorVersion}, and a misspelt field is refused`, async (t) => {
  t.same(resources.map((r) => r.kind).sort(), ['FeatureFlagSource', 'InProcessConfiguration']);
  for (const resource of resources) {
    t.equal(resource.apiVersion, 'core.openfeature.dev/v1beta1', `${resource.kind}: the CRDs' served version`);
    const validate = crdValidator(resource.kind);
    const valid = validate(structuredClone(resource));
    t.ok(valid, `${resource.kind} ${resource.metadata.name}${valid ? '' : `: ${errorsText(validate)}`}`);
  }
  const validate = crdValidator('FeatureFlagSource');
  const [first] = source.spec.sources as Record<string, unknown>[];
  const typo = structuredClone(source);
  typo.spec.sources = [{ ...first, selecter: first!.selector }];
  t.notOk(validate(typo), 'sources[].selecter: an unknown field');
  t.match(errorsText(validate), /additional properties/);
  t.notOk(validate({ ...structuredClone(source), spec: { ...source.spec, sources: [] } }), 'no source: the CRD asks for one');
  t.notOk(
    crdValidator('InProcessConfiguration')({ ...structuredClone(inProcess), spec: { ...inProcess.spec, port: '8015' } }),
    'a port as a string',
  );
  t.notOk(
    crdValidator('InProcessConfiguration')({ ...structuredClone(inProcess), spec: { ...inProcess.spec, cache: 'big' } }),
    "a cache the CRD's pattern refuses",
  );
});

t.test("the sidecar follows the node's sync Service; the application in-process, the relays'", async (t) => {
  const node = syncService('base');
  const relay = syncService('overlays/relay');
  const [only, ...others] = source.spec.sources as { source: string; provider: string; selector: string; tls: boolean }[];
  t.equal(others.length, 0);
  t.equal(only!.provider, 'grpc', "flagd's gRPC sync");
  t.equal(only!.source, `${node.name}.flagwire.svc.cluster.local:${node.port}`);
  t.equal(only!.tls, false, 'the sync port speaks plaintext HTTP/2 in the cluster');
  const selector = parseSelector(only!.selector);
  t.ok(selector.token !== null, 'flagd sends its selector: the token rides in it');
  t.equal(inProcess.spec.host, `${relay.name}.flagwire.svc.cluster.local`);
  t.equal(inProcess.spec.port, relay.port);
  t.equal(inProcess.spec.selector, undefined, 'the selector, token and all, is no field of the resource: it comes from a Secret');
});

t.test('the stock flagd provider, configured only by what the operator injects, sees every change', async (t) => {
  const changes = 50;
  const result = await operatorConvergence(changes);
  t.same(
    result.cluster,
    { host: inProcess.spec.host, port: String(inProcess.spec.port) },
    "the manifests' relay, swapped for the test server",
  );
  t.equal(result.env.FLAGD_RESOLVER, 'in-process');
  t.equal(result.env.FLAGD_TLS, 'false');
  t.same([result.env.FLAGD_CACHE, result.env.FLAGD_MAX_CACHE_SIZE], ['lru', '1000'], "the CRD's defaults, as the cluster stores them");
  t.match(result.env.FLAGD_SOURCE_SELECTOR, /^flagSetId=[^,/]+,token=fw_/, 'the selector from the Secret');
  t.same(
    Object.keys(result.env).filter((name) => !name.startsWith('FLAGD_')),
    [],
    'nothing but the operator configures the provider',
  );
  // Every change seen, each within the helper's minute: how soon is the bench's to say.
  t.equal(result.latenciesMs.length, changes, 'every change reached the application');
  const sorted = [...result.latenciesMs].sort((a, b) => a - b);
  t.comment(
    `p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms (a loaded machine: not a measurement)`,
  );
});

// The Kubernetes manifests (deploy/kubernetes; docs/kubernetes.md), rendered by `kubectl kustomize` as a
// platform engineer renders them, and every object validated against Kubernetes' own schemas at one
// pinned version (kubernetes-models 4.5.1: Kubernetes 1.33). Then what the schemas cannot say: the
// probes, the user, the secrets, the shutdown within the grace period, selectors that select the pods,
// and settings Flagwire knows.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { kShutdownCloseMs } from '../../src/server/start.js';

const kRoot = fileURLToPath(new URL('../../../', import.meta.url));
const kVersion = (JSON.parse(readFileSync(`${kRoot}package.json`, 'utf8')) as { version: string }).version;
const kSettingsDoc = readFileSync(`${kRoot}docs/configuration.md`, 'utf8');

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any };
interface Model {
  new (value: unknown): { validate(): void };
}

/** The model (schema) of an object's apiVersion and kind, from kubernetes-models. */
async function modelOf(object: K8sObject): Promise<Model> {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  const module = (await import(group === '' ? `kubernetes-models/${version}` : `kubernetes-models/${group}/${version}`)) as Record<
    string,
    Model
  >;
  const model = module[object.kind];
  if (model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  return model;
}

function render(dir: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', `${kRoot}deploy/kubernetes/${dir}`], { encoding: 'utf8' });
  return parseAllDocuments(text).map((doc) => doc.toJS() as K8sObject);
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

for (const dir of ['base', 'overlays/postgres', 'overlays/relay']) {
  t.test(`${dir}: renders, and every object is valid at Kubernetes 1.33`, async (t) => {
    const objects = render(dir);
    for (const object of objects) {
      const Model = await modelOf(object);
      t.doesNotThrow(() => new Model(object).validate(), `${object.kind} ${object.metadata.name}`);
    }

    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    const pod = deployment.spec.template;
    const podLabels = pod.metadata.labels as Record<string, string>;
    t.ok(matches(deployment.spec.selector.matchLabels, podLabels), 'the Deployment selects its pods');
    for (const kind of ['Service', 'NetworkPolicy', 'PodDisruptionBudget']) {
      const object = objects.find((o) => o.kind === kind);
      if (kind === 'PodDisruptionBudget' && dir === 'base') {
        t.notOk(object, 'one node: no disruption budget to keep');
        continue;
      }
      const selector =
        kind === 'Service'
          ? object!.spec.selector
          : kind === 'NetworkPolicy'
            ? object!.spec.podSelector.matchLabels
            : object!.spec.selector.matchLabels;
      t.ok(selector && Object.keys(selector).length > 0 && matches(selector, podLabels), `the ${kind} selects the pods, and only them`);
    }

    const container = pod.spec.containers[0];
    t.match(container.image, new RegExp(`:${kVersion.replaceAll('.', '\\.')}$`), 'the image of this version');
    t.equal(container.readinessProbe.httpGet.path, '/ready');
    t.equal(container.livenessProbe.httpGet.path, '/health');
    t.equal(pod.spec.securityContext.runAsNonRoot, true);
    t.equal(pod.spec.securityContext.runAsUser, 10001, "the image's user");
    t.equal(container.securityContext.readOnlyRootFilesystem, true);
    t.same(container.securityContext.capabilities.drop, ['ALL']);
    t.equal(pod.spec.automountServiceAccountToken, false);
    t.ok(container.resources.requests.cpu && container.resources.limits.memory, 'resources');

    // Every setting is one Flagwire documents, and together they load (values as the pod gets them).
    const env: Record<string, string> = {};
    for (const entry of container.env as { name: string; value?: string; valueFrom?: unknown }[]) {
      t.ok(kSettingsDoc.includes(`\`${entry.name}\``), `${entry.name} is a documented setting`);
      env[entry.name] = entry.value ?? (entry.name === 'FLAGWIRE_DATABASE_URL' ? 'postgres://flagwire@db/flagwire' : 'fwr_secret');
    }
    const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
    for (const ref of container.envFrom as { configMapRef: { name: string } }[]) {
      const map = configMaps.find((m) => m.metadata.name === ref.configMapRef.name);
      t.ok(map, `the ConfigMap ${ref.configMapRef.name} is rendered`);
      for (const [name, value] of Object.entries((map as unknown as { data: Record<string, string> }).data)) {
        t.ok(kSettingsDoc.includes(`\`${name}\``), `${name} is a documented setting`);
        env[name] = value;
      }
    }
    const config = loadConfig({}, env);

    // SIGTERM after preStop: the server's drain and close deadline fits in the grace period.
    const preStop = container.lifecycle.preStop.sleep.seconds as number;
    const exitsWithin = preStop * 1000 + config.shutdownDrainMs + kShutdownCloseMs;
    t.ok(
      pod.spec.terminationGracePeriodSeconds * 1000 > exitsWithin,
      `grace ${pod.spec.terminationGracePeriodSeconds} s > ${exitsWithin} ms`,
    );

    const ports = new Set((container.ports as { name: string; containerPort: number }[]).map((p) => p.name));
    const service = objects.find((o) => o.kind === 'Service')!;
    for (const port of service.spec.ports as { targetPort: string }[])
      t.ok(ports.has(port.targetPort), `Service port ${port.targetPort} is the container's`);
    t.equal(
      env.FLAGWIRE_PORT,
      String((container.ports as { name: string; containerPort: number }[]).find((p) => p.name === 'http')!.containerPort),
    );

    const secretOf = (name: string) =>
      (container.env as { name: string; valueFrom?: { secretKeyRef?: { name: string } } }[]).find((e) => e.name === name)?.valueFrom
        ?.secretKeyRef?.name;
    const volume = (pod.spec.volumes as { name: string; persistentVolumeClaim?: unknown; emptyDir?: unknown }[]).find(
      (v) => v.name === 'data',
    )!;
    const claims = objects.filter((o) => o.kind === 'PersistentVolumeClaim');
    if (dir === 'base') {
      t.equal(deployment.spec.replicas, 1);
      t.equal(deployment.spec.strategy.type, 'Recreate', 'one process on the data directory at a time');
      t.ok(volume.persistentVolumeClaim, 'the data directory on a claim');
      t.equal(claims.length, 1);
    } else {
      t.ok(deployment.spec.replicas > 1, 'several nodes');
      t.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);
      t.ok(volume.emptyDir && !volume.persistentVolumeClaim, 'each node copies into a data directory of its own');
      t.equal(claims.length, 0, 'no claim');
    }
    if (dir === 'overlays/postgres') {
      t.equal(secretOf('FLAGWIRE_DATABASE_URL'), 'flagwire-database', 'the database URL from a Secret');
      t.equal(config.databaseUrl, env.FLAGWIRE_DATABASE_URL);
    }
    if (dir === 'overlays/relay') {
      t.equal(secretOf('FLAGWIRE_UPSTREAM_TOKEN'), 'flagwire-relay', 'the relay key from a Secret');
      t.ok(config.upstream, 'a relay');
    }
  });
}

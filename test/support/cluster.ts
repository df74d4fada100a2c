/**
 * The chart on the harness's real cluster (test/harness/cluster.ts): clients of its API server, the image
 * built from the tree, values that fit the test node, and bounded waits on what the cluster's own
 * controllers, kubelet and kube-proxy do. Nothing here changes an object's status: the cluster does.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PolicyV1Api, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { kubectl } from './chart.ts';
import { pollUntil } from './poll.ts';

const run = promisify(execFile);

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through test/harness/cluster.ts (npm test)`);
  return value;
}

export const kc = new KubeConfig();
kc.loadFromFile(required('KUBECONFIG'));
export const core = kc.makeApiClient(CoreV1Api);
export const apps = kc.makeApiClient(AppsV1Api);
export const batch = kc.makeApiClient(BatchV1Api);
export const policy = kc.makeApiClient(PolicyV1Api);
export const objects = kc.makeApiClient(CustomObjectsApi);

/** The image built from the tree (test/infra/images.sh): `repository:tag`. */
export const IMAGE = { repository: required('SVC_IMAGE_REPOSITORY'), tag: required('SVC_IMAGE_TAG') };
export const NODE_IP = required('SVC_CLUSTER_NODE_IP');

/**
 * Values every release of these tests takes: the image built here, and requests the test node (2 CPUs,
 * shared by every release of the suite) can schedule; the Service as a NodePort, so that the tests reach
 * the server through it (kube-proxy) at the node's address.
 */
export function testValues(ns: string): string[] {
  return [
    ['image.repository', IMAGE.repository],
    ['image.tag', IMAGE.tag],
    ['server.service.type', 'NodePort'],
    ['server.resources.requests.cpu', '50m'],
    ['server.resources.requests.memory', '128Mi'],
    ['operator.resources.requests.cpu', '20m'],
    ['postgresql.resources.requests.cpu', '50m'],
    ['postgresql.resources.requests.memory', '128Mi'],
    ['postgresql.storage.size', '1Gi'],
    ['systemUpdate.resources.requests.cpu', '50m'],
    ['systemUpdate.resources.requests.memory', '128Mi'],
    // Two releases of the suite may run at once: each operator reconciles its own namespace only.
    ['operator.watchNamespace', ns],
  ].flatMap(([k, v]) => ['--set', `${k}=${v}`]);
}

/** A fresh namespace, deleted (with what is in it) by `dropNamespace`. */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

export async function dropNamespace(ns: string): Promise<void> {
  await core.deleteNamespace({ name: ns }).catch(() => undefined);
}

/** Tags the image built here under another tag in the node's containerd (an "upgrade" to a new tag). */
export async function tagImage(tag: string): Promise<string> {
  const address = `${required('SVC_CLUSTER_DIR')}/containerd.sock`;
  const source = `${IMAGE.repository}:${IMAGE.tag}`;
  await run('ctr', ['--address', address, '-n', 'k8s.io', 'images', 'tag', '--force', source, `${IMAGE.repository}:${tag}`]);
  return tag;
}

const ready = (p: V1Pod) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The pods of a component (`app.kubernetes.io/component`) of the release. */
export async function podsOf(ns: string, component: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `app.kubernetes.io/component=${component}` })).items;
}

/** Waits until `count` pods of the component are Ready (and no other is running); returns them. */
export async function waitPodsReady(ns: string, component: string, count: number, timeoutMs = 180_000): Promise<V1Pod[]> {
  let pods: V1Pod[] = [];
  await pollUntil(
    `${count} ready ${component} pod(s) in ${ns}`,
    async () => {
      pods = (await podsOf(ns, component)).filter((p) => !p.metadata?.deletionTimestamp);
      return pods.map((p) => `${p.metadata!.name} ${p.status?.phase}${ready(p) ? ' ready' : ''}`);
    },
    (ps) => ps.length === count && pods.every(ready),
    timeoutMs,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await describePods(ns)}`);
  });
  return pods;
}

/** What the pods of a namespace are doing (for a failure message): phase, readiness, waiting reasons, last log lines. */
export async function describePods(ns: string): Promise<string> {
  const lines: string[] = [];
  for (const p of (await core.listNamespacedPod({ namespace: ns })).items) {
    const states = (p.status?.containerStatuses ?? []).map((c) => `${c.name}: ready=${c.ready} restarts=${c.restartCount} ${JSON.stringify(c.state?.waiting ?? c.state?.terminated ?? {})}`);
    lines.push(`${p.metadata!.name} ${p.status?.phase} ${states.join('; ')}`);
    const log = await core.readNamespacedPodLog({ name: p.metadata!.name!, namespace: ns, tailLines: 8 }).catch(() => '');
    if (log) lines.push(...log.trim().split('\n').map((l) => `    ${l.slice(0, 300)}`));
  }
  const events = await core.listNamespacedEvent({ namespace: ns }).catch(() => undefined);
  for (const e of (events?.items ?? []).filter((e) => e.type === 'Warning').slice(-10)) lines.push(`event ${e.involvedObject.kind}/${e.involvedObject.name}: ${e.reason} ${e.message}`);
  return lines.join('\n');
}

export const jobOf = (ns: string, name: string) => batch.readNamespacedJob({ name, namespace: ns }).catch(() => undefined);

const finished = (j: V1Job | undefined) => (j?.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type;

/** Waits until the Job controller reports the Job Complete (fails at once when it Failed). */
export async function waitJobComplete(ns: string, name: string, timeoutMs = 240_000): Promise<V1Job> {
  const job = await pollUntil(`Job ${name} finished`, () => jobOf(ns, name), (j) => finished(j) !== undefined, timeoutMs).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await describePods(ns)}`);
  });
  if (finished(job) !== 'Complete') throw new Error(`Job ${name} failed: ${JSON.stringify(job!.status)}\n${await describePods(ns)}`);
  return job!;
}

/** A Secret's key, decoded. */
export async function secretValue(ns: string, name: string, key: string): Promise<string> {
  const s = await core.readNamespacedSecret({ name, namespace: ns });
  return Buffer.from(s.data![key]!, 'base64').toString('utf8');
}

/** The server's address through its Service: the node's address and the Service's node port (kube-proxy). */
export async function serviceUrl(ns: string, service: string): Promise<string> {
  const s = await core.readNamespacedService({ name: service, namespace: ns });
  const port = s.spec!.ports!.find((p) => p.name === 'http')!.nodePort!;
  return `http://${NODE_IP}:${port}`;
}

/**
 * Runs a pod of the svc image to completion (bounded) and returns its phase and log: an in-cluster
 * client, reaching the server by its Service's DNS name.
 */
export async function runClientPod(ns: string, name: string, command: string[], env: { name: string; value?: string; valueFrom?: object }[], timeoutMs = 180_000): Promise<{ phase: string; log: string }> {
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name },
      spec: {
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'client',
            image: `${IMAGE.repository}:${IMAGE.tag}`,
            imagePullPolicy: 'IfNotPresent',
            command,
            env,
            resources: { requests: { cpu: '20m', memory: '64Mi' } },
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    },
  });
  const pod = await pollUntil(
    `client pod ${name} finished`,
    () => core.readNamespacedPod({ name, namespace: ns }),
    (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed',
    timeoutMs,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await describePods(ns)}`);
  });
  const log = await core.readNamespacedPodLog({ name, namespace: ns });
  return { phase: pod.status!.phase!, log };
}

/** Runs SQL in the bundled Postgres's pod (psql over its local socket); rows as arrays of strings. */
export async function psql(ns: string, pod: string, query: string): Promise<string[][]> {
  const out = await kubectl(['exec', '-n', ns, pod, '--', 'psql', '-U', 'svc', '-d', 'svc', '-At', '-F', '\t', '-c', query]);
  return out
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t'));
}

/** A JSON call to the server with a bearer token. */
export async function call(base: string, token: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) },
    signal: init.signal ?? AbortSignal.timeout(15_000),
  });
}

/** Awaits a call, asserts a 2xx answer (naming `what` and the body when not), returns its JSON body. */
export async function expectOk(res: Promise<Response>, what: string): Promise<unknown> {
  const r = await res;
  const body = await r.text();
  assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${body}`);
  return body ? (JSON.parse(body) as unknown) : undefined;
}

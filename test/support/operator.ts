/**
 * The operator under test: the project's CRDs installed on the harness's kube-apiserver, a namespace
 * of the test's own, an operator started in-process (or as a process of its own) against a svc test
 * server, and reads of the objects it writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  PatchStrategy,
  loadYaml,
  setHeaderOptions,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { loadOperatorConfig } from '../../operator/src/config.ts';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { GROUP, VERSION, type StructuredProperty, type TruncationJob } from '../../operator/src/resources.ts';
import type { Condition } from '../../operator/src/runtime/conditions.ts';
import { builtEntry } from './built.ts';
import { applyCrd, kubeClients } from './kubeClients.ts';
import { pollUntil } from './poll.ts';
import { ADMIN_TOKEN } from './testServer.ts';

const ROOT = resolve(import.meta.dirname, '../..');
export const { kc, extensions, objects } = kubeClients();
export const core = kc.makeApiClient(CoreV1Api);
export const eventsApi = kc.makeApiClient(EventsV1Api);
export const batch = kc.makeApiClient(BatchV1Api);
export const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

type Plural = 'structuredproperties' | 'truncationjobs';

/** Installs (or replaces) the CRDs of `crds/` and waits until both are served. */
export async function installCrds(): Promise<void> {
  for (const plural of ['structuredproperties', 'truncationjobs']) {
    await applyCrd(extensions, loadYaml<V1CustomResourceDefinition>(readFileSync(join(ROOT, 'crds', `${plural}.${GROUP}.yaml`), 'utf8')));
  }
  const ns = await createNamespace('crd-probe');
  for (const plural of ['structuredproperties', 'truncationjobs']) {
    await pollUntil(`${plural} served`, () => objects.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural }).then(() => true, () => false), (ok) => ok, 30_000);
  }
}

/** A fresh namespace (the harness has no controller-manager, so namespaces are never deleted: they are left behind). */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** Starts the operator in this process against `server`, watching `namespace`; leader election off unless `env` turns it on. */
export async function startTestOperator(server: string, namespace: string, env: Record<string, string> = {}, config = kc): Promise<Operator> {
  const settings = loadOperatorConfig({
    SVC_GMS_URL: server,
    SVC_GMS_TOKEN: ADMIN_TOKEN,
    SVC_OPERATOR_NAMESPACE: namespace,
    SVC_OPERATOR_POD_NAMESPACE: namespace,
    SVC_OPERATOR_PORT: '0',
    SVC_OPERATOR_LEADER_ELECTION: 'false',
    SVC_OPERATOR_POLL_SECONDS: '0.2',
    ...env,
  });
  return startOperator(settings, pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? 'silent' }), config);
}

export interface OperatorProcess {
  child: ChildProcess;
  /** Log lines so far (JSON). */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `npm run operator`'s entry (compiled, as users run it) as a process of its own (for leader election and SIGTERM). */
export function spawnOperator(env: Record<string, string>): OperatorProcess {
  const child = spawn(process.execPath, [builtEntry('operator/src/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, SVC_OPERATOR_PORT: '0', SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return {
    child,
    output: () => out,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await gone;
    },
  };
}

const ref = (namespace: string, plural: Plural) => ({ group: GROUP, version: VERSION, namespace, plural });

export async function createObject<T>(namespace: string, plural: Plural, body: Record<string, unknown>): Promise<T> {
  const kind = plural === 'structuredproperties' ? 'StructuredProperty' : 'TruncationJob';
  return (await objects.createNamespacedCustomObject({ ...ref(namespace, plural), body: { apiVersion: `${GROUP}/${VERSION}`, kind, ...body } })) as T;
}

export async function getObject<T>(namespace: string, plural: Plural, name: string): Promise<T | undefined> {
  try {
    return (await objects.getNamespacedCustomObject({ ...ref(namespace, plural), name })) as T;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return undefined;
    throw err;
  }
}

export async function patchObject<T>(namespace: string, plural: Plural, name: string, body: Record<string, unknown>): Promise<T> {
  return (await objects.patchNamespacedCustomObject({ ...ref(namespace, plural), name, body }, merge)) as T;
}

export async function deleteObject(namespace: string, plural: Plural, name: string): Promise<void> {
  await objects.deleteNamespacedCustomObject({ ...ref(namespace, plural), name });
}

export const condition = (o: { status?: { conditions?: Condition[] } } | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

/** Waits until the StructuredProperty's status satisfies `ok`; returns the object. */
export function waitProperty(namespace: string, name: string, what: string, ok: (o: StructuredProperty) => boolean, timeoutMs = 30_000): Promise<StructuredProperty> {
  return pollUntil(
    `${namespace}/${name}: ${what}`,
    () => getObject<StructuredProperty>(namespace, 'structuredproperties', name),
    (o) => o !== undefined && ok(o),
    timeoutMs,
  ) as Promise<StructuredProperty>;
}

export function waitJob(namespace: string, name: string, what: string, ok: (o: TruncationJob) => boolean, timeoutMs = 30_000): Promise<TruncationJob> {
  return pollUntil(
    `${namespace}/${name}: ${what}`,
    () => getObject<TruncationJob>(namespace, 'truncationjobs', name),
    (o) => o !== undefined && ok(o),
    timeoutMs,
  ) as Promise<TruncationJob>;
}

/** Whether the object is ready for its current generation. */
export const readyNow = (o: StructuredProperty | TruncationJob) => condition(o, 'Ready')?.status === 'True' && o.status?.observedGeneration === o.metadata.generation;

/** The reasons of the Events recorded about an object, oldest first. */
export async function eventReasons(namespace: string, name: string): Promise<string[]> {
  const list = await eventsApi.listNamespacedEvent({ namespace, fieldSelector: `regarding.name=${name}` });
  return list.items.sort((a, b) => new Date(a.eventTime as unknown as string).getTime() - new Date(b.eventTime as unknown as string).getTime()).map((e) => e.reason ?? '');
}

/** Finishes a Job as the Job controller would (the harness runs no pods): Complete or Failed, through `/status`. */
export async function finishJob(namespace: string, name: string, outcome: 'Complete' | 'Failed'): Promise<void> {
  const now = new Date();
  const conditions =
    outcome === 'Complete'
      ? [
          { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods', lastTransitionTime: now, lastProbeTime: now },
          { type: 'Complete', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods', lastTransitionTime: now, lastProbeTime: now },
        ]
      : [
          { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', lastTransitionTime: now, lastProbeTime: now },
          { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', lastTransitionTime: now, lastProbeTime: now },
        ];
  await batch.patchNamespacedJobStatus(
    { name, namespace, body: { status: { startTime: now, ...(outcome === 'Complete' ? { completionTime: now, succeeded: 1 } : { failed: 4 }), conditions } } },
    merge,
  );
}

/**
 * System update without Helm hooks: when the server Deployment the operator is configured with
 * reaches a new revision (`deployment.kubernetes.io/revision`, which the Deployment controller raises on
 * every change of the pod template, image included), the operator creates one Job
 * `<release>-system-update-<revision>` that runs `system-update` with the server's own image,
 * environment and volumes, owned by the Deployment (garbage-collected with it). The Job's name is the
 * memory: it is created once per revision, and a failed one is reported, never created again. The
 * result is written on the Job (annotation `catalog.svc.dev/result`) and as an Event on the
 * Deployment. This is what runs system update under Argo CD or Flux, which render the chart without
 * its hooks.
 */
import { ApiException, BatchV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Deployment, type V1Job } from '@kubernetes/client-node';
import type { Logger } from '../../../server/src/log.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** Label on the Jobs, naming the Deployment they update for. */
export const FOR_LABEL = 'catalog.svc.dev/system-update-for';
/** Annotation on a finished Job once its result was reported: Succeeded or Failed. */
export const RESULT_ANNOTATION = 'catalog.svc.dev/result';
/** What the Job's container runs, from the server image's working directory (the app root). */
export const SYSTEM_UPDATE_COMMAND = ['node', '--import', 'tsx', 'server/src/systemUpdate.ts'];

export interface SystemUpdateDeps {
  kc: KubeConfig;
  deployments: Informer<V1Deployment>;
  jobs: Informer<V1Job>;
  events: EventRecorder;
  log: Logger;
  /** Prefix of the Job names (the Helm release); default: the Deployment's name. */
  release: string | undefined;
}

/** `<release>-system-update-<revision>`, within the 63 characters a Job name (and its pods' label) may have. */
export function jobNameOf(release: string, revision: string): string {
  const suffix = `-system-update-${revision}`;
  return `${release.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`;
}

const finished = (job: V1Job, type: 'Complete' | 'Failed') => job.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;

export class SystemUpdateReconciler {
  private readonly batch: BatchV1Api;

  constructor(private readonly deps: SystemUpdateDeps) {
    this.batch = deps.kc.makeApiClient(BatchV1Api);
  }

  /** `key` is the Deployment's `namespace/name`. */
  async reconcile(key: string): Promise<void> {
    const deployment = this.deps.deployments.get(key);
    const revision = deployment?.metadata?.annotations?.[REVISION_ANNOTATION];
    // No revision yet: the Deployment controller sets it as soon as it has seen the Deployment.
    if (!deployment || !revision || deployment.metadata?.deletionTimestamp) return;
    const namespace = deployment.metadata!.namespace!;
    const name = jobNameOf(this.deps.release ?? deployment.metadata!.name!, revision);
    const job = this.deps.jobs.get(`${namespace}/${name}`);
    if (!job) return this.create(deployment, name, revision);
    const result = finished(job, 'Complete') ? 'Succeeded' : finished(job, 'Failed') ? 'Failed' : undefined;
    if (!result || job.metadata?.annotations?.[RESULT_ANNOTATION] === result) return;
    await this.batch.patchNamespacedJob({ name, namespace, body: { metadata: { annotations: { [RESULT_ANNOTATION]: result } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const why = job.status?.conditions?.find((c) => c.type === 'Failed')?.message;
    const ref = { ...deployment, apiVersion: 'apps/v1', kind: 'Deployment' };
    if (result === 'Succeeded') await this.deps.events.record(ref, 'Normal', 'SystemUpdateSucceeded', 'SystemUpdate', `Job ${name} completed system update for revision ${revision}`);
    else await this.deps.events.record(ref, 'Warning', 'SystemUpdateFailed', 'SystemUpdate', `Job ${name} failed${why ? `: ${why}` : ''}; see its logs (kubectl logs job/${name}); it is not run again for revision ${revision}`);
    this.deps.log.info({ deployment: key, job: name, result }, 'system update finished');
  }

  private async create(deployment: V1Deployment, name: string, revision: string): Promise<void> {
    const namespace = deployment.metadata!.namespace!;
    const template = deployment.spec!.template;
    const pod = template.spec!;
    const server = pod.containers.find((c) => c.name === 'svc' || c.name === 'server') ?? pod.containers[0]!;
    const job: V1Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/managed-by': 'svc-operator', 'app.kubernetes.io/component': 'system-update', [FOR_LABEL]: deployment.metadata!.name!, 'catalog.svc.dev/revision': revision },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata!.name!, uid: deployment.metadata!.uid!, blockOwnerDeletion: false, controller: false }],
      },
      spec: {
        backoffLimit: 3,
        template: {
          metadata: { labels: { 'app.kubernetes.io/component': 'system-update', [FOR_LABEL]: deployment.metadata!.name! } },
          spec: {
            restartPolicy: 'Never',
            serviceAccountName: pod.serviceAccountName,
            securityContext: pod.securityContext,
            imagePullSecrets: pod.imagePullSecrets,
            nodeSelector: pod.nodeSelector,
            tolerations: pod.tolerations,
            volumes: pod.volumes,
            containers: [
              {
                name: 'system-update',
                image: server.image,
                imagePullPolicy: server.imagePullPolicy,
                command: SYSTEM_UPDATE_COMMAND,
                workingDir: server.workingDir,
                env: server.env,
                envFrom: server.envFrom,
                volumeMounts: server.volumeMounts,
                securityContext: server.securityContext,
                resources: server.resources,
              },
            ],
          },
        },
      },
    };
    try {
      await this.batch.createNamespacedJob({ namespace, body: job });
    } catch (err) {
      // Created by an earlier reconcile whose watch event has not arrived yet: nothing to do.
      if (err instanceof ApiException && err.code === 409) return;
      throw err;
    }
    this.deps.log.info({ deployment: `${namespace}/${deployment.metadata!.name}`, job: name, revision, image: server.image }, 'system update Job created');
    await this.deps.events.record({ ...deployment, apiVersion: 'apps/v1', kind: 'Deployment' }, 'Normal', 'SystemUpdateStarted', 'SystemUpdate', `created Job ${name} for revision ${revision} (${server.image})`);
  }
}

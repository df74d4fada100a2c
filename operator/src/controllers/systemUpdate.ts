/**
 * System update without Helm hooks: when the server Deployment the operator is configured with
 * reaches a new revision (`deployment.kubernetes.io/revision`, which the Deployment controller raises on
 * every change of the pod template, image included), the operator creates one Job
 * `<release>-system-update-op-<revision>` that runs `system-update` with the server's own image,
 * environment (less the admin token, which system update does not use), volumes and scheduling, owned
 * by the Deployment (garbage-collected with it), as the chart's hook Job would. Its limits and
 * resources come from the Deployment's annotation `catalog.svc.dev/system-update-job` (the chart's
 * `systemUpdate` values). The Job's name is the memory: it is created once per revision, and a failed
 * one is reported, never created again; `-op-` keeps it apart from the hook Jobs
 * `<release>-system-update-<helm revision>` a release switched from hook mode still has. The result is
 * written on the Job (annotation `catalog.svc.dev/result`) and as an Event on the Deployment. This is
 * what runs system update under Argo CD or Flux, which render the chart without its hooks.
 */
import { ApiException, BatchV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Deployment, type V1Job, type V1ResourceRequirements } from '@kubernetes/client-node';
import type { Logger } from '../../../server/src/log.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** Label on the Jobs, naming the Deployment they update for. */
export const FOR_LABEL = 'catalog.svc.dev/system-update-for';
/** Annotation on a finished Job once its result was reported: Succeeded or Failed. */
export const RESULT_ANNOTATION = 'catalog.svc.dev/result';
/** What the Job's container runs, from the server image's working directory (the app root): system update as compiled into the image. */
export const SYSTEM_UPDATE_COMMAND = ['node', 'dist/server/src/systemUpdate.js'];
/**
 * Annotation on the server Deployment: the Job's settings as JSON, the chart's `systemUpdate` values, e.g.
 * `{"backoffLimit":3,"activeDeadlineSeconds":1800,"ttlSecondsAfterFinished":null,"resources":{"limits":{"memory":"1Gi"}}}`.
 * On the Deployment rather than in the operator's environment, so that a `helm upgrade` changing them
 * reaches the Job of the revision it rolls out, in the same object the operator already watches.
 */
export const JOB_SETTINGS_ANNOTATION = 'catalog.svc.dev/system-update-job';
/** Server environment left out of the Job, as the chart's hook Job leaves it out: system update needs no admin token. */
const NOT_FOR_THE_JOB = new Set(['SVC_ADMIN_TOKEN']);

/** The Job settings of {@link JOB_SETTINGS_ANNOTATION}; a missing field takes the chart's default (resources: the server's). */
export interface JobSettings {
  backoffLimit: number;
  activeDeadlineSeconds: number;
  ttlSecondsAfterFinished?: number;
  resources?: V1ResourceRequirements;
}

const DEFAULT_SETTINGS: JobSettings = { backoffLimit: 3, activeDeadlineSeconds: 1800 };

/** Reads the settings of a Deployment; throws naming the annotation and the bad field. */
export function jobSettingsOf(deployment: V1Deployment): JobSettings {
  const raw = deployment.metadata?.annotations?.[JOB_SETTINGS_ANNOTATION];
  if (!raw) return DEFAULT_SETTINGS;
  const notAnObject = () => `annotation ${JOB_SETTINGS_ANNOTATION} must be a JSON object, got ${JSON.stringify(raw)}`;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(raw) as Record<string, unknown>;
  } catch (err) {
    throw new Error(notAnObject(), { cause: err });
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(notAnObject());
  const bad: string[] = [];
  const count = (k: string, min: number): number | undefined => {
    const x = v[k];
    if (x === undefined || x === null) return undefined;
    if (typeof x === 'number' && Number.isInteger(x) && x >= min) return x;
    bad.push(`${k} must be an integer of at least ${min}, got ${JSON.stringify(x)}`);
    return undefined;
  };
  const settings: JobSettings = {
    backoffLimit: count('backoffLimit', 0) ?? DEFAULT_SETTINGS.backoffLimit,
    activeDeadlineSeconds: count('activeDeadlineSeconds', 1) ?? DEFAULT_SETTINGS.activeDeadlineSeconds,
    ttlSecondsAfterFinished: count('ttlSecondsAfterFinished', 0),
  };
  if (v.resources !== undefined && v.resources !== null) {
    if (typeof v.resources === 'object' && !Array.isArray(v.resources)) settings.resources = v.resources as V1ResourceRequirements;
    else bad.push(`resources must be an object, got ${JSON.stringify(v.resources)}`);
  }
  if (bad.length) throw new Error(`annotation ${JOB_SETTINGS_ANNOTATION}: ${bad.join('; ')}`);
  return settings;
}

export interface SystemUpdateDeps {
  kc: KubeConfig;
  deployments: Informer<V1Deployment>;
  jobs: Informer<V1Job>;
  events: EventRecorder;
  log: Logger;
  /** Prefix of the Job names (the Helm release); default: the Deployment's name. */
  release: string | undefined;
}

/**
 * `<release>-system-update-op-<revision>`, within the 63 characters a Job name (and its pods' label) may
 * have. `-op-`: a hook Job is `<release>-system-update-<helm revision>`, and a Deployment revision can
 * equal a Helm revision whose hook Job is still there.
 */
export function jobNameOf(release: string, revision: string): string {
  const suffix = `-system-update-op-${revision}`;
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
    try {
      await this.deleteExpired(deployment, revision);
    } catch (err) {
      // Housekeeping: it must not keep the current revision from its Job (e.g. RBAC without delete).
      this.deps.log.warn({ deployment: key, err }, 'finished system update Jobs of earlier revisions not deleted');
    }
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

  /**
   * `ttlSecondsAfterFinished`, applied by the operator to the Jobs of earlier revisions only: the Job of
   * the current revision is the memory that it ran, and Kubernetes' own TTL would delete it, after
   * which the revision would run again. Checked on each reconcile (at least every resync).
   */
  private async deleteExpired(deployment: V1Deployment, revision: string): Promise<void> {
    let ttl: number | undefined;
    try {
      ttl = jobSettingsOf(deployment).ttlSecondsAfterFinished;
    } catch {
      return; // reported when the Job of this revision is created
    }
    if (ttl === undefined) return;
    const namespace = deployment.metadata!.namespace!;
    const now = Date.now();
    for (const job of this.deps.jobs.list()) {
      const m = job.metadata!;
      if (m.namespace !== namespace || m.labels?.['catalog.svc.dev/revision'] === revision || m.deletionTimestamp) continue;
      if (!m.ownerReferences?.some((o) => o.uid === deployment.metadata!.uid)) continue;
      const end = job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.lastTransitionTime;
      if (!end || now - new Date(end).getTime() < ttl * 1000) continue;
      try {
        await this.batch.deleteNamespacedJob({ name: m.name!, namespace, propagationPolicy: 'Background' });
      } catch (err) {
        if (!(err instanceof ApiException && err.code === 404)) throw err;
      }
      this.deps.log.info({ deployment: `${namespace}/${deployment.metadata!.name}`, job: m.name }, 'finished system update Job of an earlier revision deleted (ttlSecondsAfterFinished)');
    }
  }

  private async create(deployment: V1Deployment, name: string, revision: string): Promise<void> {
    const namespace = deployment.metadata!.namespace!;
    const template = deployment.spec!.template;
    const pod = template.spec!;
    const server = pod.containers.find((c) => c.name === 'svc' || c.name === 'server') ?? pod.containers[0]!;
    const ref = { ...deployment, apiVersion: 'apps/v1', kind: 'Deployment' };
    let settings: JobSettings;
    try {
      settings = jobSettingsOf(deployment);
    } catch (err) {
      // Fixed only by a new Deployment (a new revision): report, and let the next revision try.
      const message = (err as Error).message;
      this.deps.log.warn({ deployment: `${namespace}/${deployment.metadata!.name}`, revision, err: message }, 'system update Job not created');
      await this.deps.events.record(ref, 'Warning', 'SystemUpdateInvalid', 'SystemUpdate', `no Job for revision ${revision}: ${message}`);
      return;
    }
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
        backoffLimit: settings.backoffLimit,
        activeDeadlineSeconds: settings.activeDeadlineSeconds,
        template: {
          metadata: { labels: { 'app.kubernetes.io/component': 'system-update', [FOR_LABEL]: deployment.metadata!.name! } },
          spec: {
            restartPolicy: 'Never',
            serviceAccountName: pod.serviceAccountName,
            automountServiceAccountToken: pod.automountServiceAccountToken,
            securityContext: pod.securityContext,
            imagePullSecrets: pod.imagePullSecrets,
            nodeSelector: pod.nodeSelector,
            tolerations: pod.tolerations,
            affinity: pod.affinity,
            volumes: pod.volumes,
            containers: [
              {
                name: 'system-update',
                image: server.image,
                imagePullPolicy: server.imagePullPolicy,
                command: SYSTEM_UPDATE_COMMAND,
                workingDir: server.workingDir,
                env: server.env?.filter((e) => !NOT_FOR_THE_JOB.has(e.name)),
                envFrom: server.envFrom,
                volumeMounts: server.volumeMounts,
                securityContext: server.securityContext,
                resources: settings.resources ?? server.resources,
              },
            ],
          },
        },
      },
    };
    try {
      await this.batch.createNamespacedJob({ namespace, body: job });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
      return this.nameTaken(ref, name, revision);
    }
    this.deps.log.info({ deployment: `${namespace}/${deployment.metadata!.name}`, job: name, revision, image: server.image }, 'system update Job created');
    await this.deps.events.record(ref, 'Normal', 'SystemUpdateStarted', 'SystemUpdate', `created Job ${name} for revision ${revision} (${server.image})`);
  }

  /**
   * A Job of that name exists. Owned by this Deployment: created by an earlier reconcile whose watch
   * event has not arrived yet, nothing to do. Anyone else's: system update does not run for this
   * revision, which must not go unnoticed.
   */
  private async nameTaken(deployment: V1Deployment, name: string, revision: string): Promise<void> {
    const namespace = deployment.metadata!.namespace!;
    const other = await this.batch.readNamespacedJob({ name, namespace });
    if (other.metadata?.ownerReferences?.some((o) => o.uid === deployment.metadata!.uid)) return;
    this.deps.log.warn({ deployment: `${namespace}/${deployment.metadata!.name}`, job: name, revision }, 'a Job of the system-update name exists and is not the operator\'s: system update not run');
    await this.deps.events.record(
      deployment,
      'Warning',
      'SystemUpdateNameTaken',
      'SystemUpdate',
      `Job ${name} exists and was not created by the operator for this Deployment: system update does not run for revision ${revision}; delete that Job to let it run`,
    );
  }
}

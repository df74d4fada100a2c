/**
 * The operator assembled: informers feeding keyed work queues, the three controllers
 * (StructuredProperty, TruncationJob, system update), leader election, Events, metrics and probes.
 * Everything that acts starts only once this replica holds the Lease; a standby replica serves its
 * probes and waits.
 */
import { AppsV1Api, BatchV1Api, type KubeConfig, type KubernetesObject, type V1Deployment, type V1Job } from '@kubernetes/client-node';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { CatalogClient } from './catalog.ts';
import { keepAliveKubeConfig } from './kubeConfig.ts';
import type { OperatorConfig } from './config.ts';
import { StructuredPropertyReconciler } from './controllers/structuredProperty.ts';
import { FOR_LABEL, SystemUpdateReconciler } from './controllers/systemUpdate.ts';
import { TruncationJobReconciler } from './controllers/truncationJob.ts';
import { CustomResources, keyOf, type StructuredProperty, type TruncationJob } from './resources.ts';
import { Controller } from './runtime/controller.ts';
import { EventRecorder } from './runtime/events.ts';
import { startHealthServer } from './runtime/health.ts';
import { Informer, type InformerEvent } from './runtime/informer.ts';
import { LeaderElector } from './runtime/leaderElection.ts';
import { OperatorMetrics } from './runtime/metrics.ts';
import { sameJson } from './runtime/sameJson.ts';

export interface Operator {
  /** Port of /healthz, /readyz and /metrics. */
  port: number;
  metrics: OperatorMetrics;
  isLeader(): boolean;
  /** Resolves when the operator stopped on its own (leadership lost); `stop()` resolves it too. */
  done: Promise<'stopped' | 'lost-leadership'>;
  stop(): Promise<void>;
}

/** A watch event worth a reconcile: anything but a status-only change (the operator's own writes). */
function worthReconciling(event: InformerEvent, obj: KubernetesObject, previous: KubernetesObject | undefined): boolean {
  if (event !== 'update' || !previous) return true;
  const a = previous.metadata ?? {};
  const b = obj.metadata ?? {};
  return a.generation !== b.generation || a.deletionTimestamp !== b.deletionTimestamp || !sameJson(a.annotations, b.annotations) || !sameJson(a.finalizers, b.finalizers);
}

/** Starts the operator against the cluster of `kubeConfig` (main.ts loads it with `loadKubeConfig`). */
export async function startOperator(config: OperatorConfig, log: Logger, kubeConfig: KubeConfig): Promise<Operator> {
  const connections = keepAliveKubeConfig(kubeConfig);
  const kc = connections.kc;
  const metrics = new OperatorMetrics();
  const catalog = new CatalogClient({ server: config.server, token: config.token });
  const events = new EventRecorder(kc, 'catalog.svc.dev/svc-operator', config.identity, log);
  const resyncMs = config.resyncSeconds * 1000;
  const pollMs = config.pollSeconds * 1000;
  const informers: Informer<KubernetesObject>[] = [];
  const controllers: Controller[] = [];

  /** An informer of one custom resource feeding `controller`'s queue with the keys worth a reconcile. */
  const watchCustom = <T extends StructuredProperty | TruncationJob>(resources: CustomResources<T>, controller: () => Controller, also?: (obj: T, previous: T | undefined) => string[]) =>
    new Informer<T>({
      kc,
      name: resources.plural,
      path: resources.path,
      list: () => resources.list(),
      relistMs: resyncMs,
      log,
      onEvent: (event, obj, previous) => {
        if (!worthReconciling(event, obj, previous)) return;
        controller().queue.add(keyOf(obj));
        for (const k of also?.(obj, previous as T | undefined) ?? []) controller().queue.add(k);
      },
    });

  // StructuredProperty: an object deleted, released (managed: "false"), taken back or renamed may free or
  // claim a qualified name: the other objects of its name (and of its former name) are looked at again.
  const properties = new CustomResources<StructuredProperty>(kc, 'structuredproperties', config.namespace);
  let propertyController: Controller | undefined;
  const propertyInformer: Informer<StructuredProperty> = watchCustom(properties, () => propertyController!, (obj, previous): string[] => [
    ...propertyReconciler.rivals(obj),
    ...(previous && previous.spec.qualifiedName !== obj.spec.qualifiedName ? propertyReconciler.rivals(previous) : []),
  ]);
  const propertyReconciler: StructuredPropertyReconciler = new StructuredPropertyReconciler({ resources: properties, informer: propertyInformer, catalog, events, log, resyncMs, pollMs: Math.min(pollMs, 1000) });
  propertyController = new Controller({ name: 'structuredproperty', workers: config.workers, metrics, log, reconcile: (k) => propertyReconciler.reconcile(k) });
  informers.push(propertyInformer as Informer<KubernetesObject>);
  controllers.push(propertyController);

  // TruncationJob
  const truncationJobs = new CustomResources<TruncationJob>(kc, 'truncationjobs', config.namespace);
  let jobController: Controller | undefined;
  const jobInformer = watchCustom(truncationJobs, () => jobController!);
  const jobReconciler = new TruncationJobReconciler({ resources: truncationJobs, informer: jobInformer, catalog, events, log, pollMs });
  jobController = new Controller({ name: 'truncationjob', workers: config.workers, metrics, log, reconcile: (k) => jobReconciler.reconcile(k) });
  informers.push(jobInformer as Informer<KubernetesObject>);
  controllers.push(jobController);

  // System update Jobs for the server Deployment, when one is configured.
  if (config.serverDeployment) {
    const ns = config.podNamespace;
    const name = config.serverDeployment;
    const apps = kc.makeApiClient(AppsV1Api);
    const batch = kc.makeApiClient(BatchV1Api);
    let updateController: Controller | undefined;
    const deploymentKey = `${ns}/${name}`;
    const deployments = new Informer<V1Deployment>({
      kc,
      name: 'deployments',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      fieldSelector: `metadata.name=${name}`,
      list: () => apps.listNamespacedDeployment({ namespace: ns, fieldSelector: `metadata.name=${name}` }),
      relistMs: resyncMs,
      log,
      onEvent: () => updateController!.queue.add(deploymentKey),
    });
    const jobs = new Informer<V1Job>({
      kc,
      name: 'jobs',
      path: `/apis/batch/v1/namespaces/${ns}/jobs`,
      labelSelector: `${FOR_LABEL}=${name}`,
      list: () => batch.listNamespacedJob({ namespace: ns, labelSelector: `${FOR_LABEL}=${name}` }),
      relistMs: resyncMs,
      log,
      onEvent: () => updateController!.queue.add(deploymentKey),
    });
    const updateReconciler = new SystemUpdateReconciler({ kc, deployments, jobs, events, log, release: config.release });
    updateController = new Controller({ name: 'systemupdate', workers: 1, metrics, log, reconcile: (k) => updateReconciler.reconcile(k) });
    informers.push(deployments as Informer<KubernetesObject>, jobs as Informer<KubernetesObject>);
    controllers.push(updateController);
  }

  let acting = false;
  let stopping = false;
  const act = () => {
    if (acting) return;
    acting = true;
    log.info({ identity: config.identity }, 'starting controllers');
    for (const c of controllers) c.start();
    for (const i of informers) i.start();
  };
  const halt = async () => {
    await Promise.all(informers.map((i) => i.stop()));
    await Promise.all(controllers.map((c) => c.stop()));
  };

  let settle!: (how: 'stopped' | 'lost-leadership') => void;
  const done = new Promise<'stopped' | 'lost-leadership'>((r) => (settle = r));
  let elector: LeaderElector | undefined;
  if (config.leaderElection) {
    elector = new LeaderElector({
      kc,
      namespace: config.podNamespace,
      name: config.leaseName,
      identity: config.identity,
      leaseDurationSeconds: config.leaseDurationSeconds,
      renewDeadlineSeconds: config.renewDeadlineSeconds,
      retryPeriodSeconds: config.retryPeriodSeconds,
      log,
      metrics,
      onStartedLeading: act,
      onStoppedLeading: () => {
        if (stopping) return;
        // As controller-runtime: a replica that lost the Lease stops acting at once and exits.
        log.error({ identity: config.identity }, 'leadership lost; stopping');
        void halt().then(() => {
          connections.close();
          settle('lost-leadership');
        });
      },
    });
    void elector.run();
  } else {
    act();
  }

  let health: { server: Server; port: number };
  try {
    health = await startHealthServer(
      config.port,
      {
        notReady: () => {
          if (!acting) return undefined; // a standby replica is ready to take over
          const waiting = informers.filter((i) => !i.synced());
          return waiting.length ? `waiting for the first list of ${waiting.length} resource(s)` : undefined;
        },
      },
      metrics,
    );
  } catch (err) {
    await elector?.stop();
    await halt();
    connections.close();
    throw err;
  }

  return {
    port: health.port,
    metrics,
    isLeader: () => (elector ? elector.isLeader() : true),
    done,
    async stop() {
      if (stopping) return;
      stopping = true;
      await halt();
      await elector?.stop({ release: true });
      await new Promise<void>((r) => health.server.close(() => r()));
      connections.close();
      settle('stopped');
    },
  };
}

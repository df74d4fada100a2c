/**
 * The operator's Prometheus metrics, under the names controller-runtime and client-go export, so the
 * dashboards and alerts written for Go operators work unchanged: `controller_runtime_reconcile_*`,
 * `workqueue_*` and `leader_election_master_status`, plus Node's process metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What a work queue reports; the queue calls it, {@link OperatorMetrics.queue} makes it. */
export interface QueueMetrics {
  /** A key became dirty (was not already waiting): `workqueue_adds_total`. */
  added(): void;
  /** Keys that need processing now (dirty: ready, or added again while processed): `workqueue_depth`. */
  depth(keys: number): void;
  /** A worker took a key that had waited `queuedSeconds`: `workqueue_queue_duration_seconds`. */
  got(queuedSeconds: number): void;
  /** A worker finished a key it had held `workSeconds`: `workqueue_work_duration_seconds`. */
  done(workSeconds: number): void;
  /** A key was added with a delay (backoff or requeue-after): `workqueue_retries_total`. */
  retry(): void;
  /**
   * Registers how to read, at scrape time, how long each key being processed has been held, in seconds:
   * `workqueue_unfinished_work_seconds` (their sum) and `workqueue_longest_running_processor_seconds` (their max).
   */
  processing(heldSeconds: () => number[]): void;
}

/** What a controller reports per reconcile; {@link OperatorMetrics.reconcile} makes it. */
export interface ReconcileMetrics {
  /** One reconcile finished with `result` after `seconds`: total by result, errors, time histogram. */
  observe(result: ReconcileOutcome, seconds: number): void;
  /** Workers reconciling right now: `controller_runtime_active_workers`. */
  activeWorkers: { inc(): void; dec(): void };
  /** Workers of the controller: `controller_runtime_max_concurrent_reconciles`. */
  setMaxConcurrent(n: number): void;
}

/** controller-runtime's `result` label: `requeue` is a rate-limited retry without an error, `requeue_after` a timed one. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

const OUTCOMES: readonly ReconcileOutcome[] = ['success', 'error', 'requeue', 'requeue_after'];

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets, 5 ms to 60 s. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5,
  3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The work queue latency buckets, `ExponentialBuckets(10e-9, 10, 12)`: 10 ns to 1000 s, written out so the `le` labels stay exact. */
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000];

/** The labels of a `workqueue_*` series: controller-runtime sets `controller` to the queue's name as well. */
type QueueLabels = 'name' | 'controller';

/** One registry with every metric of the operator; `GET /metrics` serves {@link OperatorMetrics.expose}. */
export class OperatorMetrics {
  /** The operator's own registry (not prom-client's global one), with Node's default process metrics. */
  readonly registry = new Registry();
  /** What every `controller_runtime_*` series shares: its label and this registry. */
  private readonly controllerSeries = { labelNames: ['controller'] as const, registers: [this.registry] };
  /** What every `workqueue_*` series shares: its labels and this registry. */
  private readonly queueSeries = { labelNames: ['name', 'controller'] as QueueLabels[], registers: [this.registry] };

  private readonly reconcileTotal = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Total number of reconciliations per controller', ...this.controllerSeries, labelNames: ['controller', 'result'] as const });
  private readonly reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Total number of reconciliation errors per controller', ...this.controllerSeries });
  private readonly reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Length of time per reconciliation per controller', buckets: RECONCILE_BUCKETS, ...this.controllerSeries });
  private readonly maxConcurrent = new Gauge({ name: 'controller_runtime_max_concurrent_reconciles', help: 'Maximum number of concurrent reconciles per controller', ...this.controllerSeries });
  private readonly activeWorkers = new Gauge({ name: 'controller_runtime_active_workers', help: 'Number of currently used workers per controller', ...this.controllerSeries });

  private readonly queueDepth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', ...this.queueSeries });
  private readonly queueAdds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', ...this.queueSeries });
  private readonly queueLatency = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested', buckets: QUEUE_BUCKETS, ...this.queueSeries });
  private readonly workDuration = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', buckets: QUEUE_BUCKETS, ...this.queueSeries });
  private readonly queueRetries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', ...this.queueSeries });
  /** Each queue's reader of how long its keys in processing have been held, read at scrape time. */
  private readonly processingReaders = new Map<string, () => number[]>();
  private readonly unfinishedWork = processingGauge(this.registry, this.processingReaders, {
    name: 'workqueue_unfinished_work_seconds',
    help:
      "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
    reduce: (held) => held.reduce((sum, s) => sum + s, 0),
  });
  private readonly longestRunning = processingGauge(this.registry, this.processingReaders, {
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    reduce: (held) => held.reduce((max, s) => Math.max(max, s), 0),
  });

  private readonly leaderStatus = new Gauge({
    name: 'leader_election_master_status',
    help:
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * controller-runtime's reconcile metrics for one controller. Every series starts at 0, as
   * controller-runtime's `initMetrics`, so a rate over a controller that never failed is 0, not absent.
   */
  reconcile(controller: string): ReconcileMetrics {
    for (const result of OUTCOMES) this.reconcileTotal.inc({ controller, result }, 0);
    this.reconcileErrors.inc({ controller }, 0);
    this.activeWorkers.set({ controller }, 0);
    const active = this.activeWorkers.labels({ controller });
    return {
      observe: (result, seconds) => {
        this.reconcileTotal.inc({ controller, result });
        if (result === 'error') this.reconcileErrors.inc({ controller });
        this.reconcileTime.observe({ controller }, seconds);
      },
      activeWorkers: { inc: () => active.inc(), dec: () => active.dec() },
      setMaxConcurrent: (n) => this.maxConcurrent.set({ controller }, n),
    };
  }

  /** The `workqueue_*` metrics of the queue `name`, to pass as `WorkQueueOptions.metrics`. */
  queue(name: string): QueueMetrics {
    const labels = { name, controller: name };
    this.queueDepth.set(labels, 0);
    this.queueAdds.inc(labels, 0);
    this.queueRetries.inc(labels, 0);
    return {
      added: () => this.queueAdds.inc(labels),
      depth: (keys) => this.queueDepth.set(labels, keys),
      got: (queuedSeconds) => this.queueLatency.observe(labels, queuedSeconds),
      done: (workSeconds) => this.workDuration.observe(labels, workSeconds),
      retry: () => this.queueRetries.inc(labels),
      processing: (heldSeconds) => this.processingReaders.set(name, heldSeconds),
    };
  }

  /** `leader_election_master_status{name}`: 1 while this replica holds the Lease `name`, else 0. */
  setLeader(name: string, leading: boolean): void {
    this.leaderStatus.set({ name }, leading ? 1 : 0);
  }

  /** The text exposition for `GET /metrics`, with its content type. */
  async expose(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * A `workqueue_*` gauge computed when scraped from every queue's processing ages (client-go updates
 * them from a 500 ms ticker; computing them on scrape needs no timer and is never stale).
 */
function processingGauge(
  registry: Registry,
  readers: Map<string, () => number[]>,
  opts: { name: string; help: string; reduce(heldSeconds: number[]): number },
): Gauge<QueueLabels> {
  return new Gauge<QueueLabels>({
    name: opts.name,
    help: opts.help,
    labelNames: ['name', 'controller'],
    registers: [registry],
    collect() {
      for (const [name, read] of readers) this.set({ name, controller: name }, opts.reduce(read()));
    },
  });
}

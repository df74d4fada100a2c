/**
 * A controller: workers taking keys from a work queue and reconciling them, one reconcile per key at
 * a time. A reconcile that succeeds resets the key's backoff and may ask to be called again after a
 * while (polling); one that throws is retried with the queue's per-key exponential backoff, as
 * controller-runtime's error policy does.
 */
import type { Logger } from 'pino';
import type { OperatorMetrics } from './metrics.ts';
import { WorkQueue } from './workQueue.ts';

/** What a reconcile asks for next: nothing (wait for a change) or another look after `requeueAfterMs`. */
export interface ReconcileResult {
  requeueAfterMs?: number;
}

export interface ControllerOptions {
  name: string;
  workers: number;
  metrics: OperatorMetrics;
  log: Logger;
  /** Makes the object named by `namespace/name` match its spec; idempotent. */
  reconcile(key: string): Promise<ReconcileResult | void>;
}

export class Controller {
  readonly queue: WorkQueue;
  private workers: Promise<void>[] = [];

  constructor(private readonly opts: ControllerOptions) {
    this.queue = new WorkQueue({ name: opts.name, metrics: opts.metrics.queue(opts.name) });
  }

  /** Starts the workers. Keys may be added before: they wait in the queue. */
  start(): void {
    const m = this.opts.metrics.reconcile(this.opts.name);
    m.setMaxConcurrent(this.opts.workers);
    for (let i = 0; i < this.opts.workers; i++) this.workers.push(this.work(m));
  }

  /** Stops taking keys and waits for the reconciles in progress. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  private async work(m: ReturnType<OperatorMetrics['reconcile']>): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = performance.now();
      m.activeWorkers.inc();
      try {
        const result = await this.opts.reconcile(key);
        this.queue.forget(key);
        if (result?.requeueAfterMs !== undefined) {
          this.queue.addAfter(key, result.requeueAfterMs);
          m.observe('requeue_after', (performance.now() - started) / 1000);
        } else m.observe('success', (performance.now() - started) / 1000);
      } catch (err) {
        m.observe('error', (performance.now() - started) / 1000);
        this.opts.log.warn({ controller: this.opts.name, key, err: (err as Error)?.message ?? String(err), retries: this.queue.numRequeues(key) }, 'reconcile failed; retrying with backoff');
        this.queue.addRateLimited(key);
      } finally {
        m.activeWorkers.dec();
        this.queue.done(key);
      }
    }
  }
}

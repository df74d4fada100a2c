/**
 * client-go's rate-limited work queue (`k8s.io/client-go/util/workqueue`) for the operator's controllers:
 * a FIFO of keys with a dirty set (a key waiting once, however often it is added), a processing set (one
 * reconcile per key at a time: a key added while processed waits until `done`), a delaying part
 * (`addAfter`) and client-go's default controller rate limiter for retries, the maximum of a per-key
 * exponential backoff and an overall token bucket.
 */
import type { QueueMetrics } from './metrics.ts';

/** A queue's name and rate limits; the defaults are client-go's `DefaultControllerRateLimiter`. */
export interface WorkQueueOptions {
  /** The queue's name: the `name` label of its `workqueue_*` metrics, e.g. `structuredproperties`. */
  name: string;
  /** First delay of a key's exponential backoff, in ms (default 5, client-go's). */
  baseDelayMs?: number;
  /** Cap of that backoff, in ms (default 1 000 000, i.e. 1000 s, client-go's). */
  maxDelayMs?: number;
  /** Rate of the token bucket shared by every rate-limited add, per second (default 10). */
  qps?: number;
  /** Size of that bucket: rate-limited adds that pass at once before `qps` applies (default 100). */
  burst?: number;
  /** Where the queue reports adds, depth, latencies and retries; from `OperatorMetrics.queue(name)`. */
  metrics?: QueueMetrics;
  /** The clock, in ms; tests pass a fake one (default `Date.now`). */
  now?: () => number;
}

/** A delayed key: when it becomes ready and the timer that will add it then. */
interface Delayed {
  readyAt: number;
  timer: NodeJS.Timeout;
}

/** Node's timers overflow past 2^31 - 1 ms; a longer wait is re-armed when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The work queue a controller's workers take keys from. Events only add keys; a worker `get`s a key,
 * reconciles it, then calls `forget` (on success) and always `done`.
 */
export class WorkQueue {
  /** Keys ready to be handed out, in order; each is dirty and none is being processed. */
  private readonly queue: string[] = [];
  /** Keys that need processing, with the time each became dirty (for the queue latency). */
  private readonly dirty = new Map<string, number>();
  /** Keys a worker holds, with the time it took them. */
  private readonly processing = new Map<string, number>();
  /** Workers waiting in `get`, first come first served. */
  private readonly getters: Array<(key: string | undefined) => void> = [];
  /** Keys waiting for their `addAfter` time; an earlier time replaces a later one. */
  private readonly delayed = new Map<string, Delayed>();
  /** Retries of each key since its last `forget`: the exponent of its backoff. */
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly qps: number;
  private readonly burst: number;
  private readonly metrics: QueueMetrics | undefined;
  private readonly now: () => number;
  private tokens: number;
  private tokensAt: number;
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions) {
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 1_000_000;
    this.qps = opts.qps ?? 10;
    this.burst = opts.burst ?? 100;
    this.metrics = opts.metrics;
    this.now = opts.now ?? Date.now;
    this.tokens = this.burst;
    this.tokensAt = this.now();
    this.metrics?.processing(() => this.processingSeconds());
  }

  /** Marks `key` as needing processing now; a key already waiting is not queued twice. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.set(key, this.now());
    this.metrics?.added();
    this.metrics?.depth(this.dirty.size);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.dispatch();
  }

  /**
   * Adds `key` once `delayMs` has passed (a reconcile's requeue-after). While it waits, an earlier time
   * for the same key wins and a later one is dropped; a key still waiting in the queue when its time
   * comes is merged. Counts a retry, as client-go's `AddAfter` does.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    this.metrics?.retry();
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const readyAt = this.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.readyAt <= readyAt) return;
    if (existing) clearTimeout(existing.timer);
    this.arm(key, readyAt);
  }

  /** Adds `key` after its backoff (a failed reconcile): the larger of its exponential delay and the token bucket's. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.addAfter(key, this.when(key));
  }

  /** Resets the backoff of `key`, after it was reconciled successfully. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Retries of `key` since its last `forget`. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /**
   * The next key no other worker holds, waiting for one if none is ready; the caller must call `done`
   * with it. `undefined` once the queue is shut down and has no ready key left: the worker should end.
   */
  get(): Promise<string | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Releases `key` after processing; if it was added meanwhile, it becomes ready again now. */
  done(key: string): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics?.done((this.now() - startedAt) / 1000);
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.dispatch();
    }
  }

  /** Keys ready to be handed out (delayed ones and those waiting for their `done` not counted). */
  len(): number {
    return this.queue.length;
  }

  /**
   * Stops accepting keys: waiting workers get `undefined`, delayed keys are dropped with their timers,
   * later adds are ignored. Keys already ready are still handed out, as client-go's `ShutDown`.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const resolve of this.getters.splice(0)) resolve(undefined);
  }

  /** Hands ready keys to waiting workers. */
  private dispatch(): void {
    while (this.getters.length > 0 && this.queue.length > 0) this.getters.shift()!(this.take());
  }

  /** Moves the first ready key to the processing set. */
  private take(): string {
    const key = this.queue.shift()!;
    const now = this.now();
    const dirtyAt = this.dirty.get(key) ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.metrics?.got((now - dirtyAt) / 1000);
    this.metrics?.depth(this.dirty.size);
    return key;
  }

  /**
   * Sets the timer of a delayed key. The timer checks the clock when it fires and re-arms itself if
   * the key is not due yet (a timer firing early, a fake clock in tests).
   */
  private arm(key: string, readyAt: number): void {
    const wait = Math.min(Math.max(readyAt - this.now(), 0), MAX_TIMER_MS);
    const timer = setTimeout(() => {
      if (this.delayed.get(key)?.timer !== timer) return;
      if (readyAt > this.now()) {
        this.arm(key, readyAt);
        return;
      }
      this.delayed.delete(key);
      this.add(key);
    }, wait);
    this.delayed.set(key, { readyAt, timer });
  }

  /**
   * client-go's `DefaultControllerRateLimiter`: the maximum of the key's exponential backoff
   * (base·2^retries, capped) and the token bucket's delay. Both are consumed on every call, as `MaxOf` does.
   */
  private when(key: string): number {
    const retries = this.failures.get(key) ?? 0;
    this.failures.set(key, retries + 1);
    const backoff = Math.min(this.baseDelayMs * 2 ** retries, this.maxDelayMs);
    return Math.max(backoff, this.reserveToken());
  }

  /** `golang.org/x/time/rate`'s `Reserve().Delay()`: takes a token, possibly borrowed from the future, and returns the wait in ms. */
  private reserveToken(): number {
    const now = this.now();
    const elapsed = Math.max(now - this.tokensAt, 0);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.qps) / 1000) - 1;
    this.tokensAt = Math.max(now, this.tokensAt);
    return this.tokens < 0 ? (-this.tokens / this.qps) * 1000 : 0;
  }

  /** Seconds each key in processing has been held, for the unfinished-work gauges. */
  private processingSeconds(): number[] {
    const now = this.now();
    return [...this.processing.values()].map((startedAt) => (now - startedAt) / 1000);
  }
}

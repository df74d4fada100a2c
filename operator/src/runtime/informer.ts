/**
 * List+watch of one resource into a local cache, kept alive whatever the API server does: a watch
 * that ends (the server closes watches after a few minutes) is resumed from the last resourceVersion,
 * a 410 Gone or any error is followed by a relist after a backoff with jitter, and the whole list is
 * read again periodically so that a missed event is repaired. Events only tell the controller that a
 * key changed; the reconcile reads the cache.
 *
 * client-node's own ListWatch stops for good on any error but 410 and has no periodic relist, which
 * is why this loop is written here (see the issue on the operator).
 */
import { Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';

export type InformerEvent = 'add' | 'update' | 'delete';

export interface InformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  /** Resource name for logs, e.g. structuredproperties. */
  name: string;
  /** Watch path, e.g. /apis/catalog.svc.dev/v1alpha1/structuredproperties. */
  path: string;
  /** Narrows the watch as the list is narrowed, e.g. `metadata.name=svc` or `app=svc`. */
  fieldSelector?: string;
  labelSelector?: string;
  list(): Promise<KubernetesListObject<T>>;
  /**
   * Called for every change the watch or a relist sees (also for objects already known at a relist:
   * a resync), with the object the cache held before.
   */
  onEvent(event: InformerEvent, obj: T, previous: T | undefined): void;
  relistMs: number;
  log: Logger;
  /** Backoff after a failure: min(max, base * 2^failures), with up to 100% jitter. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class Informer<T extends KubernetesObject> {
  private readonly cache = new Map<string, T>();
  private resourceVersion = '';
  private relistDue = true;
  private stopped = false;
  private hasSynced = false;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Watches restarted after an error or a close: exposed for tests and logs. */
  restarts = 0;

  constructor(private readonly opts: InformerOptions<T>) {}

  /** Starts the loop; {@link synced} turns true after the first list. */
  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    await this.loop;
  }

  /** Whether the cache holds a full list (readiness). */
  synced(): boolean {
    return this.hasSynced;
  }

  /** An object from the cache by `namespace/name`. */
  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  private async run(): Promise<void> {
    let failures = 0;
    const relistTimer = setInterval(() => {
      this.relistDue = true;
      this.abort?.abort();
    }, this.opts.relistMs);
    relistTimer.unref();
    try {
      while (!this.stopped) {
        try {
          if (this.relistDue || !this.resourceVersion) await this.relist();
          await this.watchOnce();
          failures = 0;
        } catch (err) {
          if (this.stopped) break;
          failures += 1;
          this.restarts += 1;
          const base = this.opts.backoffBaseMs ?? 200;
          const delay = Math.min(this.opts.backoffMaxMs ?? 30_000, base * 2 ** Math.min(failures - 1, 20));
          const jittered = delay * (1 + Math.random());
          this.opts.log.warn({ err: String((err as Error)?.message ?? err), resource: this.opts.name, retryInMs: Math.round(jittered) }, 'watch failed; retrying');
          await this.sleep(jittered);
        }
      }
    } finally {
      clearInterval(relistTimer);
    }
  }

  /** Lists everything, replaces the cache, and tells about every object (new, changed, unchanged: a resync) and every one gone. */
  private async relist(): Promise<void> {
    const list = await this.opts.list();
    this.relistDue = false;
    const seen = new Set<string>();
    for (const obj of list.items) {
      const key = keyOf(obj);
      seen.add(key);
      const previous = this.cache.get(key);
      this.cache.set(key, obj);
      this.opts.onEvent(previous ? 'update' : 'add', obj, previous);
    }
    for (const [key, obj] of this.cache) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      this.opts.onEvent('delete', obj, obj);
    }
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.hasSynced = true;
  }

  /** One watch from the current resourceVersion; resolves when the server ends it (or a relist is due), rejects on an error. */
  private watchOnce(): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const done = (err?: unknown) => {
        if (settled) return;
        settled = true;
        this.abort = undefined;
        if (err && !this.stopped && !this.relistDue) reject(err);
        else {
          if (!err && !this.stopped && !this.relistDue) this.restarts += 1;
          resolve();
        }
      };
      new Watch(this.opts.kc)
        .watch(
          this.opts.path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            ...(this.opts.fieldSelector ? { fieldSelector: this.opts.fieldSelector } : {}),
            ...(this.opts.labelSelector ? { labelSelector: this.opts.labelSelector } : {}),
          },
          (phase: string, obj: T & { code?: number; message?: string }) => {
            if (phase === 'ERROR') {
              // 410 Gone: the resourceVersion is too old; anything else is a failure. Both relist.
              this.relistDue = true;
              this.resourceVersion = '';
              this.abort?.abort();
              done(obj.code === 410 ? undefined : new Error(`watch error ${obj.code ?? ''}: ${obj.message ?? ''}`));
              return;
            }
            const rv = obj.metadata?.resourceVersion;
            if (rv) this.resourceVersion = rv;
            if (phase === 'BOOKMARK') return;
            const key = keyOf(obj);
            const previous = this.cache.get(key);
            if (phase === 'DELETED') {
              this.cache.delete(key);
              this.opts.onEvent('delete', obj, previous);
            } else {
              this.cache.set(key, obj);
              this.opts.onEvent(phase === 'ADDED' ? 'add' : 'update', obj, previous);
            }
          },
          (err: unknown) => done(err ?? undefined),
        )
        .then((controller) => {
          if (settled || this.stopped || this.relistDue) controller.abort();
          else this.abort = controller;
        }, done);
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

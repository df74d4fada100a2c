/**
 * Kubernetes Events (`events.k8s.io/v1`) on notable transitions of an object: what `kubectl describe`
 * and `kubectl events` show. Recording never fails a reconcile; the same event for the same object
 * is not repeated within ten minutes (a requeue loop would otherwise flood the namespace).
 */
import { EventsV1Api, V1MicroTime, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';

const DEDUPE_MS = 10 * 60_000;

export class EventRecorder {
  private readonly api: EventsV1Api;
  private readonly recent = new Map<string, number>();

  constructor(
    kc: KubeConfig,
    private readonly controller: string,
    private readonly instance: string,
    private readonly log: Logger,
  ) {
    this.api = kc.makeApiClient(EventsV1Api);
  }

  /** Records an event about `regarding`; `action` is what the operator did, e.g. Create, Delete, Reconcile. */
  async record(regarding: KubernetesObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): Promise<void> {
    const m = regarding.metadata ?? {};
    const key = `${m.uid}|${reason}|${note}`;
    const now = Date.now();
    if ((this.recent.get(key) ?? 0) > now - DEDUPE_MS) return;
    this.recent.set(key, now);
    if (this.recent.size > 10_000) for (const [k, t] of this.recent) if (t <= now - DEDUPE_MS) this.recent.delete(k);
    const namespace = m.namespace ?? 'default';
    try {
      await this.api.createNamespacedEvent({
        namespace,
        body: {
          // client-go's naming: the object's name and a hex timestamp (a generateName must not end with a dot).
          metadata: { name: `${m.name ?? 'object'}.${now.toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`, namespace },
          eventTime: new V1MicroTime(now),
          reportingController: this.controller,
          reportingInstance: this.instance.slice(0, 128),
          action,
          reason,
          type,
          note: note.slice(0, 1024),
          regarding: { apiVersion: regarding.apiVersion, kind: regarding.kind, name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion },
        },
      });
    } catch (err) {
      this.log.warn({ err: String((err as Error).message ?? err), reason }, 'could not record an event');
    }
  }
}

/**
 * The catalog server as the operator uses it, in the domain's words: structured property definitions
 * (read, write, soft and hard delete, the value cleanup after a hard delete), time series truncation
 * and task status. Only the server's REST API and the contract (server/src/contract/): every rule
 * stays on the server, and what a refusal means is read from its status and `reason`, never from its
 * message.
 */
import { enc, messageOf, send, Unreachable, type Answer, type Endpoint } from '../../server/src/client/http.ts';
import type { PropertyDefinition } from '../../server/src/contract/definitions.ts';
import { reasonOf, type Reason } from '../../server/src/contract/errors.ts';
import { HARD_DELETE_TASK, truncationProgress, type EsTaskStatus } from '../../server/src/contract/tasks.ts';
import { TRUNCATIONS_PATH, type TruncationAnswer, type TruncationRequest } from '../../server/src/contract/truncation.ts';

/**
 * Why a call failed: `unavailable` (no answer, or a 5xx: retried with backoff), `unauthorized` (401/403:
 * the token; retried with backoff, someone has to fix the Secret), `conflict` (409: the request is
 * fine but the catalog's state refuses it for now, e.g. a hard-deleted property's values are still
 * being removed; retried with backoff) or `rejected` (another 4xx: the server refused the request
 * itself, with its message; not retried until the object changes). `reason` is the server's
 * machine-readable kind of refusal, when it gave one (e.g. `BreakingChange`).
 */
export class CatalogError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'unauthorized' | 'conflict' | 'rejected',
    readonly status: number | undefined,
    message: string,
    readonly reason?: Reason,
  ) {
    super(message);
    this.name = 'CatalogError';
  }
}

/** A `propertyDefinition` aspect as the server stores it. */
export type Definition = PropertyDefinition;

/** A truncation task: finished or not, its counts, and the error it ended with. */
export interface TaskProgress {
  completed: boolean;
  deleted: number;
  total: number | undefined;
  error: string | undefined;
}

export class CatalogClient {
  constructor(private readonly endpoint: Endpoint) {}

  /** The stored definition and whether it is soft deleted; undefined when the property does not exist. */
  async definition(urn: string): Promise<{ definition: Definition | undefined; removed: boolean } | undefined> {
    const a = await this.call('GET', `/openapi/v3/entity/structuredProperty/${enc(urn)}?systemMetadata=false`);
    if (a.status === 404) return undefined;
    const body = this.ok(a) as { propertyDefinition?: { value: Definition }; status?: { value: { removed?: boolean } } };
    return { definition: body.propertyDefinition?.value, removed: body.status?.value.removed === true };
  }

  /** Creates or replaces the definition (the server's rules apply: a breaking change needs a greater version). */
  async writeDefinition(urn: string, definition: Definition): Promise<Definition> {
    const a = await this.call('POST', `/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition?createIfNotExists=false`, { value: definition });
    return (this.ok(a) as { propertyDefinition: { value: Definition } }).propertyDefinition.value;
  }

  /** Soft deletes (removed = true) or restores (false) a property; its values are hidden while removed. */
  async setRemoved(urn: string, removed: boolean): Promise<void> {
    this.ok(await this.call('POST', `/openapi/v3/entity/structuredProperty/${enc(urn)}/status?createIfNotExists=false`, { value: { removed } }));
  }

  /** Hard deletes a property; its values are removed by a durable task afterwards. A missing property is done. */
  async hardDelete(urn: string): Promise<void> {
    const a = await this.call('DELETE', `/openapi/v3/entity/structuredProperty/${enc(urn)}`);
    if (a.status !== 404) this.ok(a);
  }

  /** Whether a value cleanup of this hard-deleted property is still pending or running. */
  async cleanupPending(urn: string): Promise<boolean> {
    for (const state of ['PENDING', 'RUNNING']) {
      const q = new URLSearchParams({ subject: urn, kind: HARD_DELETE_TASK, state, count: '1' });
      const body = this.ok(await this.call('GET', `/api/tasks?${q}`)) as { tasks: unknown[] };
      if (body.tasks.length > 0) return true;
    }
    return false;
  }

  /** A truncation (svc's form of `truncateTimeseriesAspect`): a dry run's counts, or a real run's task id. */
  async truncate(req: TruncationRequest): Promise<TruncationAnswer> {
    return this.ok(await this.call('POST', TRUNCATIONS_PATH, req)) as TruncationAnswer;
  }

  /** The progress of a truncation task (`svc:<n>` or an OpenSearch `node:id`), through getEsTaskStatus. */
  async task(taskId: string): Promise<TaskProgress> {
    const a = await this.call('POST', '/gms/operations?action=getEsTaskStatus', { task: taskId });
    const progress = truncationProgress(JSON.parse((this.ok(a) as { value: string }).value) as EsTaskStatus);
    if (!progress.found) throw new CatalogError('rejected', 404, progress.error);
    return { completed: progress.completed, deleted: progress.deleted, total: progress.total, error: progress.error };
  }

  private async call(method: string, path: string, body?: unknown): Promise<Answer> {
    try {
      return await send(this.endpoint, method, path, body);
    } catch (err) {
      if (err instanceof Unreachable) throw new CatalogError('unavailable', undefined, err.message);
      throw err;
    }
  }

  /** The body of a 2xx answer; a {@link CatalogError} for anything else. */
  private ok(a: Answer): unknown {
    if (a.status >= 200 && a.status < 300) return a.body;
    const message = messageOf(a.body) ?? (typeof a.body === 'string' && a.body ? a.body.slice(0, 500) : `HTTP ${a.status}`);
    const reason = reasonOf(a.body);
    if (a.status === 401 || a.status === 403) throw new CatalogError('unauthorized', a.status, `the server refused the operator's token (${a.status}): ${message}`, reason);
    if (a.status >= 500 || a.status === 429) throw new CatalogError('unavailable', a.status, `the server failed (${a.status}): ${message}`, reason);
    if (a.status === 409) throw new CatalogError('conflict', a.status, message, reason);
    throw new CatalogError('rejected', a.status, message, reason);
  }
}

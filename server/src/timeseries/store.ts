/**
 * Where time series entries live, behind one interface with two implementations chosen with the
 * search backend (DECISIONS: "Timeseries aspects live in the search backend"):
 *
 * - `postgres` (postgresStore.ts): `timeseries_entries`, partitioned by index and month; a truncation
 *   is a durable svc task that drops whole months.
 * - `opensearch` (opensearchStore.ts): an index per entity type and aspect behind DataHub's alias
 *   (`dataset_datasetprofileaspect_v1`); `timeseries_entries` is then only the outbox the writes
 *   commit to, shipped to OpenSearch by the search dispatcher; a truncation is OpenSearch's own
 *   delete-by-query or reindex task.
 *
 * Writes are the same in both: the write path appends to `timeseries_entries` in its transaction
 * (aspectStore.insertTimeseries). Everything else goes through the store.
 */
import type { Db } from '../db/pool.ts';
import type { StoredAspect, TimeRange } from '../entities/aspectStore.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';

/** One entry, with the id that orders entries of one time (ids are svc's, shared by both stores). */
export interface EntryRow {
  id: number;
  urn: string;
  timestampMillis: number;
  value: Record<string, unknown>;
  systemMetadata: unknown;
}

/** A page request of entries, newest first: `after` is the (timestampMillis, id) of the last entry seen. */
export interface EntryQuery {
  /** Only the entries of this entity. */
  urn?: string;
  startTimeMillis?: number;
  endTimeMillis?: number;
  after?: [number, number];
  limit: number;
}

/** A truncation as asked for (the validated request, with DataHub's index name); each store counts what it needs. */
export interface TruncationOrder {
  /** DataHub's index name, without any prefix (`dataset_datasetprofileaspect_v1`). */
  index: string;
  entityType: string;
  aspect: string;
  endTimeMillis: number;
  batchSize: number;
  timeoutSeconds: number | null;
  forceDeleteByQuery: boolean | undefined;
  forceReindex: boolean | undefined;
}

/** What a truncation task carries (its params). */
export interface TruncationParams extends Omit<TruncationOrder, 'forceDeleteByQuery' | 'forceReindex'> {
  /** `opensearch`: whether the index is rebuilt without the old entries (`postgres` decides per month). */
  reindex?: boolean;
  /** The entries at or before the boundary when the task was queued; null: counted when the task starts. */
  numToDelete: number | null;
  /** `opensearch`: the OpenSearch task followed, and the indices to delete once a reindex completes. */
  opensearchTask?: string;
  oldIndices?: string[];
}

export interface TimeseriesStore {
  readonly kind: 'postgres' | 'opensearch';
  /** The latest entry of each given aspect of each entity (of one entity type), as entity reads show it. */
  latest(db: Db, entityType: string, urns: string[], aspects: string[]): Promise<StoredAspect[]>;
  /** Deletes the latest entry of an aspect of an entity; whether there was one. In the caller's transaction, under the entity's lock. */
  deleteLatest(tx: Db, entityType: string, urn: string, aspect: string): Promise<boolean>;
  /**
   * Deletes the entries of an aspect of an entity within a time range (ends included); how many there
   * were. In the caller's transaction, under the entity's lock.
   */
  deleteRange(tx: Db, entityType: string, urn: string, aspect: string, range: TimeRange): Promise<number>;
  /**
   * Deletes every entry of an entity being hard-deleted, in the caller's transaction (the rows of
   * `timeseries_entries` are deleted with its aspects); returns the aspects that had entries.
   */
  deleteEntity(tx: Db, entityType: string, urn: string): Promise<string[]>;
  /** A page of one index's entries, newest first (limit + 1 asked for, to know whether more follow). */
  list(index: string, q: EntryQuery): Promise<EntryRow[]>;
  /** The entries of an index at or before `endTimeMillis`, and all of them. */
  count(index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number }>;
  /** The size of each index in bytes, by DataHub's index name (with the index prefix when one is set). */
  sizes(): Promise<{ indexName: string; bytes: number }[]>;
  /** Starts a truncation; returns its task id (`node:number`). */
  truncate(order: TruncationOrder): Promise<string>;
  /** The getEsTaskStatus answer of a `node:number` task id; undefined when there is none such. */
  status(taskId: string): Promise<Record<string, unknown> | undefined>;
  /** The handler of the `timeseries-truncate` svc task. */
  taskHandler(): TaskHandler;
}

/** The counters of a delete-by-query task's status, as OpenSearch reports them. */
export function deleteByQueryStatus(s: { total: number; deleted: number; batches: number }): Record<string, unknown> {
  return {
    total: s.total,
    updated: 0,
    created: 0,
    deleted: s.deleted,
    batches: s.batches,
    version_conflicts: 0,
    noops: 0,
    retries: { bulk: 0, search: 0 },
    throttled_millis: 0,
    requests_per_second: -1,
    throttled_until_millis: 0,
  };
}

/** The node part of the ids of svc's own tasks (`svc:42`, the number being the task's id in `/api/tasks`). */
export const TASK_NODE = 'svc';

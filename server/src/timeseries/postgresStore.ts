/**
 * The `postgres` time series store: entries in `timeseries_entries`, partitioned by index and month
 * (see partitions.ts and migration 015). A truncation is a durable svc task (`svc:<id>`) that drops the
 * months wholly before the boundary and deletes the rest in batches; it resumes after a crash.
 */
import { inTransaction, query, type Db, type Pool } from '../db/pool.ts';
import { deleteLatestTimeseries, latestTimeseries, type StoredAspect } from '../entities/aspectStore.ts';
import { SvcError } from '../errors.ts';
import { enqueueTask, getTask, type Task } from '../tasks/taskQueue.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';
import { deleteByQueryStatus, TASK_NODE, TRUNCATE_TASK, type EntryQuery, type EntryRow, type TimeseriesStore, type TruncationParams } from './store.ts';
import { reindexes } from './truncation.ts';

export class PostgresTimeseriesStore implements TimeseriesStore {
  readonly kind = 'postgres' as const;

  constructor(private readonly pool: Pool) {}

  latest(db: Db, _entityType: string, urns: string[], aspects: string[]): Promise<StoredAspect[]> {
    return latestTimeseries(db, urns, aspects);
  }

  async deleteLatest(tx: Db, _entityType: string, urn: string, aspect: string): Promise<boolean> {
    return (await deleteLatestTimeseries(tx, urn, aspect)) > 0;
  }

  async deleteEntity(): Promise<string[]> {
    return []; // its rows went with the entity's (aspectStore.deleteEntityRows)
  }

  list(index: string, q: EntryQuery): Promise<EntryRow[]> {
    return listEntries(this.pool, index, q);
  }

  count(index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number }> {
    return countEntries(this.pool, index, endTimeMillis);
  }

  /** The size on disk of each index's partitions (tables and their indexes). */
  async sizes(): Promise<{ indexName: string; bytes: number }[]> {
    const rows = await query<{ bound: string; bytes: string }>(
      this.pool,
      `SELECT pg_get_expr(p.relpartbound, p.oid) AS bound,
              coalesce((SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = p.oid), 0) AS bytes
         FROM pg_inherits x JOIN pg_class p ON p.oid = x.inhrelid
        WHERE x.inhparent = 'timeseries_entries'::regclass`,
      [],
    );
    return rows.map((r) => ({ indexName: /IN \('(.*)'\)/.exec(r.bound)?.[1] ?? '', bytes: Number(r.bytes) }));
  }

  async truncate(params: TruncationParams): Promise<string> {
    const task = await enqueueTask(this.pool, TRUNCATE_TASK, params.index, params as unknown as Record<string, unknown>);
    return `${TASK_NODE}:${task.id}`;
  }

  status(taskId: string): Promise<Record<string, unknown> | undefined> {
    return svcTaskStatus(this.pool, taskId);
  }

  taskHandler(): TaskHandler {
    return truncationTask(this.pool);
  }
}

/** The entries of an index in `timeseries_entries`, newest first, limit + 1 of them. */
export async function listEntries(db: Db, index: string, q: EntryQuery): Promise<EntryRow[]> {
  const rows = await query<{ urn: string; ts: string; id: string; metadata: Record<string, unknown>; system_metadata: unknown }>(
    db,
    `SELECT urn, timestamp_millis AS ts, id, metadata, system_metadata FROM timeseries_entries
      WHERE index_name = $1 AND ($2::bigint IS NULL OR timestamp_millis >= $2) AND ($3::bigint IS NULL OR timestamp_millis <= $3)
        AND ($4::bigint IS NULL OR (timestamp_millis, id) < ($4, $5))
      ORDER BY timestamp_millis DESC, id DESC LIMIT $6`,
    [index, q.startTimeMillis ?? null, q.endTimeMillis ?? null, q.after?.[0] ?? null, q.after?.[1] ?? null, q.limit + 1],
  );
  return rows.map((r) => ({ id: Number(r.id), urn: r.urn, timestampMillis: Number(r.ts), value: r.metadata, systemMetadata: r.system_metadata }));
}

export async function countEntries(db: Db, index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number }> {
  const [row] = await query<{ n: string; total: string }>(
    db,
    'SELECT count(*) FILTER (WHERE timestamp_millis <= $2) AS n, count(*) AS total FROM timeseries_entries WHERE index_name = $1',
    [index, endTimeMillis],
  );
  return { numToDelete: Number(row!.n), total: Number(row!.total) };
}

/** The status of an svc truncation task (`svc:<id>`), as OpenSearch reports a delete-by-query task. */
export async function svcTaskStatus(pool: Pool, taskId: string): Promise<Record<string, unknown> | undefined> {
  const [node, number] = taskId.split(':') as [string, string];
  const id = Number(number);
  if (node !== TASK_NODE || !Number.isSafeInteger(id)) return undefined;
  let task: Task;
  try {
    task = await getTask(pool, id);
  } catch (err) {
    if (err instanceof SvcError && err.code === 'NOT_FOUND') return undefined;
    throw err;
  }
  if (task.kind !== TRUNCATE_TASK) return undefined;
  const params = task.params as unknown as TruncationParams;
  const completed = task.state === 'SUCCEEDED';
  const end = completed && task.finishedAt ? Date.parse(task.finishedAt) : Date.now();
  return {
    completed,
    taskId,
    status: deleteByQueryStatus({ total: task.total ?? 0, deleted: task.done, batches: Math.ceil(task.done / params.batchSize) }),
    runTimeNanos: Math.max(0, end - Date.parse(task.createdAt)) * 1_000_000,
  };
}

/** A partition of an index: its name and the range of timestampMillis it holds (`hi` excluded). */
interface Partition {
  name: string;
  lo: number;
  hi: number;
}

async function partitionsOf(db: Db, index: string): Promise<Partition[]> {
  const rows = await query<{ name: string; bound: string }>(
    db,
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass(svc_timeseries_parent($1))`,
    [index],
  );
  return rows
    .map((r) => {
      const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(r.bound);
      return m ? { name: r.name, lo: Number(m[1]), hi: Number(m[2]) } : undefined;
    })
    .filter((p): p is Partition => p !== undefined)
    .sort((a, b) => a.lo - b.lo);
}

/**
 * Removes the entries up to the boundary: each month wholly before it is dropped with its partition
 * (counted first); the month of the boundary is rebuilt with the entries kept when most of it goes;
 * the rest is deleted in batches of about `batchSize` (entries of one time are never split). Each
 * step is its own transaction and
 * counted, so a task cut off anywhere resumes where it was. With `timeoutSeconds` it stops that long
 * after it was queued, leaving the rest (its status then shows fewer deleted than total).
 */
export function truncationTask(pool: Pool): TaskHandler {
  return async (ctx) => {
    const p = ctx.task.params as unknown as TruncationParams;
    const deadline = p.timeoutSeconds === null ? Infinity : Date.parse(ctx.task.createdAt) + p.timeoutSeconds * 1000;
    const going = () => !ctx.stopping && Date.now() < deadline;
    if (ctx.task.total === null) {
      // The count made when the task was queued.
      await ctx.progress({ total: p.numToDelete });
    } else {
      // Resumed: a step that removed entries may not have been counted (the process died in between).
      const [row] = await query<{ n: string }>(pool, 'SELECT count(*) AS n FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis <= $2', [p.index, p.endTimeMillis]);
      const uncounted = ctx.task.total - Number(row!.n) - ctx.task.done;
      if (uncounted > 0) await ctx.progress({ doneDelta: uncounted });
    }
    const [{ parent }] = (await query<{ parent: string }>(pool, 'SELECT svc_timeseries_parent($1) AS parent', [p.index])) as [{ parent: string }];
    for (const part of await partitionsOf(pool, p.index)) {
      if (!going()) return;
      if (part.lo > p.endTimeMillis) break;
      const removed = await inTransaction(pool, async (tx) => {
        // Both steps lock the index's table: a busy table makes the step fail and be retried.
        await query(tx, "SET LOCAL lock_timeout = '5s'", []);
        await query(tx, `LOCK TABLE ${quoteIdent(part.name)} IN ACCESS EXCLUSIVE MODE`, []);
        const [c] = await query<{ gone: string; total: string }>(tx, `SELECT count(*) FILTER (WHERE timestamp_millis <= $1) AS gone, count(*) AS total FROM ${quoteIdent(part.name)}`, [p.endTimeMillis]);
        const gone = Number(c!.gone);
        const total = Number(c!.total);
        if (part.hi <= p.endTimeMillis + 1) {
          // A month wholly at or before the boundary goes with its partition.
          await query(tx, `DROP TABLE ${quoteIdent(part.name)}`, []);
          return gone;
        }
        // The boundary month: when most of it goes, it is rebuilt with the entries kept (DataHub's
        // "reindex"), which costs what they cost; otherwise deleted from in batches below.
        if (!reindexes({ forceDeleteByQuery: undefined, forceReindex: undefined }, gone, total)) return 0;
        const fresh = `${part.name}_next`;
        await query(tx, `CREATE TABLE ${quoteIdent(fresh)} (LIKE ${quoteIdent(part.name)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`, []);
        await query(tx, `INSERT INTO ${quoteIdent(fresh)} SELECT * FROM ${quoteIdent(part.name)} WHERE timestamp_millis > $1`, [p.endTimeMillis]);
        await query(tx, `DROP TABLE ${quoteIdent(part.name)}`, []);
        await query(tx, `ALTER TABLE ${quoteIdent(fresh)} RENAME TO ${quoteIdent(part.name)}`, []);
        await query(tx, `ALTER TABLE ${quoteIdent(parent)} ATTACH PARTITION ${quoteIdent(part.name)} FOR VALUES FROM (${part.lo}) TO (${part.hi})`, []);
        return gone;
      });
      if (removed > 0) await ctx.progress({ doneDelta: removed });
    }
    while (going()) {
      // A batch is a range of times: up to the batchSize-th oldest entry left (a plain range delete,
      // as fast per entry as one big DELETE, where deleting listed rows costs several times more).
      const [cut] = await query<{ t: string }>(
        pool,
        'SELECT timestamp_millis AS t FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis <= $2 ORDER BY timestamp_millis OFFSET $3 - 1 LIMIT 1',
        [p.index, p.endTimeMillis, p.batchSize],
      );
      // The bound is a parameter of its own, so the delete is planned as a range scan of one partition.
      const [deleted] = await query<{ n: string }>(
        pool,
        'WITH d AS (DELETE FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis <= $2 RETURNING 1) SELECT count(*) AS n FROM d',
        [p.index, cut ? Math.min(Number(cut.t), p.endTimeMillis) : p.endTimeMillis],
      );
      const n = Number(deleted!.n);
      if (n > 0) await ctx.progress({ doneDelta: n });
      if (n < p.batchSize) return;
    }
  };
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

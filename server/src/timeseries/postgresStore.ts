/**
 * The `postgres` time series store: entries in `timeseries_entries`, partitioned by index and month
 * (see partitions.ts and db/migrations/R__svc_timeseries_partition.sql). A truncation is a durable svc
 * task (`svc:<id>`) that drops the months wholly before the boundary and deletes the rest in batches;
 * it resumes after a crash.
 */
import { inTransaction, query, type Db, type Pool } from '../db/pool.ts';
import { deleteLatestTimeseries, deleteTimeseriesRange, latestTimeseries, type StoredAspect, type TimeRange } from '../entities/aspectStore.ts';
import { SvcError } from '../shared/errors.ts';
import { enqueueTask, getTask, type Task } from '../tasks/taskQueue.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';
import { TRUNCATE_TASK } from '../contract/tasks.ts';
import { deleteByQueryStatus, TASK_NODE, type EntryQuery, type EntryRow, type TimeseriesStore, type TruncationOrder, type TruncationParams } from './store.ts';
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

  deleteRange(tx: Db, _entityType: string, urn: string, aspect: string, range: TimeRange): Promise<number> {
    return deleteTimeseriesRange(tx, urn, aspect, range);
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

  /** Queued at once: the task counts what it deletes when it starts (the flags do not apply: it decides per month). */
  async truncate({ forceDeleteByQuery: _f, forceReindex: _r, ...order }: TruncationOrder): Promise<string> {
    const params: TruncationParams = { ...order, numToDelete: null };
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
        AND ($4::bigint IS NULL OR (timestamp_millis, id) < ($4, $5)) AND ($7::text IS NULL OR urn = $7)
      ORDER BY timestamp_millis DESC, id DESC LIMIT $6`,
    [index, q.startTimeMillis ?? null, q.endTimeMillis ?? null, q.after?.[0] ?? null, q.after?.[1] ?? null, q.limit + 1, q.urn ?? null],
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
 * Holds off the writers of an index (its own table, ONLY: its months are locked apart) before the
 * truncation locks any month. Writers lock the index's table before its months; a truncation that
 * locked a month first and then its table (a month's DROP or ATTACH needs the table) waited for a
 * writer waiting for it: an entity's hard delete, whose entries are in every month (datahub-gc runs
 * both), deadlocked with it and was run again until it failed as a 409. Reads go on.
 */
async function lockIndexForWriters(tx: Db, parent: string): Promise<void> {
  await query(tx, `LOCK TABLE ONLY ${quoteIdent(parent)} IN SHARE ROW EXCLUSIVE MODE`, []);
}

/**
 * Holds off the readers of an index too, before the month of the boundary is replaced. A read locks the
 * index's table before its months, as a DROP of a month does: a truncation that locked the month in
 * ACCESS EXCLUSIVE mode first, to count and rebuild it, and then needed the table to drop and attach it,
 * waited for a read that had the table and waited for the month (datahub-gc's reads of an entity during
 * its truncations; a deadlock, answered as a 409). The month is held in SHARE mode until this, which a
 * read passes.
 */
async function lockIndexForDrops(tx: Db, parent: string): Promise<void> {
  await query(tx, `LOCK TABLE ONLY ${quoteIdent(parent)} IN ACCESS EXCLUSIVE MODE`, []);
}

/**
 * Removes the entries up to the boundary, each step one transaction that commits its count with it
 * (so a task cut off anywhere resumes where it was, and counts exactly):
 *
 * 1. the months wholly at or before the boundary are counted and dropped with their partitions; on
 *    the first run the same transaction records the total (those plus the boundary month's share);
 * 2. the month of the boundary is rebuilt with the entries kept when most of it goes;
 * 3. the rest is deleted in batches of about `batchSize` (entries of one time are never split).
 *
 * With `timeoutSeconds` it stops that long after it was queued, leaving the rest (its status then
 * shows fewer deleted than total).
 */
export function truncationTask(pool: Pool): TaskHandler {
  return async (ctx) => {
    const p = ctx.task.params as unknown as TruncationParams;
    const deadline = p.timeoutSeconds === null ? Infinity : Date.parse(ctx.task.createdAt) + p.timeoutSeconds * 1000;
    const going = () => !ctx.stopping && Date.now() < deadline;
    if (!going()) return;
    const [{ parent }] = (await query<{ parent: string }>(pool, 'SELECT svc_timeseries_parent($1) AS parent', [p.index])) as [{ parent: string }];
    const parts = (await partitionsOf(pool, p.index)).filter((part) => part.lo <= p.endTimeMillis);
    const whole = parts.filter((part) => part.hi <= p.endTimeMillis + 1);
    const boundary = parts.find((part) => part.hi > p.endTimeMillis + 1);
    if (ctx.task.total === null || whole.length > 0) {
      await inTransaction(pool, async (tx) => {
        // Counted under SHARE locks (writes into those months wait, reads go on); the drops then lock
        // the index's table for the moment they take. A busy table fails the step, which is retried.
        await query(tx, "SET LOCAL lock_timeout = '5s'", []);
        await lockIndexForWriters(tx, parent);
        for (const part of whole) await query(tx, `LOCK TABLE ${quoteIdent(part.name)} IN SHARE MODE`, []);
        const gone = whole.length ? await count(tx, whole.map((part) => `(SELECT count(*) FROM ${quoteIdent(part.name)})`).join(' + ')) : 0;
        // The total: those, and the entries at or before the boundary outside them (the boundary month,
        // and the default partition of times before 1970).
        const [lo, hi] = whole.length ? [whole[0]!.lo, whole[whole.length - 1]!.hi] : [0, 0];
        const rest = () =>
          count(tx, '(SELECT count(*) FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis <= $2 AND (timestamp_millis < $3 OR timestamp_millis >= $4))', p.index, p.endTimeMillis, lo, hi);
        const total = ctx.task.total === null ? gone + (await rest()) : undefined;
        await ctx.progress({ total, doneDelta: gone }, tx);
        for (const part of whole) await query(tx, `DROP TABLE ${quoteIdent(part.name)}`, []);
      });
    }
    if (boundary && going()) {
      await inTransaction(pool, async (tx) => {
        await query(tx, "SET LOCAL lock_timeout = '5s'", []);
        await lockIndexForWriters(tx, parent);
        await query(tx, `LOCK TABLE ${quoteIdent(boundary.name)} IN SHARE MODE`, []);
        const [c] = await query<{ gone: string; total: string }>(tx, `SELECT count(*) FILTER (WHERE timestamp_millis <= $1) AS gone, count(*) AS total FROM ${quoteIdent(boundary.name)}`, [p.endTimeMillis]);
        const gone = Number(c!.gone);
        // When most of the month goes, it is rebuilt with the entries kept (DataHub's "reindex"), which
        // costs what they cost; otherwise deleted from in batches below. The new table gets its indexes
        // as it is attached (built once, not row by row).
        if (!reindexes({ forceDeleteByQuery: undefined, forceReindex: undefined }, gone, Number(c!.total))) return;
        await lockIndexForDrops(tx, parent);
        const fresh = `${boundary.name}_next`;
        await query(tx, `CREATE TABLE ${quoteIdent(fresh)} (LIKE ${quoteIdent(boundary.name)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`, []);
        await query(tx, `INSERT INTO ${quoteIdent(fresh)} SELECT * FROM ${quoteIdent(boundary.name)} WHERE timestamp_millis > $1`, [p.endTimeMillis]);
        await query(tx, `DROP TABLE ${quoteIdent(boundary.name)}`, []);
        await query(tx, `ALTER TABLE ${quoteIdent(fresh)} RENAME TO ${quoteIdent(boundary.name)}`, []);
        await query(tx, `ALTER TABLE ${quoteIdent(parent)} ATTACH PARTITION ${quoteIdent(boundary.name)} FOR VALUES FROM (${boundary.lo}) TO (${boundary.hi})`, []);
        await ctx.progress({ doneDelta: gone }, tx);
      });
    }
    while (going()) {
      // A batch is a range of times: up to the batchSize-th oldest entry left (a plain range delete,
      // as fast per entry as one big DELETE, where deleting listed rows costs several times more).
      const n = await inTransaction(pool, async (tx) => {
        const [cut] = await query<{ t: string }>(
          tx,
          'SELECT timestamp_millis AS t FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis <= $2 ORDER BY timestamp_millis OFFSET $3 - 1 LIMIT 1',
          [p.index, p.endTimeMillis, p.batchSize],
        );
        // The bound is a parameter of its own, so the delete is planned as a range scan of one partition.
        const [row] = await query<{ n: string }>(
          tx,
          'WITH d AS (DELETE FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis <= $2 RETURNING 1) SELECT count(*) AS n FROM d',
          [p.index, cut ? Math.min(Number(cut.t), p.endTimeMillis) : p.endTimeMillis],
        );
        const deleted = Number(row!.n);
        if (deleted > 0) await ctx.progress({ doneDelta: deleted }, tx);
        return deleted;
      });
      if (n < p.batchSize) return;
    }
  };
}

/** The number a count expression (`(SELECT count(*) …)`, summed or not) comes to. */
async function count(db: Db, expression: string, ...params: unknown[]): Promise<number> {
  const [row] = await query<{ n: string }>(db, `SELECT ${expression} AS n`, params);
  return Number(row!.n);
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

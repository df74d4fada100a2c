/**
 * Operations on time series aspects (DataHub's `operations` actions): truncating the entries of one
 * aspect of one entity type up to a time (a dry run first, then a durable task), the status of such a
 * task, and the size of each aspect's entries. Time series entries are kept in Postgres, partitioned
 * by index and month (see partitions.ts), so a truncation is a task of svc's own: it drops the months
 * wholly before the boundary and deletes the rest in batches.
 *
 * Task ids have the `node:number` form DataHub's clients check (`svc:42`); the number is the id of the
 * task in `/api/tasks`.
 */
import { authorize, type Principal } from '../auth/authorize.ts';
import { inTransaction, query, type Pool } from '../db/pool.ts';
import { SvcError } from '../errors.ts';
import { registry, type AspectSpec, type EntitySpec } from '../registry/registry.ts';
import { enqueueTask, getTask, type Task } from '../tasks/taskQueue.ts';
import type { ScrollIds } from '../entities/scrollIds.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';
import { timeseriesIndexName } from './partitions.ts';
import { flagConflict, parseTruncation, reindexes, summary } from './truncation.ts';

export const TRUNCATE_TASK = 'timeseries-truncate';
/** The node part of svc's task ids. */
export const TASK_NODE = 'svc';
const TASK_ID = /^[a-zA-Z0-9-_]+:[0-9]+$/;


/** What a truncation task carries (its params). */
interface TruncationParams {
  index: string;
  entityType: string;
  aspect: string;
  endTimeMillis: number;
  batchSize: number;
  timeoutSeconds: number | null;
  reindex: boolean;
  /** The entries at or before the boundary when the task was queued. */
  numToDelete: number;
}

export interface IndexSize {
  indexName: string;
  entityName: string;
  aspectName: string;
  /** Kilobytes (bytes / 1000), despite the name, as DataHub reports it. */
  sizeMb: number;
}

/** One entry as DataHub's `GET /openapi/v2/timeseries` lists it. */
export interface TimeseriesEntry {
  urn: string;
  messageId?: string;
  timestampMillis: number;
  systemMetadata?: unknown;
  /** The aspect's value. */
  event: unknown;
}

export interface EntryPage {
  scrollId: string | null;
  results: TimeseriesEntry[];
}

export const MAX_ENTRY_PAGE = 1000;

export class TimeseriesService {
  constructor(
    private readonly pool: Pool,
    private readonly scrollIds: ScrollIds,
  ) {}

  /**
   * The entries of a time series aspect of an entity type, newest first, between `startTimeMillis` and
   * `endTimeMillis` (both inclusive, either optional), `count` a page (at most 1000), with a scroll id
   * for the next page.
   */
  async list(
    principal: Principal,
    entityType: string,
    aspectName: string,
    opts: { count: number; scrollId?: string; startTimeMillis?: number; endTimeMillis?: number; systemMetadata: boolean },
  ): Promise<EntryPage> {
    authorize(principal, 'READ');
    const { spec, aspect } = timeseriesAspect(entityType, aspectName);
    const index = timeseriesIndexName(spec.name, aspect.name);
    const scope = `timeseries:${index}:${opts.startTimeMillis ?? ''}:${opts.endTimeMillis ?? ''}`;
    const after = opts.scrollId ? (this.scrollIds.decode(scope, opts.scrollId).split(':').map(Number) as [number, number]) : undefined;
    const limit = Math.min(Math.max(opts.count, 1), MAX_ENTRY_PAGE);
    const rows = await query<{ urn: string; ts: string; id: string; metadata: Record<string, unknown>; system_metadata: unknown }>(
      this.pool,
      `SELECT urn, timestamp_millis AS ts, id, metadata, system_metadata FROM timeseries_entries
        WHERE index_name = $1 AND ($2::bigint IS NULL OR timestamp_millis >= $2) AND ($3::bigint IS NULL OR timestamp_millis <= $3)
          AND ($4::bigint IS NULL OR (timestamp_millis, id) < ($4, $5))
        ORDER BY timestamp_millis DESC, id DESC LIMIT $6`,
      [index, opts.startTimeMillis ?? null, opts.endTimeMillis ?? null, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      scrollId: rows.length > limit && last ? this.scrollIds.encode(scope, `${last.ts}:${last.id}`) : null,
      results: page.map((r) => ({
        urn: r.urn,
        ...(typeof r.metadata.messageId === 'string' ? { messageId: r.metadata.messageId } : {}),
        timestampMillis: Number(r.ts),
        ...(opts.systemMetadata ? { systemMetadata: r.system_metadata } : {}),
        event: r.metadata,
      })),
    };
  }

  /**
   * `truncateTimeseriesAspect`: the dry-run message, the flag-check line, or the id of the task that
   * deletes every entry with `timestampMillis <= endTimeMillis`.
   */
  async truncate(principal: Principal, body: unknown): Promise<string> {
    authorize(principal, 'TRUNCATE_TIMESERIES');
    const r = parseTruncation(body);
    const { spec, aspect } = timeseriesAspect(r.entityType, r.aspect);
    const conflict = flagConflict(r);
    if (conflict) return conflict;
    const counts = await this.count(spec, aspect, r.endTimeMillis);
    const message = summary(counts, r);
    if (r.dryRun) return message;
    const params: TruncationParams = {
      index: timeseriesIndexName(spec.name, aspect.name),
      entityType: spec.name,
      aspect: aspect.name,
      endTimeMillis: r.endTimeMillis,
      batchSize: r.batchSize,
      timeoutSeconds: r.timeoutSeconds ?? null,
      reindex: reindexes(r, counts.numToDelete, counts.total),
      numToDelete: counts.numToDelete,
    };
    const task = await enqueueTask(this.pool, TRUNCATE_TASK, params.index, params as unknown as Record<string, unknown>);
    return `${TASK_NODE}:${task.id}`;
  }

  /**
   * `getEsTaskStatus`: `{completed, taskId, status, runTimeNanos}` of a truncation task, or `{error}`
   * when there is none such. `params` are the action's (`task`, or `nodeId` and `taskId`).
   */
  async taskStatus(principal: Principal, params: { task?: unknown; nodeId?: unknown; taskId?: unknown }): Promise<Record<string, unknown>> {
    authorize(principal, 'GET_TASK_STATUS');
    return this.statusOf(principal, compositeTask(params));
  }

  /**
   * The status of a task given as `node:number`; `{error}` when there is none such. VALIDATION for a
   * malformed id (`message` says what form is expected: the two DataHub routes word it apart).
   */
  async statusOf(principal: Principal, taskId: string, message = 'Task should be in the form nodeId:taskId e.g. aB1cdEf2GHIJKLMnoPQr3S:123456'): Promise<Record<string, unknown>> {
    authorize(principal, 'GET_TASK_STATUS');
    if (!TASK_ID.test(taskId) || /:0+$/.test(taskId)) throw SvcError.validation([`${message} (got ${taskId})`]);
    const [node, number] = taskId.split(':') as [string, string];
    const id = Number(number);
    let task: Task | undefined;
    if (node === TASK_NODE && Number.isSafeInteger(id)) {
      try {
        task = await getTask(this.pool, id);
      } catch (err) {
        if (!(err instanceof SvcError && err.code === 'NOT_FOUND')) throw err;
      }
    }
    if (!task || task.kind !== TRUNCATE_TASK) return { error: `Could not get task status for ${taskId}` };
    return taskStatus(taskId, task);
  }

  /** `getIndexSizes`: the size on disk of each aspect's entries (its partitions), named as DataHub names the index. */
  async indexSizes(principal: Principal): Promise<{ indexSizes: IndexSize[] }> {
    authorize(principal, 'GET_INDEX_SIZES');
    const rows = await query<{ bound: string; bytes: string }>(
      this.pool,
      `SELECT pg_get_expr(p.relpartbound, p.oid) AS bound,
              coalesce((SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i WHERE i.inhparent = p.oid), 0) AS bytes
         FROM pg_inherits x JOIN pg_class p ON p.oid = x.inhrelid
        WHERE x.inhparent = 'timeseries_entries'::regclass`,
      [],
    );
    const sizes = rows.map((r) => {
      const indexName = /IN \('(.*)'\)/.exec(r.bound)?.[1] ?? '';
      const parsed = /^([^_]+)_(.+)aspect_v1$/.exec(indexName);
      return { indexName, ...(parsed ? { entityName: parsed[1]!, aspectName: parsed[2]! } : {}), sizeMb: Number(r.bytes) / 1000 } as IndexSize;
    });
    return { indexSizes: sizes.sort((a, b) => a.indexName.localeCompare(b.indexName)) };
  }

  private async count(spec: EntitySpec, aspect: AspectSpec, endTimeMillis: number): Promise<{ numToDelete: number; total: number }> {
    const [row] = await query<{ n: string; total: string }>(
      this.pool,
      `SELECT count(*) FILTER (WHERE timestamp_millis <= $2) AS n, count(*) AS total FROM timeseries_entries WHERE index_name = $1`,
      [timeseriesIndexName(spec.name, aspect.name), endTimeMillis],
    );
    return { numToDelete: Number(row!.n), total: Number(row!.total) };
  }
}

/** The entity type and its time series aspect (any case, as DataHub's index names lowercase it); VALIDATION otherwise. */
function timeseriesAspect(entityType: string, aspectName: string): { spec: EntitySpec; aspect: AspectSpec } {
  const spec = registry.entity(entityType);
  const series = registry.aspectsOf(spec).filter((a) => a.timeseries);
  const aspect = series.find((a) => a.name.toLowerCase() === aspectName.toLowerCase());
  if (!aspect) {
    const names = series.map((a) => a.name).join(', ');
    throw SvcError.validation([`${aspectName} is not a time series aspect of ${spec.name}; ${names ? `its time series aspects are ${names}` : 'it has none'}`]);
  }
  return { spec, aspect };
}

/** The `node:number` task id of getEsTaskStatus' parameters, with DataHub's rules and messages. */
function compositeTask(p: { task?: unknown; nodeId?: unknown; taskId?: unknown }): string {
  const task = typeof p.task === 'string' && p.task !== '' ? p.task : undefined;
  const nodeId = typeof p.nodeId === 'string' && p.nodeId !== '' ? p.nodeId : undefined;
  const taskId = typeof p.taskId === 'number' ? p.taskId : 0;
  const split = nodeId !== undefined && taskId > 0;
  if (task === undefined && !split) throw SvcError.validation(['Please specify either Node ID + task ID OR composite task parameters']);
  if (task !== undefined && split && task !== `${nodeId}:${taskId}`) throw SvcError.validation(['Please specify only one of Node ID + task ID OR composite task parameters']);
  return task ?? `${nodeId}:${taskId}`;
}

/** A truncation task as OpenSearch reports a delete-by-query task (`status` with its counters). */
function taskStatus(taskId: string, task: Task): Record<string, unknown> {
  const params = task.params as unknown as TruncationParams;
  const deleted = task.done;
  const completed = task.state === 'SUCCEEDED';
  const end = completed && task.finishedAt ? Date.parse(task.finishedAt) : Date.now();
  return {
    completed,
    taskId,
    status: {
      total: task.total ?? 0,
      updated: 0,
      created: 0,
      deleted,
      batches: Math.ceil(deleted / params.batchSize),
      version_conflicts: 0,
      noops: 0,
      retries: { bulk: 0, search: 0 },
      throttled_millis: 0,
      requests_per_second: -1,
      throttled_until_millis: 0,
    },
    runTimeNanos: Math.max(0, end - Date.parse(task.createdAt)) * 1_000_000,
  };
}

/** A partition of an index: its name and the range of timestampMillis it holds (`hi` excluded). */
interface Partition {
  name: string;
  lo: number;
  hi: number;
}

async function partitionsOf(pool: Pool, index: string): Promise<Partition[]> {
  const rows = await query<{ name: string; bound: string }>(
    pool,
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

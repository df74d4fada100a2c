/**
 * Truncation in the `opensearch` time series store: OpenSearch's own delete-by-query or reindex task,
 * followed by an svc task that reports its progress in `/api/tasks`, cancels it at `timeoutSeconds`
 * and deletes the old index once a reindex is done; and the guards that undo a reindex whose
 * transaction did not commit.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@opensearch-project/opensearch';
import pg from 'pg';
import { inTransaction, query, type Db, type Pool } from '../db/pool.ts';
import { SvcError } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import { reachingOpenSearch as os } from '../search/opensearchErrors.ts';
import { enqueueTask } from '../tasks/taskQueue.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';
import { TRUNCATE_TASK } from '../contract/tasks.ts';
import { READ_TIMEOUT_MS, statusCode, type TimeseriesIndices } from './opensearchIndices.ts';
import { DISPATCHER_LOCK, REINDEXING, waitingDeletions } from './opensearchOutbox.ts';
import { countEntries, svcTaskStatus, truncationTask } from './postgresStore.ts';
import { reindexes } from './truncation.ts';
import { TASK_NODE, type TruncationOrder, type TruncationParams } from './store.ts';

/** How often a truncation task looks at its OpenSearch task. */
const POLL_MS = 250;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * While a truncation copies an index into a new one, the alias already names the new index, so the
 * latest entry read there may not be the latest (entries are still being copied): deleting it could
 * delete the wrong one. Such a delete is refused (409, naming the task to wait for).
 */
export async function refuseWhileReindexing(tx: Db, index: string, what = 'its latest entry can be deleted'): Promise<void> {
  const [task] = await query<{ id: string }>(tx, `WITH reindexing AS (${REINDEXING}) SELECT id FROM reindexing WHERE subject = $1 LIMIT 1`, [index]);
  if (task) {
    throw new SvcError('CONFLICT', `The time series index ${index} is being rebuilt by a truncation (task ${task.id}, GET /api/tasks/${task.id}); ${what} once that task has succeeded`);
  }
  // A truncation under way, or one that failed and is being undone (see settleGuards).
  const [guard] = await query(tx, 'SELECT 1 FROM timeseries_truncation_guards WHERE right(alias, length($1)) = $1 LIMIT 1', [index]);
  if (guard) throw new SvcError('CONFLICT', `The time series index ${index} is being rebuilt by a truncation that has not finished starting; ${what} in a moment`);
}

export class OpenSearchTruncation {
  constructor(
    private readonly pool: Pool,
    private readonly client: Client,
    private readonly indices: TimeseriesIndices,
    private readonly log: Logger,
  ) {}

  /** Counted under the dispatcher's lock, so that no entry is counted in both places (between a step's bulk and its commit). */
  count(index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number }> {
    return inTransaction(this.pool, async (tx) => {
      await query(tx, DISPATCHER_LOCK, []);
      await this.settleGuards(tx);
      const { numToDelete, total } = await this.countLocked(tx, index, endTimeMillis);
      return { numToDelete, total };
    });
  }

  /** The counts, and `replaced`: the entries at or before the boundary in both places (counted once). */
  private async countLocked(tx: Db, index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number; replaced: number }> {
    const staged = await countEntries(tx, index, endTimeMillis);
    if (!(await this.indices.shipped(tx, [index])).has(index)) return { ...staged, replaced: 0 };
    const alias = this.indices.alias(index);
    const mustNot = await waitingDeletions(tx, { index });
    const res = await os(() =>
      this.client.search({
        index: alias,
        ignore_unavailable: true,
        body: { size: 0, track_total_hits: true, query: { bool: { must_not: mustNot } }, aggs: { old: { filter: { range: { timestampMillis: { lte: endTimeMillis } } } } } } as never,
      }, { requestTimeout: READ_TIMEOUT_MS }),
    );
    const total = res.body.hits.total;
    const old = (res.body.aggregations as { old: { doc_count: number } }).old.doc_count;
    // An entry in both places (written again since it was shipped) is one entry.
    const keys = (await query<{ entry_key: string }>(tx, 'SELECT entry_key FROM timeseries_entries WHERE index_name = $1', [index])).map((r) => r.entry_key);
    const both = await this.indices.countKeys(index, keys, { must_not: mustNot }, endTimeMillis);
    return { numToDelete: staged.numToDelete + old - both.old, total: staged.total + (typeof total === 'number' ? total : (total?.value ?? 0)) - both.total, replaced: both.old };
  }

  /**
   * Starts OpenSearch's task (under the dispatcher's lock, so nothing is shipped meanwhile): the
   * entries not shipped yet go from the outbox at once, the index is refreshed, then either a
   * delete-by-query of the entries at or before the boundary, or (reindex) a new index behind the
   * alias and an async `_reindex` into it of the entries after the boundary. Returns OpenSearch's task
   * id; an svc task follows it.
   */
  async truncate({ forceDeleteByQuery, forceReindex, ...order }: TruncationOrder): Promise<string> {
    return inTransaction(this.pool, async (tx) => {
      await query(tx, DISPATCHER_LOCK, []);
      // A truncation that failed before is undone first; one still copying this index is waited for
      // (a second copy would read a half-filled index, and both would delete their sources).
      await this.settleGuards(tx);
      await refuseWhileReindexing(tx, order.index, 'it can be truncated again');
      const counts = await this.countLocked(tx, order.index, order.endTimeMillis);
      const params: TruncationParams = { ...order, numToDelete: counts.numToDelete, reindex: reindexes({ forceDeleteByQuery, forceReindex }, counts.numToDelete, counts.total) };
      const [staged] = await query<{ n: number }>(
        tx,
        'WITH d AS (DELETE FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis <= $2 RETURNING 1) SELECT count(*)::int AS n FROM d',
        [params.index, params.endTimeMillis],
      );
      const alias = this.indices.alias(params.index);
      await this.indices.ensure(tx, params.index);
      await os(() => this.client.indices.refresh({ index: alias }));
      let task: string;
      let oldIndices: string[] = [];
      let guard: string | undefined;
      if (params.reindex) {
        oldIndices = Object.keys((await os(() => this.client.indices.getAlias({ name: alias }))).body as object);
        const fresh = `${alias}_${Date.now()}`;
        await os(() => this.indices.create(fresh));
        // The copy starts while the alias still names the old index: nothing is shipped meanwhile (the
        // dispatcher's lock), so it copies what the alias shows. Moving the alias is the last change
        // made in OpenSearch before the commit, and a guard committed before it undoes it if the
        // commit does not come (settleGuards).
        const res = await os(() =>
          this.client.reindex({
            wait_for_completion: false,
            refresh: true,
            ...(params.timeoutSeconds !== null ? { timeout: `${params.timeoutSeconds}s` } : {}),
            // A document shipped into the new index meanwhile is newer than its copy (of the same `_id`,
            // an entry written again): the copy does not replace it.
            body: { conflicts: 'proceed', source: { index: oldIndices, size: params.batchSize, query: { range: { timestampMillis: { gt: params.endTimeMillis } } } }, dest: { index: fresh, op_type: 'create' } } as never,
          }),
        );
        task = String((res.body as { task?: unknown }).task);
        guard = await this.recordGuard(alias, fresh, oldIndices, task);
        await os(() =>
          this.client.indices.updateAliases({ body: { actions: [...oldIndices.map((index) => ({ remove: { index, alias } })), { add: { index: fresh, alias } }] } }),
        );
      } else {
        const res = await os(() =>
          this.client.deleteByQuery({
            index: alias,
            wait_for_completion: false,
            conflicts: 'proceed',
            refresh: true,
            scroll_size: params.batchSize,
            ...(params.timeoutSeconds !== null ? { timeout: `${params.timeoutSeconds}s` } : {}),
            body: { query: { range: { timestampMillis: { lte: params.endTimeMillis } } } } as never,
          }),
        );
        task = String((res.body as { task?: unknown }).task);
      }
      // Those also shipped are OpenSearch's task's to count.
      const stagedDeleted = Math.max(0, staged!.n - counts.replaced);
      await enqueueTask(tx, TRUNCATE_TASK, params.index, { ...params, opensearchTask: task, oldIndices, stagedDeleted, ...(guard ? { guard } : {}) } as unknown as Record<string, unknown>);
      return task;
    });
  }

  async status(taskId: string): Promise<Record<string, unknown> | undefined> {
    if (taskId.startsWith(`${TASK_NODE}:`)) return svcTaskStatus(this.pool, taskId);
    const t = await this.opensearchTask(taskId);
    if (!t) return undefined;
    // The entries a delete-by-query truncation found still in the outbox were deleted there, not by
    // OpenSearch's task: they count as deleted (and in the total), as on an index that had them all.
    const [own] = await query<{ staged: number | null; reindex: boolean | null }>(
      this.pool,
      "SELECT (params->>'stagedDeleted')::int AS staged, (params->>'reindex')::boolean AS reindex FROM tasks WHERE kind = $1 AND params->>'opensearchTask' = $2",
      [TRUNCATE_TASK, taskId],
    );
    const staged = own && !own.reindex ? (own.staged ?? 0) : 0;
    const status = staged > 0 ? { ...t.task.status, total: (t.task.status.total ?? 0) + staged, deleted: (t.task.status.deleted ?? 0) + staged } : t.task.status;
    return { completed: t.completed, taskId, status, runTimeNanos: t.task.running_time_in_nanos };
  }

  private async opensearchTask(taskId: string): Promise<{ completed: boolean; task: { status: Record<string, number>; running_time_in_nanos: number } } | undefined> {
    try {
      return (await os(() => this.client.tasks.get({ task_id: taskId }))).body as never;
    } catch (err) {
      // An unknown task (or node) is a 404; a malformed one a 400.
      if (statusCode(err) === 404 || statusCode(err) === 400) return undefined;
      throw err;
    }
  }

  /**
   * Follows the OpenSearch task of a truncation to its end: its progress into the svc task, a cancel
   * at `timeoutSeconds`, and the old index deleted once a reindex is done. A task queued in
   * `postgres` mode runs as there (on the entries still in the outbox).
   */
  taskHandler(): TaskHandler {
    const postgres = truncationTask(this.pool);
    return async (ctx) => {
      const p = ctx.task.params as unknown as TruncationParams & { stagedDeleted?: number };
      if (!p.opensearchTask || p.numToDelete === null) return postgres(ctx);
      const numToDelete = p.numToDelete;
      const deadline = p.timeoutSeconds === null ? Infinity : Date.parse(ctx.task.createdAt) + p.timeoutSeconds * 1000;
      let done = ctx.task.done;
      let cancelled = false;
      if (ctx.task.total === null) await ctx.progress({ total: numToDelete });
      while (!ctx.stopping) {
        const t = await this.opensearchTask(p.opensearchTask);
        // No such task: OpenSearch lost it (a restart before it stored its result); nothing more to follow.
        const completed = !t || t.completed;
        const removed = (p.stagedDeleted ?? 0) + (p.reindex ? (completed ? numToDelete - (p.stagedDeleted ?? 0) : 0) : (t?.task.status.deleted ?? 0));
        if (removed > done) {
          await ctx.progress({ doneDelta: removed - done });
          done = removed;
        }
        if (completed) {
          if (p.oldIndices?.length) await this.client.indices.delete({ index: p.oldIndices.join(','), ignore_unavailable: true });
          return;
        }
        if (!cancelled && Date.now() > deadline) {
          await this.client.tasks.cancel({ task_id: p.opensearchTask }).catch((err) => this.log.warn({ err }, 'could not cancel a truncation at its timeout'));
          cancelled = true;
        }
        await sleep(POLL_MS);
      }
    };
  }

  /**
   * Records, committed on its own, what a truncation is about to change in OpenSearch (see settleGuards);
   * its token. Through a connection of its own: taking a second one from the pool while the truncation
   * holds one (and the lock others wait for with theirs) could wait forever.
   */
  private async recordGuard(alias: string, fresh: string, oldIndices: string[], opensearchTask: string): Promise<string> {
    const token = randomUUID();
    const own = new pg.Client({ connectionString: (this.pool.options as { connectionString?: string }).connectionString, application_name: 'svc' });
    own.on('error', () => undefined);
    try {
      await own.connect();
      await own.query('INSERT INTO timeseries_truncation_guards (token, alias, fresh_index, old_indices, opensearch_task) VALUES ($1, $2, $3, $4, $5)', [
        token,
        alias,
        fresh,
        oldIndices,
        opensearchTask,
      ]);
      return token;
    } catch (err) {
      throw new SvcError('UNAVAILABLE', 'The database is not reachable', { cause: err });
    } finally {
      await own.end().catch(() => undefined);
    }
  }

  /**
   * The guards of truncations whose transaction has ended (the caller holds the dispatcher's lock,
   * which a starting truncation holds until its commit or rollback): one whose truncation committed
   * (its task carries the guard's token) is dropped; one whose truncation did not is undone first: the
   * copy cancelled, the alias back on the old indices, the new index deleted. Each step may be done
   * again (a guard stays until all are); OpenSearch out of reach leaves it for the next step.
   */
  async settleGuards(tx: Db): Promise<void> {
    const guards = await query<{ token: string; alias: string; fresh_index: string; old_indices: string[]; opensearch_task: string }>(
      tx,
      'SELECT token, alias, fresh_index, old_indices, opensearch_task FROM timeseries_truncation_guards ORDER BY created_at',
      [],
    );
    for (const g of guards) {
      const [committed] = await query(tx, "SELECT 1 FROM tasks WHERE kind = $1 AND params->>'guard' = $2", [TRUNCATE_TASK, g.token]);
      if (!committed) {
        await os(() => this.client.tasks.cancel({ task_id: g.opensearch_task })).catch((err: unknown) => {
          if (statusCode(err) !== 404 && statusCode(err) !== 400) throw err;
        });
        const behind = await os(() => this.client.indices.getAlias({ name: g.alias }, { ignore: [404] }));
        if (Object.keys((behind.body ?? {}) as object).includes(g.fresh_index)) {
          const old: string[] = [];
          for (const index of g.old_indices) if ((await os(() => this.client.indices.exists({ index }))).body) old.push(index);
          if (old.length < g.old_indices.length) this.log.error({ alias: g.alias, missing: g.old_indices.filter((i) => !old.includes(i)) }, 'undoing a truncation: an old index is gone');
          await os(() =>
            this.client.indices.updateAliases({ body: { actions: [{ remove: { index: g.fresh_index, alias: g.alias } }, ...old.map((index) => ({ add: { index, alias: g.alias } }))] } }),
          );
        }
        await os(() => this.client.indices.delete({ index: g.fresh_index, ignore_unavailable: true }));
        this.log.warn({ alias: g.alias, index: g.fresh_index }, 'a truncation that did not commit was undone: the alias is back on the old index');
      }
      await query(tx, 'DELETE FROM timeseries_truncation_guards WHERE token = $1', [g.token]);
    }
  }
}

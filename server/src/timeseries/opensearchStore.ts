/**
 * The `opensearch` time series store: an index per entity type and aspect, `<alias>_<epoch ms>` behind
 * the alias DataHub names (`dataset_datasetprofileaspect_v1`, after `INDEX_PREFIX_` when set), its
 * documents holding `urn`, `timestampMillis`, `@timestamp`, `messageId`, `runId` and the aspect as
 * `event` (stored, not indexed), plus svc's `entryId` that orders entries of one time.
 *
 * Writes commit to `timeseries_entries` in their transaction, as in the `postgres` store; here that
 * table is an outbox: the search dispatcher ships its rows to OpenSearch in id order and deletes them
 * (`ship`, called by search/outbox.ts under the dispatcher's lock). Deletions of entries already
 * shipped wait in `timeseries_deletes` (db/migrations/V001__baseline.sql), in the same order. Reads see
 * both: entries not shipped yet, and shipped ones less those whose deletion waits. A truncation is
 * OpenSearch's own delete-by-query or reindex task, followed by an svc task that reports its progress
 * in `/api/tasks`, cancels it at `timeoutSeconds` and deletes the old index once a reindex is done.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@opensearch-project/opensearch';
import pg from 'pg';
import { inTransaction, query, type Db, type Pool } from '../db/pool.ts';
import { deleteTimeseriesRange, type StoredAspect, type TimeRange } from '../entities/aspectStore.ts';
import { SvcError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { registry } from '../registry/registry.ts';
import { MAX_BULK_BYTES, MAX_INDEXED_KEYWORD } from '../search/opensearchBackend.ts';
import { reachingOpenSearch as os } from '../search/opensearchErrors.ts';
import { enqueueTask } from '../tasks/taskQueue.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';
import { timeseriesIndexName } from './partitions.ts';
import { countEntries, listEntries, svcTaskStatus, truncationTask } from './postgresStore.ts';
import { reindexes } from './truncation.ts';
import { TRUNCATE_TASK } from '../tasks/taskKinds.ts';
import { TASK_NODE, type EntryQuery, type EntryRow, type TimeseriesStore, type TruncationOrder, type TruncationParams } from './store.ts';

/** Rows of the outbox one shipping step takes. */
const SHIP_BATCH = 5000;
/** How long a read waits for OpenSearch before it is answered as unavailable. */
const READ_TIMEOUT_MS = 5_000;
/** How often a truncation task looks at its OpenSearch task. */
const POLL_MS = 250;

/** The truncation tasks rebuilding an index (a reindex not done yet): `id` and `subject` (the index). */
const REINDEXING = `SELECT id, subject FROM tasks WHERE kind = '${TRUNCATE_TASK}' AND state <> 'SUCCEEDED' AND params ? 'opensearchTask' AND (params->>'reindex')::boolean`;

/**
 * While a truncation copies an index into a new one, the alias already names the new index, so the
 * latest entry read there may not be the latest (entries are still being copied): deleting it could
 * delete the wrong one. Such a delete is refused (409, naming the task to wait for).
 */
async function refuseWhileReindexing(tx: Db, index: string, what = 'its latest entry can be deleted'): Promise<void> {
  const [task] = await query<{ id: string }>(tx, `WITH reindexing AS (${REINDEXING}) SELECT id FROM reindexing WHERE subject = $1 LIMIT 1`, [index]);
  if (task) {
    throw new SvcError('CONFLICT', `The time series index ${index} is being rebuilt by a truncation (task ${task.id}, GET /api/tasks/${task.id}); ${what} once that task has succeeded`);
  }
  // A truncation under way, or one that failed and is being undone (see settleGuards).
  const [guard] = await query(tx, 'SELECT 1 FROM timeseries_truncation_guards WHERE right(alias, length($1)) = $1 LIMIT 1', [index]);
  if (guard) throw new SvcError('CONFLICT', `The time series index ${index} is being rebuilt by a truncation that has not finished starting; ${what} in a moment`);
}
/** The dispatcher's lock (search/outbox.ts): shipping and starting a truncation never interleave. */
const DISPATCHER_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('search:dispatcher', 0))";

const MAPPINGS = {
  dynamic: false,
  properties: {
    urn: { type: 'keyword' },
    timestampMillis: { type: 'long' },
    '@timestamp': { type: 'date', format: 'epoch_millis', ignore_malformed: true },
    // Given by writers, of any length: a longer one is kept in the document, not indexed (Lucene refuses
    // a term over 32,766 bytes, and OpenSearch the entry with it).
    messageId: { type: 'keyword', ignore_above: MAX_INDEXED_KEYWORD },
    runId: { type: 'keyword', ignore_above: MAX_INDEXED_KEYWORD },
    entryId: { type: 'long' },
    event: { type: 'object', enabled: false },
    systemMetadata: { type: 'object', enabled: false },
  },
};

interface Doc {
  urn: string;
  timestampMillis: number;
  entryId: number;
  event: Record<string, unknown>;
  systemMetadata?: unknown;
  createdOn?: number;
  createdBy?: string;
}

interface Hit {
  _source: Doc;
}

/** A staged row (not shipped yet) of `timeseries_entries`. */
interface StagedRow {
  id: string;
  index_name: string;
  urn: string;
  aspect: string;
  timestamp_millis: string;
  metadata: Record<string, unknown>;
  system_metadata: Record<string, unknown>;
  created_on: Date;
  created_by: string;
}

interface DeleteRow {
  id: string;
  kind: 'entry' | 'entity' | 'range';
  index_name: string | null;
  urn: string;
  entry_ids: string[];
  start_millis: string | null;
  end_millis: string | null;
}

const DELETE_COLUMNS = 'id, kind, index_name, urn, entry_ids, start_millis, end_millis';

/** The shipped entries a waiting deletion takes (those of its entity written before it, for `entity` and `range`). */
function deletedBy(d: DeleteRow, id = Number(d.id)): Record<string, unknown> {
  if (d.kind === 'entry') return { terms: { entryId: d.entry_ids.map(Number) } };
  const filter: unknown[] = [{ term: { urn: d.urn } }, { range: { entryId: { lt: id } } }];
  if (d.kind === 'range') filter.push({ range: { timestampMillis: { ...(d.start_millis === null ? {} : { gte: Number(d.start_millis) }), ...(d.end_millis === null ? {} : { lte: Number(d.end_millis) }) } } });
  return { bool: { filter } };
}


const statusCode = (err: unknown) => (err as { meta?: { statusCode?: number } }).meta?.statusCode;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class OpenSearchTimeseriesStore implements TimeseriesStore {
  readonly kind = 'opensearch' as const;
  /** Indices known to hold shipped entries (by DataHub's name): they never stop being so. */
  private readonly shippedTo = new Set<string>();
  /** Aliases this process made sure exist in OpenSearch. */
  private readonly created = new Set<string>();
  /** Items OpenSearch refused for good (logged), for tests and metrics. */
  readonly stats = { shipped: 0, rejected: 0 };

  constructor(
    private readonly pool: Pool,
    private readonly client: Client,
    private readonly index: { prefix: string; shards: number; replicas: number },
    private readonly log: Logger,
  ) {}

  /** The alias of an index (DataHub's name, after the prefix). */
  alias(index: string): string {
    return this.index.prefix ? `${this.index.prefix}_${index}` : index;
  }

  private pattern(): string {
    return this.alias('*aspect_v1');
  }

  /**
   * Which of these indices (DataHub's names) have entries in OpenSearch: as recorded in
   * `timeseries_indices` by the step that shipped their first ones, which is also the step that took
   * them out of the outbox, so a read never misses entries between the two places.
   */
  private async shipped(db: Db, indices: string[]): Promise<Set<string>> {
    const unknown = indices.filter((i) => !this.shippedTo.has(i));
    if (unknown.length) {
      for (const r of await query<{ index_name: string }>(db, 'SELECT index_name FROM timeseries_indices WHERE index_name = ANY($1::text[])', [unknown])) this.shippedTo.add(r.index_name);
    }
    return new Set(indices.filter((i) => this.shippedTo.has(i)));
  }

  /** Creates the index behind an alias when there is none, and records it. Only under the dispatcher's lock. */
  private async ensureIndex(tx: Db, index: string): Promise<void> {
    const alias = this.alias(index);
    if (!this.created.has(alias)) {
      if ((await os(() => this.client.indices.exists({ index: alias }))).body) {
        // An index made before the writers' keywords were bounded takes the bound (it can be changed in place).
        await os(() => this.client.indices.putMapping({ index: alias, body: { properties: { messageId: MAPPINGS.properties.messageId, runId: MAPPINGS.properties.runId } as never } }));
      } else {
        const concrete = `${alias}_${Date.now()}`;
        await os(() => this.createIndex(concrete));
        await os(() => this.client.indices.putAlias({ index: concrete, name: alias }));
      }
    }
    this.created.add(alias);
    if (!this.shippedTo.has(index)) {
      await query(tx, 'INSERT INTO timeseries_indices (index_name) VALUES ($1) ON CONFLICT DO NOTHING', [index]);
      this.shippedTo.add(index);
    }
  }

  private async createIndex(index: string): Promise<void> {
    await this.client.indices.create({
      index,
      body: { settings: { number_of_shards: this.index.shards, number_of_replicas: this.index.replicas, refresh_interval: '500ms' }, mappings: MAPPINGS as never },
    });
  }

  // ---- reads ------------------------------------------------------------------------------------

  /**
   * What must not be seen of shipped entries: those whose deletion waits (`entry`), and every entry
   * of an entity hard-deleted after it was written (`entity`).
   */
  private async pending(db: Db, where: { urns: string[] } | { index: string }): Promise<unknown[]> {
    const rows =
      'urns' in where
        ? await query<DeleteRow>(db, `SELECT ${DELETE_COLUMNS} FROM timeseries_deletes WHERE urn = ANY($1::text[])`, [where.urns])
        : await query<DeleteRow>(db, `SELECT ${DELETE_COLUMNS} FROM timeseries_deletes WHERE index_name = $1 OR kind = 'entity'`, [where.index]);
    return rows.map((d) => deletedBy(d));
  }

  /** The latest shipped entry of each aspect (by index) of each entity, keyed `urn\0aspect`. */
  private async shippedLatest(db: Db, entityType: string, urns: string[], aspects: string[]): Promise<Map<string, Doc>> {
    const known = await this.shipped(db, aspects.map((a) => timeseriesIndexName(entityType, a)));
    const wanted = aspects.filter((a) => known.has(timeseriesIndexName(entityType, a)));
    const out = new Map<string, Doc>();
    if (wanted.length === 0 || urns.length === 0) return out;
    const mustNot = await this.pending(db, { urns });
    const body = wanted.flatMap((a) => [
      { index: this.alias(timeseriesIndexName(entityType, a)), ignore_unavailable: true },
      { size: urns.length, query: { bool: { filter: [{ terms: { urn: urns } }], must_not: mustNot } }, collapse: { field: 'urn' }, sort: [{ timestampMillis: 'desc' }, { entryId: 'desc' }] },
    ]);
    const res = await os(() => this.client.msearch({ body: body as never }, { requestTimeout: READ_TIMEOUT_MS }));
    (res.body.responses as { hits?: { hits: Hit[] }; error?: unknown }[]).forEach((r, i) => {
      if (r.error) throw new Error(`OpenSearch search of time series failed: ${JSON.stringify(r.error)}`);
      for (const h of r.hits?.hits ?? []) out.set(`${h._source.urn}\0${wanted[i]}`, h._source);
    });
    return out;
  }

  private async stagedLatest(db: Db, urns: string[], aspects: string[]): Promise<StagedRow[]> {
    if (urns.length === 0 || aspects.length === 0) return [];
    return query<StagedRow>(
      db,
      `SELECT DISTINCT ON (urn, aspect) id, index_name, urn, aspect, timestamp_millis, metadata, system_metadata, created_on, created_by
         FROM timeseries_entries WHERE urn = ANY($1) AND aspect = ANY($2)
        ORDER BY urn, aspect, timestamp_millis DESC, id DESC`,
      [urns, aspects],
    );
  }

  async latest(db: Db, entityType: string, urns: string[], aspects: string[]): Promise<StoredAspect[]> {
    const staged = new Map((await this.stagedLatest(db, urns, aspects)).map((r) => [`${r.urn}\0${r.aspect}`, r]));
    const shipped = await this.shippedLatest(db, entityType, urns, aspects);
    const out: StoredAspect[] = [];
    for (const key of new Set([...staged.keys(), ...shipped.keys()])) {
      const [urn, aspect] = key.split('\0') as [string, string];
      const s = staged.get(key);
      const d = shipped.get(key);
      // Staged entries were written after every shipped one: of one time, the staged one is the latest.
      if (s && (!d || Number(s.timestamp_millis) >= d.timestampMillis)) {
        out.push({ urn, aspect, version: 0, value: s.metadata, systemMetadata: s.system_metadata, createdOn: s.created_on, createdBy: s.created_by });
      } else if (d) {
        out.push({ urn, aspect, version: 0, value: d.event, systemMetadata: (d.systemMetadata ?? {}) as Record<string, unknown>, createdOn: new Date(d.createdOn ?? 0), createdBy: d.createdBy ?? '' });
      }
    }
    return out;
  }

  async deleteLatest(tx: Db, entityType: string, urn: string, aspect: string): Promise<boolean> {
    await refuseWhileReindexing(tx, timeseriesIndexName(entityType, aspect));
    const [s] = await this.stagedLatest(tx, [urn], [aspect]);
    const d = (await this.shippedLatest(tx, entityType, [urn], [aspect])).get(`${urn}\0${aspect}`);
    if (!s && !d) return false;
    const staged = s !== undefined && (!d || Number(s.timestamp_millis) >= d.timestampMillis);
    // A staged entry may be in a shipping step right now: deleted from the outbox, and from OpenSearch too.
    if (staged) await query(tx, 'DELETE FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis = $2 AND id = $3', [s.index_name, s.timestamp_millis, s.id]);
    await query(tx, "INSERT INTO timeseries_deletes (kind, index_name, urn, entry_ids) VALUES ('entry', $1, $2, $3)", [timeseriesIndexName(entityType, aspect), urn, [staged ? Number(s.id) : d!.entryId]]);
    return true;
  }

  /**
   * The staged entries in the range are deleted from the outbox; the shipped ones are counted (those
   * no earlier deletion takes) and a `range` deletion waits for the dispatcher, which applies it after
   * what was shipped before it.
   */
  async deleteRange(tx: Db, entityType: string, urn: string, aspect: string, range: TimeRange): Promise<number> {
    const index = timeseriesIndexName(entityType, aspect);
    // Under the dispatcher's lock, so that no entry is counted in both places (in a shipping step,
    // between its bulk and its commit).
    await query(tx, DISPATCHER_LOCK, []);
    await refuseWhileReindexing(tx, index, 'its entries can be deleted');
    const staged = await deleteTimeseriesRange(tx, urn, aspect, range);
    if (!(await this.shipped(tx, [index])).has(index)) return staged;
    const timestampMillis = { ...(range.startTimeMillis === undefined ? {} : { gte: range.startTimeMillis }), ...(range.endTimeMillis === undefined ? {} : { lte: range.endTimeMillis }) };
    const mustNot = await this.pending(tx, { urns: [urn] });
    const res = await os(() =>
      this.client.count({ index: this.alias(index), ignore_unavailable: true, body: { query: { bool: { filter: [{ term: { urn } }, { range: { timestampMillis } }], must_not: mustNot } } } as never }, { requestTimeout: READ_TIMEOUT_MS }),
    );
    const shipped = (res.body as { count: number }).count;
    if (shipped > 0) {
      await query(tx, "INSERT INTO timeseries_deletes (kind, index_name, urn, start_millis, end_millis) VALUES ('range', $1, $2, $3, $4)", [index, urn, range.startTimeMillis ?? null, range.endTimeMillis ?? null]);
    }
    return staged + shipped;
  }

  async deleteEntity(tx: Db, entityType: string, urn: string): Promise<string[]> {
    const aspects = registry.aspectsOf(registry.entity(entityType)).filter((a) => a.timeseries).map((a) => a.name);
    const had = [...(await this.shippedLatest(tx, entityType, [urn], aspects)).keys()].map((k) => k.split('\0')[1]!);
    await query(tx, "INSERT INTO timeseries_deletes (kind, urn) VALUES ('entity', $1)", [urn]);
    return had;
  }

  async list(index: string, q: EntryQuery): Promise<EntryRow[]> {
    const staged = await listEntries(this.pool, index, q);
    if (!(await this.shipped(this.pool, [index])).has(index)) return staged;
    const alias = this.alias(index);
    const range: Record<string, number> = {};
    if (q.startTimeMillis !== undefined) range.gte = q.startTimeMillis;
    if (q.endTimeMillis !== undefined) range.lte = q.endTimeMillis;
    const mustNot = await this.pending(this.pool, { index });
    const res = await os(() =>
      this.client.search({
        index: alias,
        ignore_unavailable: true,
        body: {
          size: q.limit + 1,
          query: { bool: { filter: [{ range: { timestampMillis: range } }, ...(q.urn === undefined ? [] : [{ term: { urn: q.urn } }])], must_not: mustNot } },
          sort: [{ timestampMillis: 'desc' }, { entryId: 'desc' }],
          ...(q.after ? { search_after: q.after } : {}),
        } as never,
      }, { requestTimeout: READ_TIMEOUT_MS }),
    );
    const shipped = (res.body.hits.hits as unknown as Hit[])
      .map((h) => h._source)
      .map((d): EntryRow => ({ id: d.entryId, urn: d.urn, timestampMillis: d.timestampMillis, value: d.event, systemMetadata: d.systemMetadata ?? {} }));
    // An entry in a shipping step is in both places for a moment.
    const stagedIds = new Set(staged.map((e) => e.id));
    return [...staged, ...shipped.filter((e) => !stagedIds.has(e.id))].sort((a, b) => b.timestampMillis - a.timestampMillis || b.id - a.id).slice(0, q.limit + 1);
  }

  /** Counted under the dispatcher's lock, so that no entry is counted in both places (between a step's bulk and its commit). */
  count(index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number }> {
    return inTransaction(this.pool, async (tx) => {
      await query(tx, DISPATCHER_LOCK, []);
      await this.settleGuards(tx);
      return this.countLocked(tx, index, endTimeMillis);
    });
  }

  private async countLocked(tx: Db, index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number }> {
    const staged = await countEntries(tx, index, endTimeMillis);
    if (!(await this.shipped(tx, [index])).has(index)) return staged;
    const alias = this.alias(index);
    const mustNot = await this.pending(tx, { index });
    const res = await os(() =>
      this.client.search({
        index: alias,
        ignore_unavailable: true,
        body: { size: 0, track_total_hits: true, query: { bool: { must_not: mustNot } }, aggs: { old: { filter: { range: { timestampMillis: { lte: endTimeMillis } } } } } } as never,
      }, { requestTimeout: READ_TIMEOUT_MS }),
    );
    const total = res.body.hits.total;
    const old = (res.body.aggregations as { old: { doc_count: number } }).old.doc_count;
    return { numToDelete: staged.numToDelete + old, total: staged.total + (typeof total === 'number' ? total : (total?.value ?? 0)) };
  }

  /** Primary store size of the indices behind each alias. */
  async sizes(): Promise<{ indexName: string; bytes: number }[]> {
    const aliases = await os(() => this.client.indices.getAlias({ name: this.pattern() }, { ignore: [404] }));
    if (aliases.statusCode === 404) return [];
    const stats = await os(() => this.client.indices.stats({ index: this.alias('*aspect_v1_*'), metric: 'store' }));
    const indices = (stats.body as { indices?: Record<string, { primaries: { store: { size_in_bytes: number } } }> }).indices ?? {};
    const bytes = new Map<string, number>();
    for (const [index, v] of Object.entries(aliases.body as Record<string, { aliases: Record<string, unknown> }>)) {
      for (const alias of Object.keys(v.aliases)) bytes.set(alias, (bytes.get(alias) ?? 0) + (indices[index]?.primaries.store.size_in_bytes ?? 0));
    }
    return [...bytes].map(([indexName, b]) => ({ indexName, bytes: b }));
  }

  // ---- truncation -------------------------------------------------------------------------------

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
      const alias = this.alias(params.index);
      await this.ensureIndex(tx, params.index);
      await os(() => this.client.indices.refresh({ index: alias }));
      let task: string;
      let oldIndices: string[] = [];
      let guard: string | undefined;
      if (params.reindex) {
        oldIndices = Object.keys((await os(() => this.client.indices.getAlias({ name: alias }))).body as object);
        const fresh = `${alias}_${Date.now()}`;
        await os(() => this.createIndex(fresh));
        // The copy starts while the alias still names the old index: nothing is shipped meanwhile (the
        // dispatcher's lock), so it copies what the alias shows. Moving the alias is the last change
        // made in OpenSearch before the commit, and a guard committed before it undoes it if the
        // commit does not come (settleGuards).
        const res = await os(() =>
          this.client.reindex({
            wait_for_completion: false,
            refresh: true,
            ...(params.timeoutSeconds !== null ? { timeout: `${params.timeoutSeconds}s` } : {}),
            body: { source: { index: oldIndices, size: params.batchSize, query: { range: { timestampMillis: { gt: params.endTimeMillis } } } }, dest: { index: fresh } } as never,
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
      await enqueueTask(tx, TRUNCATE_TASK, params.index, { ...params, opensearchTask: task, oldIndices, stagedDeleted: staged!.n, ...(guard ? { guard } : {}) } as unknown as Record<string, unknown>);
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
  private async settleGuards(tx: Db): Promise<void> {
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

  // ---- the outbox -------------------------------------------------------------------------------

  /**
   * Ships a batch of the outbox to OpenSearch in id order (entries in bulk, each deletion after the
   * entries before it), then deletes what it shipped; the number of rows handled. Under the
   * dispatcher's lock, in its transaction; delivered at least once (an entry's `_id` is its id).
   */
  async ship(tx: Db): Promise<number> {
    await this.settleGuards(tx);
    const entries = await query<StagedRow>(
      tx,
      'SELECT id, index_name, urn, aspect, timestamp_millis, metadata, system_metadata, created_on, created_by FROM timeseries_entries ORDER BY id LIMIT $1',
      [SHIP_BATCH],
    );
    // Deletions wait while a reindex copies their index (the copy reads a snapshot and would bring the
    // entries back); reads keep hiding them meanwhile. A hard delete of an entity waits for any reindex.
    const deletes = await query<DeleteRow>(
      tx,
      `WITH reindexing AS (${REINDEXING})
       SELECT ${DELETE_COLUMNS} FROM timeseries_deletes d
        WHERE NOT EXISTS (SELECT 1 FROM reindexing r WHERE d.kind = 'entity' OR r.subject = d.index_name)
        ORDER BY id LIMIT $1`,
      [SHIP_BATCH],
    );
    if (entries.length === 0 && deletes.length === 0) return 0;
    // Only up to where both lists are complete, so that order holds across them.
    let cut = Infinity;
    if (entries.length === SHIP_BATCH) cut = Math.min(cut, Number(entries[entries.length - 1]!.id));
    if (deletes.length === SHIP_BATCH) cut = Math.min(cut, Number(deletes[deletes.length - 1]!.id));
    const items = [
      ...entries.filter((e) => Number(e.id) <= cut).map((entry) => ({ id: Number(entry.id), entry })),
      ...deletes.filter((d) => Number(d.id) <= cut).map((del) => ({ id: Number(del.id), del })),
    ].sort((a, b) => a.id - b.id);
    for (const index of new Set(entries.map((e) => e.index_name))) await this.ensureIndex(tx, index);
    let bulk: string[] = [];
    let bulkBytes = 0;
    const flush = async (refresh: boolean) => {
      if (bulk.length === 0) return;
      const res = await this.client.bulk({ body: bulk as never, refresh });
      bulk = [];
      bulkBytes = 0;
      if (!res.body.errors) return;
      for (const item of res.body.items as Record<string, { status: number; error?: { reason?: string } }>[]) {
        const r = Object.values(item)[0]!;
        if (r.status < 300) continue;
        if (r.status === 429 || r.status >= 500) throw new Error(`OpenSearch bulk item failed (${r.status}): ${r.error?.reason ?? ''}`);
        this.stats.rejected++;
        this.log.warn({ item }, 'OpenSearch refused a time series entry');
      }
    };
    for (const it of items) {
      if ('entry' in it) {
        const e = it.entry;
        const ts = Number(e.timestamp_millis);
        const doc: Doc & Record<string, unknown> = {
          urn: e.urn,
          timestampMillis: ts,
          '@timestamp': ts,
          ...(typeof e.metadata.messageId === 'string' ? { messageId: e.metadata.messageId } : {}),
          ...(typeof e.system_metadata.runId === 'string' ? { runId: e.system_metadata.runId } : {}),
          event: e.metadata,
          systemMetadata: e.system_metadata,
          entryId: it.id,
          createdOn: e.created_on.getTime(),
          createdBy: e.created_by,
        };
        const lines = [JSON.stringify({ index: { _index: this.alias(e.index_name), _id: String(it.id) } }), JSON.stringify(doc)];
        // Bulk requests of a bounded size (OpenSearch refuses one over 100 MB by default, and entries may be large).
        const size = Buffer.byteLength(lines[0]!) + Buffer.byteLength(lines[1]!) + 2;
        if (bulkBytes > 0 && bulkBytes + size > MAX_BULK_BYTES) await flush(true);
        bulk.push(lines[0]!, lines[1]!);
        bulkBytes += size;
        continue;
      }
      // A deletion applies to what was shipped before it: made visible first.
      await flush(true);
      const d = it.del;
      const q = deletedBy(d, it.id);
      await this.client.deleteByQuery({
        index: d.kind === 'entity' ? this.pattern() : this.alias(d.index_name!),
        ignore_unavailable: true,
        allow_no_indices: true,
        conflicts: 'proceed',
        refresh: true,
        body: { query: q } as never,
      });
    }
    // Visible before they leave the outbox, so that a read never misses them in between.
    await flush(true);
    const shipped = items.filter((i) => 'entry' in i).map((i) => i.id);
    if (shipped.length) await query(tx, 'DELETE FROM timeseries_entries WHERE id = ANY($1::bigint[])', [shipped]);
    const applied = items.filter((i) => 'del' in i).map((i) => i.id);
    if (applied.length) await query(tx, 'DELETE FROM timeseries_deletes WHERE id = ANY($1::bigint[])', [applied]);
    this.stats.shipped += shipped.length;
    return items.length;
  }

  /** Makes every shipped entry visible to searches. */
  async refresh(): Promise<void> {
    await this.client.indices.refresh({ index: this.pattern(), allow_no_indices: true, ignore_unavailable: true });
  }
}

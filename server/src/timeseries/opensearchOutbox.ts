/**
 * The outbox of the `opensearch` time series store. Writes commit to `timeseries_entries` in their
 * transaction, as in the `postgres` store; here that table is an outbox: the search dispatcher ships its
 * rows to OpenSearch in id order and deletes them ({@link OutboxShipper.ship}, called by
 * search/outbox.ts under the dispatcher's lock). Deletions of entries already shipped wait in
 * `timeseries_deletes` (db/migrations/V001__baseline.sql), in the same order; reads hide what they take
 * meanwhile ({@link waitingDeletions}).
 */
import type { Client } from '@opensearch-project/opensearch';
import { query, type Db } from '../db/pool.ts';
import type { Logger } from '../shared/log.ts';
import { MAX_BULK_BYTES } from '../search/opensearchBackend.ts';
import { TRUNCATE_TASK } from '../contract/tasks.ts';
import type { Doc, TimeseriesIndices } from './opensearchIndices.ts';

/** Rows of the outbox one shipping step takes. */
const SHIP_BATCH = 5000;

/** The dispatcher's lock (search/outbox.ts): shipping and starting a truncation never interleave. */
export const DISPATCHER_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('search:dispatcher', 0))";

/** The truncation tasks rebuilding an index (a reindex not done yet): `id` and `subject` (the index). */
export const REINDEXING = `SELECT id, subject FROM tasks WHERE kind = '${TRUNCATE_TASK}' AND state <> 'SUCCEEDED' AND params ? 'opensearchTask' AND (params->>'reindex')::boolean`;

/** The columns of a staged row. */
export const STAGED_COLUMNS = 'id, index_name, urn, aspect, timestamp_millis, entry_key, metadata, system_metadata, created_on, created_by';

/** A staged row (not shipped yet) of `timeseries_entries`. */
export interface StagedRow {
  id: string;
  index_name: string;
  urn: string;
  aspect: string;
  timestamp_millis: string;
  entry_key: string;
  metadata: Record<string, unknown>;
  system_metadata: Record<string, unknown>;
  created_on: Date;
  created_by: string;
}

/** A deletion of shipped entries waiting in `timeseries_deletes`. */
interface DeleteRow {
  id: string;
  kind: 'entry' | 'entity' | 'range';
  index_name: string | null;
  urn: string;
  entry_keys: string[];
  start_millis: string | null;
  end_millis: string | null;
}

const DELETE_COLUMNS = 'id, kind, index_name, urn, entry_keys, start_millis, end_millis';

/**
 * The shipped entries a waiting deletion takes: those written before it of the identities it lists
 * (`entry`), or of its entity (`entity`, `range`). Written before it, since an entry of the same
 * identity written after it replaces the deleted one and stays.
 */
function deletedBy(d: DeleteRow, id = Number(d.id)): Record<string, unknown> {
  const filter: unknown[] = [d.kind === 'entry' ? { terms: { entryKey: d.entry_keys } } : { term: { urn: d.urn } }, { range: { entryId: { lt: id } } }];
  if (d.kind === 'range') filter.push({ range: { timestampMillis: { ...(d.start_millis === null ? {} : { gte: Number(d.start_millis) }), ...(d.end_millis === null ? {} : { lte: Number(d.end_millis) }) } } });
  return { bool: { filter } };
}

/**
 * What must not be seen of shipped entries, as OpenSearch queries: those whose deletion waits (`entry`,
 * `range`), and every entry of an entity hard-deleted after it was written (`entity`).
 */
export async function waitingDeletions(db: Db, where: { urns: string[] } | { index: string }): Promise<unknown[]> {
  const rows =
    'urns' in where
      ? await query<DeleteRow>(db, `SELECT ${DELETE_COLUMNS} FROM timeseries_deletes WHERE urn = ANY($1::text[])`, [where.urns])
      : await query<DeleteRow>(db, `SELECT ${DELETE_COLUMNS} FROM timeseries_deletes WHERE index_name = $1 OR kind = 'entity'`, [where.index]);
  return rows.map((d) => deletedBy(d));
}

/**
 * The keys of these shipped entries that an entry in the outbox has too (being shipped, or written
 * again since): reads show the outbox's value, not the document's.
 */
export async function stagedKeys(db: Db, index: string, docs: { timestampMillis: number; entryKey: string }[]): Promise<Set<string>> {
  if (docs.length === 0) return new Set();
  const rows = await query<{ entry_key: string }>(
    db,
    'SELECT entry_key FROM timeseries_entries WHERE index_name = $1 AND (timestamp_millis, entry_key) IN (SELECT * FROM unnest($2::bigint[], $3::uuid[]))',
    [index, docs.map((d) => d.timestampMillis), docs.map((d) => d.entryKey)],
  );
  return new Set(rows.map((r) => r.entry_key));
}

export class OutboxShipper {
  /** Items shipped, and items OpenSearch refused for good (logged), for tests and metrics. */
  readonly stats = { shipped: 0, rejected: 0 };

  constructor(
    private readonly client: Client,
    private readonly indices: TimeseriesIndices,
    private readonly log: Logger,
  ) {}

  /**
   * Ships a batch of the outbox to OpenSearch in id order (entries in bulk, each deletion after the
   * entries before it), then deletes what it shipped; the number of rows handled. Under the
   * dispatcher's lock, in its transaction; delivered at least once (an entry's `_id` is its identity,
   * `entry_key`: shipped again, or written again with other values, it replaces its document). An entry
   * written again while this step ships its old value has a new id, which keeps it in the outbox.
   */
  async ship(tx: Db): Promise<number> {
    const entries = await query<StagedRow>(
      tx,
      `SELECT ${STAGED_COLUMNS} FROM timeseries_entries ORDER BY id LIMIT $1`,
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
    for (const index of new Set(entries.map((e) => e.index_name))) await this.indices.ensure(tx, index);
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
        const lines = [JSON.stringify({ index: { _index: this.indices.alias(it.entry.index_name), _id: it.entry.entry_key } }), JSON.stringify(documentOf(it.entry, it.id))];
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
      await this.client.deleteByQuery({
        index: d.kind === 'entity' ? this.indices.pattern() : this.indices.alias(d.index_name!),
        ignore_unavailable: true,
        allow_no_indices: true,
        conflicts: 'proceed',
        refresh: true,
        body: { query: deletedBy(d, it.id) } as never,
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
}

/** The document of a staged entry, `entryId` its outbox id. */
function documentOf(e: StagedRow, entryId: number): Doc & Record<string, unknown> {
  const ts = Number(e.timestamp_millis);
  return {
    urn: e.urn,
    timestampMillis: ts,
    '@timestamp': ts,
    ...(typeof e.metadata.messageId === 'string' ? { messageId: e.metadata.messageId } : {}),
    ...(typeof e.system_metadata.runId === 'string' ? { runId: e.system_metadata.runId } : {}),
    event: e.metadata,
    systemMetadata: e.system_metadata,
    entryId,
    entryKey: e.entry_key,
    createdOn: e.created_on.getTime(),
    createdBy: e.created_by,
  };
}

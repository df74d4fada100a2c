/**
 * The `opensearch` time series store: entries written to `timeseries_entries` in their transaction and
 * shipped to OpenSearch by the search dispatcher (opensearchOutbox.ts), into an index per entity type
 * and aspect (opensearchIndices.ts); truncation is OpenSearch's own task (opensearchTruncation.ts). This
 * module reads and deletes: reads see both places, entries not shipped yet and shipped ones less those
 * whose deletion waits; a deletion takes the staged entries at once and queues one for the shipped.
 */
import type { Client } from '@opensearch-project/opensearch';
import { inTransaction, query, type Db, type Pool } from '../db/pool.ts';
import { deleteTimeseriesRangeKeys, type StoredAspect, type TimeRange } from '../entities/aspectStore.ts';
import type { Logger } from '../shared/log.ts';
import { registry } from '../registry/registry.ts';
import { reachingOpenSearch as os } from '../search/opensearchErrors.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';
import { READ_TIMEOUT_MS, TimeseriesIndices, type Doc, type Hit, type IndexSettings } from './opensearchIndices.ts';
import { DISPATCHER_LOCK, OutboxShipper, STAGED_COLUMNS, stagedKeys, waitingDeletions, type StagedRow } from './opensearchOutbox.ts';
import { OpenSearchTruncation, refuseWhileReindexing } from './opensearchTruncation.ts';
import { timeseriesIndexName } from './partitions.ts';
import { listEntries } from './postgresStore.ts';
import type { EntryQuery, EntryRow, TimeseriesStore, TruncationOrder } from './store.ts';

export class OpenSearchTimeseriesStore implements TimeseriesStore {
  readonly kind = 'opensearch' as const;
  private readonly indices: TimeseriesIndices;
  private readonly shipper: OutboxShipper;
  private readonly truncation: OpenSearchTruncation;

  constructor(
    private readonly pool: Pool,
    private readonly client: Client,
    index: IndexSettings,
    log: Logger,
  ) {
    this.indices = new TimeseriesIndices(client, index);
    this.shipper = new OutboxShipper(client, this.indices, log);
    this.truncation = new OpenSearchTruncation(pool, client, this.indices, log);
  }

  // ---- reads ------------------------------------------------------------------------------------

  /** The latest shipped entry of each aspect (by index) of each entity, keyed `urn\0aspect`. */
  private async shippedLatest(db: Db, entityType: string, urns: string[], aspects: string[]): Promise<Map<string, Doc>> {
    const known = await this.indices.shipped(db, aspects.map((a) => timeseriesIndexName(entityType, a)));
    const wanted = aspects.filter((a) => known.has(timeseriesIndexName(entityType, a)));
    const out = new Map<string, Doc>();
    if (wanted.length === 0 || urns.length === 0) return out;
    const mustNot = await waitingDeletions(db, { urns });
    const body = wanted.flatMap((a) => [
      { index: this.indices.alias(timeseriesIndexName(entityType, a)), ignore_unavailable: true },
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
      `SELECT DISTINCT ON (urn, aspect) ${STAGED_COLUMNS}
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
    // A staged entry may be in a shipping step right now, or replace a shipped one of its identity: it
    // is deleted from the outbox, and its identity from OpenSearch too.
    if (staged) await query(tx, 'DELETE FROM timeseries_entries WHERE index_name = $1 AND timestamp_millis = $2 AND id = $3', [s.index_name, s.timestamp_millis, s.id]);
    await query(tx, "INSERT INTO timeseries_deletes (kind, index_name, urn, entry_keys) VALUES ('entry', $1, $2, $3)", [timeseriesIndexName(entityType, aspect), urn, [staged ? s.entry_key : d!.entryKey]]);
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
    const staged = await deleteTimeseriesRangeKeys(tx, urn, aspect, range);
    if (!(await this.indices.shipped(tx, [index])).has(index)) return staged.length;
    const timestampMillis = { ...(range.startTimeMillis === undefined ? {} : { gte: range.startTimeMillis }), ...(range.endTimeMillis === undefined ? {} : { lte: range.endTimeMillis }) };
    const mustNot = await waitingDeletions(tx, { urns: [urn] });
    const filter = [{ term: { urn } }, { range: { timestampMillis } }];
    const res = await os(() =>
      this.client.count({ index: this.indices.alias(index), ignore_unavailable: true, body: { query: { bool: { filter, must_not: mustNot } } } as never }, { requestTimeout: READ_TIMEOUT_MS }),
    );
    const shipped = (res.body as { count: number }).count;
    if (shipped > 0) {
      await query(tx, "INSERT INTO timeseries_deletes (kind, index_name, urn, start_millis, end_millis) VALUES ('range', $1, $2, $3, $4)", [index, urn, range.startTimeMillis ?? null, range.endTimeMillis ?? null]);
    }
    // An entry in both places (written again since it was shipped) is one entry.
    const both = shipped > 0 ? (await this.indices.countKeys(index, staged, { filter, must_not: mustNot })).total : 0;
    return staged.length + shipped - both;
  }

  async deleteEntity(tx: Db, entityType: string, urn: string): Promise<string[]> {
    const aspects = registry.aspectsOf(registry.entity(entityType)).filter((a) => a.timeseries).map((a) => a.name);
    const had = [...(await this.shippedLatest(tx, entityType, [urn], aspects)).keys()].map((k) => k.split('\0')[1]!);
    await query(tx, "INSERT INTO timeseries_deletes (kind, urn) VALUES ('entity', $1)", [urn]);
    return had;
  }

  /**
   * A page of both places, merged: an entry shows once, from the outbox when it is there (in a shipping
   * step, or written again since it was shipped), else from OpenSearch. The outbox is read in one
   * snapshot taken before OpenSearch is searched: a step that committed before it had made its
   * documents searchable, and an entry still in the outbox in it is shown from there whatever OpenSearch
   * answers meanwhile (its old document, or the new one of a step committing now).
   */
  async list(index: string, q: EntryQuery): Promise<EntryRow[]> {
    return inTransaction(this.pool, async (tx) => {
      await query(tx, 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY', []);
      const staged = await listEntries(tx, index, q);
      if (!(await this.indices.shipped(tx, [index])).has(index)) return staged;
      const mustNot = await waitingDeletions(tx, { index });
      const range: Record<string, number> = {};
      if (q.startTimeMillis !== undefined) range.gte = q.startTimeMillis;
      if (q.endTimeMillis !== undefined) range.lte = q.endTimeMillis;
      const shipped: EntryRow[] = [];
      // Pages of documents until the page is full, since the outbox may hold some of them.
      for (let after = q.after; ; ) {
        const res = await os(() =>
          this.client.search({
            index: this.indices.alias(index),
            ignore_unavailable: true,
            body: {
              size: q.limit + 1,
              query: { bool: { filter: [{ range: { timestampMillis: range } }, ...(q.urn === undefined ? [] : [{ term: { urn: q.urn } }])], must_not: mustNot } },
              sort: [{ timestampMillis: 'desc' }, { entryId: 'desc' }],
              ...(after ? { search_after: after } : {}),
            } as never,
          }, { requestTimeout: READ_TIMEOUT_MS }),
        );
        const docs = (res.body.hits.hits as unknown as Hit[]).map((h) => h._source);
        const inOutbox = await stagedKeys(tx, index, docs);
        for (const d of docs) {
          if (!inOutbox.has(d.entryKey)) shipped.push({ id: d.entryId, urn: d.urn, timestampMillis: d.timestampMillis, value: d.event, systemMetadata: d.systemMetadata ?? {} });
        }
        const last = docs[docs.length - 1];
        if (!last || docs.length <= q.limit || shipped.length > q.limit) break;
        after = [last.timestampMillis, last.entryId];
      }
      return [...staged, ...shipped].sort((a, b) => b.timestampMillis - a.timestampMillis || b.id - a.id).slice(0, q.limit + 1);
    });
  }

  sizes(): Promise<{ indexName: string; bytes: number }[]> {
    return this.indices.sizes();
  }

  // ---- truncation (opensearchTruncation.ts) -----------------------------------------------------

  count(index: string, endTimeMillis: number): Promise<{ numToDelete: number; total: number }> {
    return this.truncation.count(index, endTimeMillis);
  }

  truncate(order: TruncationOrder): Promise<string> {
    return this.truncation.truncate(order);
  }

  status(taskId: string): Promise<Record<string, unknown> | undefined> {
    return this.truncation.status(taskId);
  }

  taskHandler(): TaskHandler {
    return this.truncation.taskHandler();
  }

  // ---- the outbox (opensearchOutbox.ts) ---------------------------------------------------------

  /** Ships a batch of the outbox, after settling what failed truncations left (see OpenSearchTruncation.settleGuards). */
  async ship(tx: Db): Promise<number> {
    await this.truncation.settleGuards(tx);
    return this.shipper.ship(tx);
  }

  /** Makes every shipped entry visible to searches. */
  async refresh(): Promise<void> {
    await this.client.indices.refresh({ index: this.indices.pattern(), allow_no_indices: true, ignore_unavailable: true });
  }
}

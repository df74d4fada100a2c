/**
 * The OpenSearch indices of the `opensearch` time series store: an index per entity type and aspect,
 * `<alias>_<epoch ms>` behind the alias DataHub names (`dataset_datasetprofileaspect_v1`, after
 * `INDEX_PREFIX_` when set), its documents holding `urn`, `timestampMillis`, `@timestamp`, `messageId`,
 * `runId` and the aspect as `event` (stored, not indexed), plus svc's `entryId` that orders entries of
 * one time and `entryKey`, the entry's identity, which is also its `_id` (so that an entry written
 * again replaces its document). Which indices hold shipped entries is recorded in `timeseries_indices`.
 */
import type { Client } from '@opensearch-project/opensearch';
import { query, type Db } from '../db/pool.ts';
import { MAX_INDEXED_KEYWORD } from '../search/opensearchDocuments.ts';
import { reachingOpenSearch as os } from '../search/opensearchErrors.ts';

/** How long a read waits for OpenSearch before it is answered as unavailable. */
export const READ_TIMEOUT_MS = 5_000;

/** Entry keys in one terms query (OpenSearch refuses more than 65,536 by default). */
const KEYS_PER_REQUEST = 10_000;

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
    entryKey: { type: 'keyword' },
    event: { type: 'object', enabled: false },
    systemMetadata: { type: 'object', enabled: false },
  },
};

/** A shipped entry as its document holds it. */
export interface Doc {
  urn: string;
  timestampMillis: number;
  entryId: number;
  /** The entry's identity (`entry_key` of timeseries_entries), also the document's `_id`. */
  entryKey: string;
  event: Record<string, unknown>;
  systemMetadata?: unknown;
  createdOn?: number;
  createdBy?: string;
}

export interface Hit {
  _source: Doc;
}

/** The HTTP status of an OpenSearch client's error, if it has one. */
export const statusCode = (err: unknown) => (err as { meta?: { statusCode?: number } }).meta?.statusCode;

export interface IndexSettings {
  prefix: string;
  shards: number;
  replicas: number;
}

export class TimeseriesIndices {
  /** Indices known to hold shipped entries (by DataHub's name): they never stop being so. */
  private readonly shippedTo = new Set<string>();
  /** Aliases this process made sure exist in OpenSearch. */
  private readonly created = new Set<string>();

  constructor(
    private readonly client: Client,
    private readonly settings: IndexSettings,
  ) {}

  /** The alias of an index (DataHub's name, after the prefix). */
  alias(index: string): string {
    return this.settings.prefix ? `${this.settings.prefix}_${index}` : index;
  }

  /** Every time series alias. */
  pattern(): string {
    return this.alias('*aspect_v1');
  }

  /**
   * Which of these indices (DataHub's names) have entries in OpenSearch: as recorded in
   * `timeseries_indices` by the step that shipped their first ones, which is also the step that took
   * them out of the outbox, so a read never misses entries between the two places.
   */
  async shipped(db: Db, indices: string[]): Promise<Set<string>> {
    const unknown = indices.filter((i) => !this.shippedTo.has(i));
    if (unknown.length) {
      for (const r of await query<{ index_name: string }>(db, 'SELECT index_name FROM timeseries_indices WHERE index_name = ANY($1::text[])', [unknown])) this.shippedTo.add(r.index_name);
    }
    return new Set(indices.filter((i) => this.shippedTo.has(i)));
  }

  /** Creates the index behind an alias when there is none, and records it. Only under the dispatcher's lock. */
  async ensure(tx: Db, index: string): Promise<void> {
    const alias = this.alias(index);
    if (!this.created.has(alias)) {
      if ((await os(() => this.client.indices.exists({ index: alias }))).body) {
        // An existing index takes the current mappings of the fields that can be changed in place: the
        // bound of the writers' keywords, and the entry key.
        const { messageId, runId, entryKey } = MAPPINGS.properties;
        await os(() => this.client.indices.putMapping({ index: alias, body: { properties: { messageId, runId, entryKey } as never } }));
      } else {
        const concrete = `${alias}_${Date.now()}`;
        await os(() => this.create(concrete));
        await os(() => this.client.indices.putAlias({ index: concrete, name: alias }));
      }
    }
    this.created.add(alias);
    if (!this.shippedTo.has(index)) {
      await query(tx, 'INSERT INTO timeseries_indices (index_name) VALUES ($1) ON CONFLICT DO NOTHING', [index]);
      this.shippedTo.add(index);
    }
  }

  /** Creates a concrete index with the store's settings and mappings. */
  async create(index: string): Promise<void> {
    await this.client.indices.create({
      index,
      body: { settings: { number_of_shards: this.settings.shards, number_of_replicas: this.settings.replicas, refresh_interval: '500ms' }, mappings: MAPPINGS as never },
    });
  }

  /**
   * How many documents of an index (DataHub's name) that `query` takes hold one of these entry keys, and
   * how many of those are at or before `endTimeMillis`: the shipped entries that staged entries of the
   * same identity replace, which a count of both places would count twice. In requests of up to
   * {@link KEYS_PER_REQUEST} keys.
   */
  async countKeys(index: string, keys: string[], query: { filter?: unknown[]; must_not?: unknown[] }, endTimeMillis = Infinity): Promise<{ total: number; old: number }> {
    const out = { total: 0, old: 0 };
    for (let from = 0; from < keys.length; from += KEYS_PER_REQUEST) {
      const filter = [...(query.filter ?? []), { terms: { entryKey: keys.slice(from, from + KEYS_PER_REQUEST) } }];
      const res = await os(() =>
        this.client.search({
          index: this.alias(index),
          ignore_unavailable: true,
          body: {
            size: 0,
            track_total_hits: true,
            query: { bool: { filter, must_not: query.must_not ?? [] } },
            ...(endTimeMillis === Infinity ? {} : { aggs: { old: { filter: { range: { timestampMillis: { lte: endTimeMillis } } } } } }),
          } as never,
        }, { requestTimeout: READ_TIMEOUT_MS }),
      );
      const total = res.body.hits.total;
      out.total += typeof total === 'number' ? total : (total?.value ?? 0);
      out.old += endTimeMillis === Infinity ? 0 : (res.body.aggregations as { old: { doc_count: number } }).old.doc_count;
    }
    return out;
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
}

/**
 * The `opensearch` search backend: one index per entity type behind an alias named as DataHub names
 * it (`datasetindex_v2`, after `INDEX_PREFIX_` when set), the concrete index `<alias>_<epoch ms>` so
 * that a rebuild can swap the alias. Mappings are strict about what is searched (`dynamic: false`):
 * `urn`, `removed`, the key-aspect fields, the fields of common aspects (fields.ts, ASPECT_FIELDS),
 * and each structured property's field, added as the dispatcher meets it (number → `double`, date →
 * `date`, string/urn/rich_text → `keyword`).
 *
 * Selections go to OpenSearch as query DSL built from the expression as parsed, checked and resolved
 * (fields restricted to the ones above, values typed; opensearchQuery.ts), so both backends read it
 * alike and OpenSearch parses no query string.
 *
 * Every document svc can build is one OpenSearch takes (issue 48): a URN longer than a document id may
 * be gets an id of its hash, and a keyword value longer than a term may be is indexed as its hash (see
 * opensearchDocuments.ts). A document OpenSearch refuses all the same is reported to the dispatcher,
 * which delivers the others and tries that one again later.
 */
import { Client } from '@opensearch-project/opensearch';
import { query, type Db, type Pool } from '../db/pool.ts';
import { SvcError } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import { registry } from '../registry/registry.ts';
import type { AggregateRequest, DocumentRef, FacetBucket, Resolved, SearchBackend, SearchDocument, SearchRequest, Scalar } from './backend.ts';
import { baseFields, type FieldSpec } from './fields.ts';
import { fieldsToDrop, queueRebuild } from './indexRebuild.ts';
import { documentId, LONG_VALUES_FIELD, mappingOf, MAX_INDEX_FIELDS, opensearchSource } from './opensearchDocuments.ts';
import { reachingOpenSearch } from './opensearchErrors.ts';
import { queryDsl } from './opensearchQuery.ts';
import { opensearchStats } from './opensearchStats.ts';

/** The largest bulk request sent (OpenSearch takes 100 MB by default); a larger document goes alone. */
export const MAX_BULK_BYTES = 8 * 1024 * 1024;

/**
 * OpenSearch's refusals of a query as asked (root causes): its limits. A value it cannot read is not
 * among them: svc checks values before it builds the query, so that would be a fault of svc's.
 */
const REFUSED_QUERIES = new Set(['too_many_clauses', 'too_many_nested_clauses', 'too_complex_to_determinize_exception', 'query_shard_exception']);

interface BulkItem {
  status: number;
  error?: { type?: string; reason?: string };
}

export class OpenSearchBackend implements SearchBackend {
  readonly kind = 'opensearch' as const;
  readonly client: Client;

  constructor(
    url: string,
    private readonly index: { prefix: string; shards: number; replicas: number },
    private readonly pool: Pool,
    private readonly log: Logger,
  ) {
    this.client = new Client({ node: url, requestTimeout: 30_000 });
  }

  /** The alias of an entity type's index (`datasetindex_v2`). */
  alias(entityType: string): string {
    return `${this.index.prefix ? `${this.index.prefix}_` : ''}${entityType.toLowerCase()}index_v2`;
  }

  /** The wildcard pattern of every index (and alias) of this deployment. */
  pattern(): string {
    return `${this.index.prefix ? `${this.index.prefix}_` : ''}*index_v2*`;
  }

  /** Creates the missing indices and their aliases, one process at a time (a Postgres advisory lock). */
  async prepare(entityTypes: string[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock(hashtextextended('search:prepare', 0))");
      for (const type of entityTypes) {
        const alias = this.alias(type);
        if ((await this.client.indices.exists({ index: alias })).body) {
          // An index made before the limit was raised takes it now (the setting is dynamic), and one made
          // before long values were hashed, their field.
          await this.client.indices.putSettings({ index: alias, body: { 'index.mapping.total_fields.limit': MAX_INDEX_FIELDS } });
          await this.client.indices.putMapping({ index: alias, body: { properties: mappingOf([{ name: LONG_VALUES_FIELD, type: 'keyword' }]) as never } });
          continue;
        }
        const index = `${alias}_${Date.now()}`;
        await this.createIndex(type, index, []);
        await this.client.indices.putAlias({ index, name: alias });
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended('search:prepare', 0))").catch(() => undefined);
      client.release();
    }
  }

  /** Creates a concrete index of an entity type with the base fields and `fields`. */
  async createIndex(entityType: string, index: string, fields: FieldSpec[]): Promise<void> {
    const spec = registry.entity(entityType);
    await this.client.indices.create({
      index,
      body: {
        // Changes become searchable within half a second (OpenSearch's default is 1 s).
        settings: {
          number_of_shards: this.index.shards,
          number_of_replicas: this.index.replicas,
          refresh_interval: '500ms',
          'mapping.total_fields.limit': MAX_INDEX_FIELDS,
        },
        mappings: { dynamic: false, properties: mappingOf([...baseFields(spec), { name: LONG_VALUES_FIELD, type: 'keyword' }, ...fields]) as never },
      },
    });
  }

  /** Indices being rebuilt (search/indexRebuild.ts), by entity type: they receive every change too. */
  async rebuilds(db: Db = this.pool): Promise<Map<string, string>> {
    const rs = await query<{ entity_type: string; index: string }>(db, 'SELECT entity_type, index FROM search_rebuilds', []);
    return new Map(rs.map((r) => [r.entity_type, r.index]));
  }

  /**
   * Adds the mappings of `fields` to the index of an entity type (and to the one being built for it,
   * each on its own). A field the index maps with another type (a property hard-deleted and created
   * again with another value type) cannot be changed in place: the index is rebuilt with the mappings
   * it must have, as system-update would (a task of `/api/tasks`, see indexRebuild.ts). Until its alias
   * swaps, the old index does not take values of the new type.
   */
  async ensureFields(entityType: string, fields: FieldSpec[]): Promise<void> {
    const rebuilding = (await this.rebuilds()).get(entityType);
    let refused = false;
    for (const index of [this.alias(entityType), ...(rebuilding ? [rebuilding] : [])]) {
      try {
        await this.client.indices.putMapping({ index, body: { properties: mappingOf(fields) as never } });
      } catch (err) {
        const e = err as { meta?: { statusCode?: number; body?: unknown } };
        if (e.meta?.statusCode !== 400) throw err;
        // OpenSearch's reason is logged as it is (it may be another, such as a limit of the index).
        opensearchStats.mappingConflicts++;
        refused = true;
        const reason = (e.meta.body as { error?: { reason?: string } } | undefined)?.error?.reason;
        this.log.warn({ entityType, index, fields, error: e.meta.body }, `a search field could not be mapped (${reason ?? 'no reason given'})`);
      }
    }
    if (!refused) return;
    // Only a rebuild that changes something is queued: not for a limit of the index, and not again once
    // the index maps what it must.
    const drop = await fieldsToDrop(this.pool, this, entityType);
    if (drop.length === 0) return;
    const task = await queueRebuild(this.pool, this, entityType);
    this.log.warn({ entityType, task, drop }, `the index maps fields with another type than their properties now: index rebuild queued, follow it at /api/tasks/${task}`);
  }

  /**
   * Applies documents in bulk requests of at most {@link MAX_BULK_BYTES}. An item OpenSearch refuses
   * (a value its mapping does not take, …) is its entity's refusal; a 429 (OpenSearch overloaded) fails
   * the whole, to be tried again after a pause.
   */
  async apply(docs: SearchDocument[], gone: DocumentRef[], tx: Db): Promise<Map<string, string>> {
    const refused = new Map<string, string>();
    if (docs.length === 0 && gone.length === 0) return refused;
    const rebuilding = await this.rebuilds(tx);
    const indices = (type: string) => [this.alias(type), ...(rebuilding.has(type) ? [rebuilding.get(type)!] : [])];
    // Each action with its lines, as sent.
    const actions: { urn: string; kind: 'index' | 'delete'; lines: string[]; bytes: number }[] = [];
    const add = (urn: string, kind: 'index' | 'delete', lines: string[]) => actions.push({ urn, kind, lines, bytes: lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) });
    for (const d of docs) {
      const source = JSON.stringify(opensearchSource(d));
      for (const index of indices(d.entityType)) add(d.urn, 'index', [JSON.stringify({ index: { _index: index, _id: documentId(d.urn) } }), source]);
    }
    for (const g of gone) for (const index of indices(g.entityType)) add(g.urn, 'delete', [JSON.stringify({ delete: { _index: index, _id: documentId(g.urn) } })]);
    for (let start = 0; start < actions.length; ) {
      let end = start + 1;
      for (let bytes = actions[start]!.bytes; end < actions.length && bytes + actions[end]!.bytes <= MAX_BULK_BYTES; end++) bytes += actions[end]!.bytes;
      const chunk = actions.slice(start, end);
      start = end;
      const res = await this.client.bulk({ body: chunk.flatMap((a) => a.lines) as never });
      if (!res.body.errors) continue;
      (res.body.items as Record<string, BulkItem>[]).forEach((item, i) => {
        const r = Object.values(item)[0]!;
        const action = chunk[i]!;
        if (r.status < 300 || (action.kind === 'delete' && r.status === 404)) return;
        if (r.status === 429) throw new SvcError('UNAVAILABLE', `OpenSearch is overloaded (429): ${r.error?.reason ?? ''}`);
        opensearchStats.rejected++;
        refused.set(action.urn, `OpenSearch ${r.status} ${r.error?.type ?? ''}: ${r.error?.reason ?? ''}`);
      });
    }
    return refused;
  }

  /** The structured-property fields the index of an entity type maps now, with their types. */
  async mappedPropertyFields(entityType: string): Promise<Map<string, string>> {
    const { body } = await this.client.indices.getMapping({ index: this.alias(entityType) });
    const out = new Map<string, string>();
    const walk = (props: Record<string, { type?: string; properties?: Record<string, unknown> }>, path: string) => {
      for (const [name, m] of Object.entries(props)) {
        const full = path ? `${path}.${name}` : name;
        if (m.properties) walk(m.properties as never, full);
        else if (full.startsWith('structuredProperties.') && m.type) out.set(full, m.type);
      }
    };
    for (const index of Object.values(body as Record<string, { mappings: { properties?: Record<string, never> } }>)) walk(index.mappings.properties ?? {}, '');
    return out;
  }

  /** The concrete indices behind an entity type's alias. */
  async indicesBehind(entityType: string): Promise<string[]> {
    const res = await this.client.indices.getAlias({ name: this.alias(entityType) }, { ignore: [404] });
    return res.statusCode === 404 ? [] : Object.keys(res.body as object).sort();
  }

  async indexExists(index: string): Promise<boolean> {
    return (await this.client.indices.exists({ index })).body;
  }

  /** Points an entity type's alias at `index` alone, in one atomic change, then deletes its other concrete indices. */
  async swapAlias(entityType: string, index: string): Promise<void> {
    const alias = this.alias(entityType);
    const behind = await this.indicesBehind(entityType);
    if (behind.length !== 1 || behind[0] !== index) {
      await this.client.indices.updateAliases({
        body: { actions: [...behind.filter((i) => i !== index).map((i) => ({ remove: { index: i, alias } })), { add: { index, alias } }] },
      });
    }
    const { body } = await this.client.cat.indices({ index: `${alias}_*`, format: 'json', h: 'index' } as never);
    const old = (body as unknown as { index: string }[]).map((r) => r.index).filter((i) => i !== index && /_\d+$/.test(i));
    if (old.length) await this.client.indices.delete({ index: old.join(','), ignore_unavailable: true });
  }

  async refreshIndex(index: string): Promise<void> {
    await this.client.indices.refresh({ index });
  }

  async refresh(): Promise<void> {
    await this.client.indices.refresh({ index: this.pattern(), allow_no_indices: true });
  }

  private body(req: { where: Resolved; includeRemoved: boolean }): Record<string, unknown> {
    const filter: unknown[] = [queryDsl(req.where)];
    if (!req.includeRemoved) filter.push({ term: { removed: false } });
    return { bool: { filter } };
  }

  async search(req: SearchRequest): Promise<{ urns: string[]; total?: number }> {
    const res = await this.run({
      index: req.entityTypes.map((t) => this.alias(t)).join(','),
      ignore_unavailable: true,
      body: {
        query: this.body(req),
        sort: [{ urn: { order: req.descending ? 'desc' : 'asc' } }],
        size: req.limit,
        _source: false,
        track_total_hits: req.total,
        ...(req.after === undefined ? {} : { search_after: [req.after] }),
      } as never,
    });
    const hits = res.body.hits;
    const total = req.total ? (typeof hits.total === 'number' ? hits.total : (hits.total?.value ?? 0)) : undefined;
    // The URN is the sort value (a document's id may be its hash, see documentId).
    return { urns: hits.hits.map((h) => String(h.sort![0])), total };
  }

  async aggregate(req: AggregateRequest): Promise<FacetBucket[][]> {
    const aggs = Object.fromEntries(
      req.facets.map((f, i) => [`f${i}`, { terms: { field: f.name, size: req.maxValues, order: [{ _count: 'desc' }, { _key: 'asc' }] } }]),
    );
    const res = await this.run({
      index: req.entityTypes.map((t) => this.alias(t)).join(','),
      ignore_unavailable: true,
      body: { query: this.body(req), size: 0, aggs } as never,
    });
    const out = res.body.aggregations as Record<string, { buckets: { key: Scalar; doc_count: number }[] }> | undefined;
    return req.facets.map((_, i) => (out?.[`f${i}`]?.buckets ?? []).map((b) => ({ value: b.key, count: b.doc_count })));
  }

  /**
   * A search; a query OpenSearch will not run as asked (more clauses than it takes, a wildcard too
   * complex for it, a value it cannot read) is the caller's to simplify: VALIDATION with its reason.
   */
  private async run(params: Parameters<Client['search']>[0]) {
    try {
      return await reachingOpenSearch(() => this.client.search(params));
    } catch (err) {
      const body = (err as { meta?: { body?: { error?: { root_cause?: { type?: string; reason?: string }[] } } } }).meta?.body;
      const cause = body?.error?.root_cause?.find((c) => c.type !== undefined && REFUSED_QUERIES.has(c.type));
      if (!cause) throw err;
      throw SvcError.validation([`The search is more than the index can run (${cause.type}: ${cause.reason ?? ''}): use fewer terms or conditions, or simpler wildcards`]);
    }
  }

  async reachable(): Promise<boolean> {
    try {
      await this.client.cluster.health({}, { requestTimeout: 2_000 });
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

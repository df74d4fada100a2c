/**
 * The `postgres` search backend: one row per document in `search_documents` (the entity and its soft
 * delete) and one row per value in `search_values` (their tables: db/migrations/V001__baseline.sql), in
 * the catalog's own database. A
 * filter on a field is a semi-join on the value rows of that field (btree on (entity type, field, the
 * value's first 256 characters), search_values_by_string_prefix, or (entity type, field, number, urn));
 * pages walk the documents in URN order; facet counts group the value rows of the matching documents.
 */
import { query, type Db, type Pool } from '../db/pool.ts';
import type { AggregateRequest, DocumentRef, FacetBucket, Resolved, SearchBackend, SearchDocument, SearchRequest } from './backend.ts';
import type { PatternPart } from './expr.ts';
import { dateMillis, type FieldSpec } from './fields.ts';

/** Builds the parameters of one statement. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown, cast = ''): string {
    this.values.push(v);
    return `$${this.values.length}${cast}`;
  }
}

/** `LIKE` pattern of a wildcard pattern (`*` → `%`, `?` → `_`, the rest escaped). */
export function likePattern(pattern: PatternPart[]): string {
  return pattern.map((p) => (typeof p === 'string' ? p.replace(/[\\%_]/g, '\\$&') : p.wildcard === '*' ? '%' : '_')).join('');
}

const isNumeric = (f: FieldSpec) => f.type === 'double' || f.type === 'date';

/**
 * Characters of a string value that its index entry holds (search_values_by_string_prefix): a btree
 * entry holds at most 2,704 bytes, and values may be megabytes long. A value shorter than this is its
 * own key, so a comparison with it on the key is exact; a longer one is compared on its key, then in
 * full.
 */
export const VALUE_KEY_CHARS = 256;
/** The indexed key of a value row, as the index expression is written. */
const KEY = `left(v.str_value, ${VALUE_KEY_CHARS})`;

/** Whether `s` is shorter than {@link VALUE_KEY_CHARS} characters (code points, as Postgres counts them). */
function keyIsValue(s: string): boolean {
  if (s.length < VALUE_KEY_CHARS) return true;
  let n = 0;
  for (const _ of s) if (++n >= VALUE_KEY_CHARS) return false;
  return true;
}

/** The first {@link VALUE_KEY_CHARS} characters of `s`: Postgres' `left(s, 256)`. */
export function valueKeyOf(s: string): string {
  if (s.length <= VALUE_KEY_CHARS) return s;
  let out = '';
  let n = 0;
  for (const ch of s) {
    if (n++ === VALUE_KEY_CHARS) break;
    out += ch;
  }
  return out;
}

/** One row of `search_values`. */
interface ValueRow {
  entityType: string;
  urn: string;
  field: string;
  str: string;
  num: number | null;
}

/** What tells two value rows apart. */
const rowKey = (r: ValueRow) => `${r.entityType}\0${r.urn}\0${r.field}\0${r.str}\0${r.num ?? ''}`;

function condition(e: Resolved, p: Params, types: string): string {
  switch (e.kind) {
    case 'all':
      return 'true';
    case 'none':
      return 'false';
    case 'and':
    case 'or':
      return `(${e.of.map((x) => condition(x, p, types)).join(e.kind === 'and' ? ' AND ' : ' OR ')})`;
    case 'not':
      return `NOT ${condition(e.of, p, types)}`;
    default:
      break;
  }
  const f = e.field;
  // urn and removed are columns of the document.
  if (f.name === 'urn' || f.name === 'removed') {
    const col = `d.${f.name}`;
    const cast = f.name === 'urn' ? '::text[]' : '::boolean[]';
    switch (e.kind) {
      case 'exists':
        return 'true';
      case 'terms':
        return `${col} = ANY(${p.add(e.values, cast)})`;
      case 'range':
        return bounds(col, e, p);
      case 'wildcard':
        return `${col} LIKE ${p.add(likePattern(e.pattern))}`;
    }
  }
  const numeric = isNumeric(f);
  let test: string;
  switch (e.kind) {
    case 'exists':
      test = 'true';
      break;
    case 'terms':
      test = numeric ? `v.num_value = ANY(${p.add(e.values, '::float8[]')})` : stringTerms(e.values.map(String), p);
      break;
    case 'range':
      test = numeric ? bounds('v.num_value', e, p) : stringBounds(e, p);
      break;
    case 'wildcard':
      test = stringPattern(e.pattern, p);
      break;
  }
  return `d.urn IN (SELECT v.urn FROM search_values v WHERE v.entity_type ${types} AND v.field = ${p.add(f.name)} AND ${test})`;
}

/** Values equal to one of `values`: on the key, and in full when a value is longer than its key. */
function stringTerms(values: string[], p: Params): string {
  const onKey = `${KEY} = ANY(${p.add([...new Set(values.map(valueKeyOf))], '::text[]')})`;
  return values.every(keyIsValue) ? onKey : `${onKey} AND v.str_value = ANY(${p.add(values, '::text[]')})`;
}

/**
 * Values within bounds. A bound shorter than the key compares on the key alone with the same answer
 * (collation "C": a key is a prefix of its value, and no prefix sorts after its value); a longer one
 * narrows on its own key (inclusively) and compares in full.
 */
function stringBounds(e: { min?: { value: unknown; inclusive: boolean }; max?: { value: unknown; inclusive: boolean } }, p: Params): string {
  const parts: string[] = [];
  const bound = (b: { value: unknown; inclusive: boolean }, op: '>' | '<') => {
    const value = String(b.value);
    const cmp = `${op}${b.inclusive ? '=' : ''}`;
    if (keyIsValue(value)) parts.push(`${KEY} ${cmp} ${p.add(value)}`);
    else parts.push(`${KEY} ${op}= ${p.add(valueKeyOf(value))}`, `v.str_value ${cmp} ${p.add(value)}`);
  };
  if (e.min) bound(e.min, '>');
  if (e.max) bound(e.max, '<');
  return parts.length ? `(${parts.join(' AND ')})` : 'true';
}

/**
 * Values matching a wildcard pattern: its literal start narrows on the key (an index range, as a
 * prefix `LIKE` is); the whole pattern is compared in full unless it is that start and `*`, with the
 * start no longer than the key.
 */
function stringPattern(pattern: PatternPart[], p: Params): string {
  const literal: string[] = [];
  for (const part of pattern) {
    if (typeof part !== 'string') break;
    literal.push(part);
  }
  const start = literal.join('');
  const full = () => `v.str_value LIKE ${p.add(likePattern(pattern))}`;
  if (start === '') return full();
  const onKey = `${KEY} LIKE ${p.add(likePattern([valueKeyOf(start), { wildcard: '*' }]))}`;
  const prefixOnly = pattern.length === literal.length + 1 && (pattern[literal.length] as { wildcard: string }).wildcard === '*';
  return prefixOnly && valueKeyOf(start) === start ? onKey : `${onKey} AND ${full()}`;
}

function bounds(col: string, e: { min?: { value: unknown; inclusive: boolean }; max?: { value: unknown; inclusive: boolean } }, p: Params): string {
  const parts: string[] = [];
  if (e.min) parts.push(`${col} ${e.min.inclusive ? '>=' : '>'} ${p.add(e.min.value)}`);
  if (e.max) parts.push(`${col} ${e.max.inclusive ? '<=' : '<'} ${p.add(e.max.value)}`);
  return parts.length ? `(${parts.join(' AND ')})` : 'true';
}

/**
 * The SQL of a request's selection of documents (alias `d`), with its parameters. One entity type is
 * compared with `=`, not `= ANY(…)`: only then does the planner walk the documents and the value rows
 * in URN order and stop at the page's end, instead of joining every match and sorting.
 */
function selection(req: { entityTypes: string[]; where: Resolved; includeRemoved: boolean }, p: Params): string {
  const types = req.entityTypes.length === 1 ? `= ${p.add(req.entityTypes[0])}` : `= ANY(${p.add(req.entityTypes, '::text[]')})`;
  return `d.entity_type ${types}${req.includeRemoved ? '' : ' AND NOT d.removed'} AND ${condition(req.where, p, types)}`;
}

/** The fewest documents added before the planner's statistics are refreshed (see PostgresBackend.delivered). */
export const ANALYZE_AFTER = 500;

export class PostgresBackend implements SearchBackend {
  readonly kind = 'postgres' as const;
  /** Document rows written (new, or their soft delete changed) since this process last refreshed the statistics, and how many there were then. */
  private addedSinceAnalyze = 0;
  private documentsAtAnalyze = 0;

  constructor(private readonly pool: Pool) {}

  /**
   * Refreshes the planner's statistics of the search tables (`ANALYZE`) once the document rows written
   * since the last refresh (new entities, or a soft delete changed) number as many as the table held
   * then, and at least {@link ANALYZE_AFTER}. Autovacuum does it too, but only on its round (a minute
   * apart by default): after the first load of a catalog, searches were planned on the statistics of
   * empty tables until then, 14-20 ms a filtered page of 10 over 5,000 datasets against 2-5 ms once
   * analysed, for about 80 s. While a catalog grows this refreshes at each doubling. Updates of values
   * alone are left to autovacuum: they change no table's size, and an ANALYZE after each table's worth
   * of them cost the writes beside it (195 ms at 13,000 documents, once every 13,000 updates). A failure
   * is left to the next step's try: the documents are committed already.
   */
  async delivered(): Promise<void> {
    if (this.addedSinceAnalyze < Math.max(ANALYZE_AFTER, this.documentsAtAnalyze)) return;
    this.addedSinceAnalyze = 0;
    await query(this.pool, 'ANALYZE search_documents, search_values', []);
    const [r] = await query<{ n: number }>(this.pool, "SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'search_documents'::regclass", []);
    this.documentsAtAnalyze = Math.max(0, r?.n ?? 0);
  }

  async prepare(): Promise<void> {}

  async ensureFields(): Promise<void> {}

  /**
   * Makes the documents and value rows of these entities those given, writing only what changed: a
   * write of one structured property changes one value row, not every key field's row again. One
   * statement compares the rows wanted with those stored, deletes the rows that went and inserts the
   * new ones; reads and deletes go by URN (the index by URN, whatever the planner knows of the table).
   */
  async apply(docs: SearchDocument[], gone: DocumentRef[], tx: Db): Promise<Map<string, string>> {
    const urns = [...docs.map((d) => d.urn), ...gone.map((g) => g.urn)];
    if (urns.length === 0) return new Map();
    const wanted = new Map<string, ValueRow>();
    for (const d of docs) {
      for (const [field, { type, values }] of d.fields) {
        for (const v of values) {
          const row: ValueRow = { entityType: d.entityType, urn: d.urn, field, str: String(v), num: typeof v === 'number' ? v : type === 'date' ? (dateMillis(v) ?? null) : null };
          wanted.set(rowKey(row), row);
        }
      }
    }
    const rows = [...wanted.values()];
    // The stored rows are found by one probe of the index by URN per entity (the fence keeps the
    // subquery a probe), and deleted by their row ids: as `urn = ANY`, a step's few hundred URNs were
    // planned as a scan of the whole table, each row compared with every URN, while the table was
    // small enough for the planner to price that lower (4.5 ms a step at 12,000 values, against 0.2 ms
    // through the index). The delete probes again rather than reading `stored`: a CTE read twice is
    // materialised, and the delete by row id was then planned as a hash join over the whole table.
    await query(
      tx,
      `WITH wanted AS (
         SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::float8[]) AS w(entity_type, urn, field, str_value, num_value)
       ), stored AS (
         SELECT v.entity_type, v.urn, v.field, v.str_value, v.num_value
           FROM unnest($1::text[]) AS u(urn)
          CROSS JOIN LATERAL (SELECT * FROM search_values s WHERE s.urn = u.urn OFFSET 0) v
       ), dropped AS (
         DELETE FROM search_values v
          USING (SELECT s.ctid FROM unnest($1::text[]) AS u(urn)
                  CROSS JOIN LATERAL (SELECT ctid, * FROM search_values s WHERE s.urn = u.urn OFFSET 0) s
                  WHERE NOT EXISTS (SELECT FROM wanted w
                                     WHERE (w.entity_type, w.urn, w.field, w.str_value) = (s.entity_type, s.urn, s.field, s.str_value)
                                       AND w.num_value IS NOT DISTINCT FROM s.num_value)) found
          WHERE v.ctid = found.ctid
       )
       INSERT INTO search_values (entity_type, urn, field, str_value, num_value)
       SELECT * FROM wanted w
        WHERE NOT EXISTS (SELECT FROM stored s
                           WHERE (w.entity_type, w.urn, w.field, w.str_value) = (s.entity_type, s.urn, s.field, s.str_value)
                             AND w.num_value IS NOT DISTINCT FROM s.num_value)`,
      [urns, rows.map((r) => r.entityType), rows.map((r) => r.urn), rows.map((r) => r.field), rows.map((r) => r.str), rows.map((r) => r.num)],
    );
    if (gone.length) {
      // By the primary key (entity type, URN): a delete by URN alone would read the whole table.
      await query(tx, 'DELETE FROM search_documents WHERE (entity_type, urn) IN (SELECT * FROM unnest($1::text[], $2::text[]))', [gone.map((g) => g.entityType), gone.map((g) => g.urn)]);
    }
    if (docs.length) {
      // A document row is the entity's existence and soft delete (its values are the value rows):
      // written only when new or when its soft delete changed. Counted for the statistics (see
      // delivered); a step rolled back after this counts too, which only brings an ANALYZE forward.
      const written = await query<{ urn: string }>(
        tx,
        `INSERT INTO search_documents (entity_type, urn, removed) SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[])
           ON CONFLICT (entity_type, urn) DO UPDATE SET removed = excluded.removed WHERE search_documents.removed <> excluded.removed
         RETURNING urn`,
        [docs.map((d) => d.entityType), docs.map((d) => d.urn), docs.map((d) => d.removed)],
      );
      this.addedSinceAnalyze += written.length;
    }
    // Postgres refuses a statement, not a row: a refused document fails the whole (see outbox.ts).
    return new Map();
  }

  async refresh(): Promise<void> {}

  async search(req: SearchRequest): Promise<{ urns: string[]; total?: number }> {
    const p = new Params();
    const where = selection(req, p);
    const total = req.total ? Number((await query<{ n: string }>(this.pool, `SELECT count(*) AS n FROM search_documents d WHERE ${where}`, p.values))[0]!.n) : undefined;
    const after = req.after === undefined ? '' : ` AND d.urn ${req.descending ? '<' : '>'} ${p.add(req.after)}`;
    const rows = await query<{ urn: string }>(
      this.pool,
      `SELECT d.urn FROM search_documents d WHERE ${where}${after} ORDER BY d.urn ${req.descending ? 'DESC' : 'ASC'} LIMIT ${p.add(req.limit)}`,
      p.values,
    );
    return { urns: rows.map((r) => r.urn), total };
  }

  async aggregate(req: AggregateRequest): Promise<FacetBucket[][]> {
    return Promise.all(
      req.facets.map(async (facet) => {
        const p = new Params();
        const where = selection(req, p);
        const col = isNumeric(facet) ? 'v.num_value' : 'v.str_value';
        const rows = await query<{ value: string | number; n: string }>(
          this.pool,
          `SELECT ${col} AS value, count(*) AS n FROM search_values v JOIN search_documents d ON d.entity_type = v.entity_type AND d.urn = v.urn
            WHERE v.field = ${p.add(facet.name)} AND ${col} IS NOT NULL AND ${where}
            GROUP BY ${col} ORDER BY n DESC, ${col} ASC LIMIT ${p.add(req.maxValues)}`,
          p.values,
        );
        return rows.map((r) => ({ value: r.value, count: Number(r.n) }));
      }),
    );
  }

  async reachable(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

/**
 * SQL over the `aspects` and `timeseries_entries` tables: reads, deletes, scrolls, what a writer reads
 * first (the write itself is writeStatement.ts). Plain functions taking a pool or a transaction's
 * client, so callers decide the transaction boundaries.
 */
import { createHash } from 'node:crypto';
import { entryKey } from '../timeseries/entryKey.ts';
import { timeseriesIndexName } from '../timeseries/partitions.ts';
import { query as q, type Db } from '../db/pool.ts';
import { removedSql } from './softDelete.ts';

export interface StoredAspect {
  urn: string;
  aspect: string;
  /** The row's place: 0 for the latest, n for the n-th version kept in history. */
  version: number;
  value: unknown;
  systemMetadata: Record<string, unknown>;
  createdOn: Date;
  createdBy: string;
  /**
   * The number of this version of the aspect (1 for its first, one more for each change: what
   * If-Version-Match compares), when known: on a write's result, and on reads that ask for it
   * ({@link versionNumbers}). Time series entries have none.
   */
  number?: number;
}

interface Row {
  urn: string;
  aspect: string;
  version: number;
  metadata: unknown;
  system_metadata: Record<string, unknown>;
  created_on: Date;
  created_by: string;
}

const COLUMNS = 'urn, aspect, version, metadata, system_metadata, created_on, created_by';

function toAspect(r: Row): StoredAspect {
  return {
    urn: r.urn,
    aspect: r.aspect,
    version: r.version,
    value: r.metadata,
    systemMetadata: r.system_metadata,
    createdOn: r.created_on,
    createdBy: r.created_by,
  };
}

/**
 * Latest versions of the given aspects (all aspects when `aspects` is undefined) of the given URNs, each
 * found by key (db/migrations/R__svc_latest_rows.sql).
 */
export async function latestAspects(db: Db, urns: string[], aspects?: string[]): Promise<StoredAspect[]> {
  if (urns.length === 0) return [];
  const rows = aspects
    ? await q<Row>(db, `SELECT ${COLUMNS} FROM svc_latest_rows($1, $2)`, [urns, aspects], 'svc_latest_some')
    : await q<Row>(db, `SELECT ${COLUMNS} FROM svc_latest_rows($1)`, [urns], 'svc_latest_all');
  return rows.map(toAspect);
}

const statementNames = new Map<string, string>();
/** A prepared statement's name for a statement built at run time (the same text, the same name). */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) statementNames.set(sql, (name = `svc_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`));
  return name;
}

/** A row of a read context (see ShowRule.sql in aspectHooks.ts), with the index of the query it came from. */
export interface ContextRow {
  query: number;
  kind: string;
  a: string;
  b: string;
  c: string | null;
}

/**
 * Latest versions of aspects as {@link latestAspects} reads them, and in the same statement the rows
 * of each of `contexts` (SQL over `read`, the rows read; see ShowRule.sql in aspectHooks.ts).
 */
export async function latestAspectsWith(db: Db, urns: string[], aspects: string[] | undefined, contexts: string[]): Promise<{ aspects: StoredAspect[]; context: ContextRow[] }> {
  if (urns.length === 0) return { aspects: [], context: [] };
  const sql = `WITH read AS (SELECT ${COLUMNS} FROM ${aspects ? 'svc_latest_rows($1, $2)' : 'svc_latest_rows($1)'})
    SELECT ${COLUMNS}, NULL::int AS ctx_query, NULL::text AS ctx_kind, NULL::text AS ctx_a, NULL::text AS ctx_b, NULL::text AS ctx_c FROM read
    ${contexts.map((c, i) => `UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${i}, kind, a, b, c FROM (${c}) ctx${i}`).join('\n    ')}`;
  const rs = await q<Row & { ctx_query: number | null; ctx_kind: string; ctx_a: string; ctx_b: string; ctx_c: string | null }>(
    db,
    sql,
    aspects ? [urns, aspects] : [urns],
    statementName(sql),
  );
  const out = { aspects: [] as StoredAspect[], context: [] as ContextRow[] };
  for (const r of rs) {
    if (r.ctx_query === null) out.aspects.push(toAspect(r));
    else out.context.push({ query: r.ctx_query, kind: r.ctx_kind, a: r.ctx_a, b: r.ctx_b, c: r.ctx_c });
  }
  return out;
}

/** One version of one aspect (0 = latest). */
export async function aspectVersion(db: Db, urn: string, aspect: string, version: number): Promise<StoredAspect | undefined> {
  const rows = await q<Row>(db, `SELECT ${COLUMNS} FROM aspects WHERE urn = $1 AND aspect = $2 AND version = $3`, [urn, aspect, version], 'svc_aspect_version');
  return rows[0] && toAspect(rows[0]);
}

/** An aspect's versions over a time window, oldest first (see {@link aspectHistory}). */
export interface AspectHistory {
  /** The version in force before the first of `changes`; undefined when there was none (the aspect was created in the window). */
  before: StoredAspect | undefined;
  /** The versions written in the window, oldest first, each with its version number ({@link StoredAspect.number}). */
  changes: StoredAspect[];
}

/**
 * The versions of the given aspects of one entity written from `from` (included) until `to` (not), the
 * newest `limit` of each, with the version in force before the oldest of them; aspects with none in
 * the window are left out. Versions are in the order they were written (history 1 .. n-1, then the
 * latest, 0), which their creation times follow.
 */
export async function aspectHistory(db: Db, urn: string, aspects: string[], from: Date, to: Date, limit: number): Promise<Map<string, AspectHistory>> {
  const rows = await q<Row & { n: string; in_window: boolean; number: string }>(
    db,
    `WITH ranked AS (
       SELECT ${COLUMNS}, created_on >= $3 AS in_window,
              row_number() OVER w AS n,
              count(*) FILTER (WHERE created_on >= $3) OVER (PARTITION BY aspect) AS changes,
              max(version) OVER (PARTITION BY aspect) + 1 AS latest_number
         FROM aspects WHERE urn = $1 AND aspect = ANY($2::text[]) AND created_on < $4
       WINDOW w AS (PARTITION BY aspect ORDER BY CASE WHEN version = 0 THEN 9223372036854775807 ELSE version END DESC)
     )
     SELECT ${COLUMNS}, n, in_window AND n <= $5 AS in_window, CASE WHEN version = 0 THEN latest_number ELSE version END AS number
       FROM ranked WHERE changes > 0 AND n <= least(changes, $5) + 1
      ORDER BY aspect, n DESC`,
    [urn, aspects, from, to, limit],
    'svc_aspect_history',
  );
  const out = new Map<string, AspectHistory>();
  for (const r of rows) {
    let history = out.get(r.aspect);
    if (!history) out.set(r.aspect, (history = { before: undefined, changes: [] }));
    const aspect = { ...toAspect(r), number: Number(r.number) };
    if (r.in_window) history.changes.push(aspect);
    else history.before = aspect;
  }
  return out;
}

/** What a writer reads before a checked write: the latest row and its token. */
export interface ReadForWrite {
  previous: StoredAspect | undefined;
  /** The row as `AspectWrite.expected` (writeStatement.ts) names it: `<metadata> <system_metadata>` as stored (texts); null when absent. */
  token: string | null;
  /** The row's metadata as stored (its text), where the reader has it. */
  text?: string;
}

/** Reads, without locking, what a checked write of `aspect` relies on (see {@link ReadForWrite}). */
export async function readForWrite(db: Db, urn: string, aspect: string): Promise<ReadForWrite> {
  const rows = await q<Row & { token: string }>(
    db,
    `SELECT ${COLUMNS}, metadata::text || ' ' || system_metadata::text AS token FROM aspects WHERE urn = $1 AND aspect = $2 AND version = 0`,
    [urn, aspect],
    'svc_read_for_write',
  );
  return { previous: rows[0] && toAspect(rows[0]), token: rows[0]?.token ?? null };
}

/**
 * The latest row of an aspect as {@link readForWrite} names it (`token`; null: absent) and its version
 * number: 1 for its first value, one more for each change (history holds 1 .. n-1, see
 * db/migrations/V001__baseline.sql); -1 when absent, as DataHub numbers an aspect for If-Version-Match.
 */
export async function aspectVersionNumber(db: Db, urn: string, aspect: string): Promise<{ token: string | null; version: number }> {
  const rows = await q<{ token: string | null; latest: number | null }>(
    db,
    `SELECT (SELECT metadata::text || ' ' || system_metadata::text FROM aspects WHERE urn = $1 AND aspect = $2 AND version = 0) AS token,
            (SELECT max(version)::int + 1 FROM aspects WHERE urn = $1 AND aspect = $2) AS latest`,
    [urn, aspect],
    'svc_aspect_version_number',
  );
  const { token, latest } = rows[0]!;
  return { token, version: token === null || latest === null ? -1 : latest };
}

/**
 * The version numbers of aspects as read: a history row's is its place; the latest's is one more than
 * the history holds (one query for all the latest).
 */
export async function versionNumbers(db: Db, aspects: StoredAspect[]): Promise<void> {
  const latest = aspects.filter((a) => a.version === 0);
  for (const a of aspects) if (a.version > 0) a.number = a.version;
  if (latest.length === 0) return;
  const rows = await q<{ urn: string; aspect: string; n: number }>(
    db,
    `SELECT k.urn, k.aspect, (SELECT max(version)::int + 1 FROM aspects a WHERE a.urn = k.urn AND a.aspect = k.aspect) AS n
       FROM unnest($1::text[], $2::text[]) AS k(urn, aspect)`,
    [latest.map((a) => a.urn), latest.map((a) => a.aspect)],
    'svc_version_numbers',
  );
  const numbers = new Map(rows.map((r) => [`${r.urn}\u0000${r.aspect}`, r.n]));
  for (const a of latest) {
    const n = numbers.get(`${a.urn}\u0000${a.aspect}`);
    if (n !== undefined && n !== null) a.number = n;
  }
}

/** Takes the entity's write lock and reads the latest value of one aspect, in one round trip. */
export async function lockAndRead(tx: Db, urn: string, aspect: string): Promise<StoredAspect | undefined> {
  const rows = await q<Row>(tx, `SELECT ${COLUMNS} FROM svc_lock_and_read($1, $2)`, [urn, aspect], 'svc_lock_and_read');
  return rows[0] && toAspect(rows[0]);
}

/** Deletes every version of one aspect; returns the number of rows removed. */
export async function deleteAspectRows(db: Db, urn: string, aspect: string): Promise<number> {
  const rows = await q<{ n: number }>(
    db,
    'WITH d AS (DELETE FROM aspects WHERE urn = $1 AND aspect = $2 RETURNING 1) SELECT count(*)::int AS n FROM d',
    [urn, aspect],
  );
  return rows[0]!.n;
}

/** Deletes every aspect (all versions) and every time series entry of an entity; returns the names of the aspects it had. */
export async function deleteEntityRows(db: Db, urn: string): Promise<string[]> {
  const rows = await q<{ aspect: string }>(
    db,
    `WITH a AS (DELETE FROM aspects WHERE urn = $1 RETURNING aspect),
          t AS (DELETE FROM timeseries_entries WHERE urn = $1 RETURNING aspect)
     SELECT DISTINCT aspect FROM (SELECT aspect FROM a UNION ALL SELECT aspect FROM t) d ORDER BY aspect`,
    [urn],
  );
  return rows.map((r) => r.aspect);
}

export interface ScrollPage {
  urns: string[];
  /** The last URN of the page when more may follow. */
  next: string | undefined;
}

/**
 * The latest rows of the named aspects with a string value that is `urn`, in URN order: the candidates
 * of a search for references or lineage, which the caller checks. Found through the index of the URNs
 * such rows name (R__svc_mentions.sql): the aspects must be among those it lists.
 */
export async function latestMentioning(db: Db, aspects: string[], urn: string): Promise<{ urn: string; aspect: string }[]> {
  return q<{ urn: string; aspect: string }>(
    db,
    `SELECT urn, aspect FROM aspects
      WHERE aspect = ANY($1) AND version = 0 AND svc_mentioning_aspect(aspect) AND svc_mentioned_urns(metadata) @> ARRAY[$2::text]
      ORDER BY urn, aspect`,
    [aspects, urn],
  );
}

/**
 * One page of the URNs of an entity type (those with a latest key aspect) in URN order, after `after`.
 * Soft-deleted entities (status.removed = true) are left out unless `includeSoftDeleted`.
 */
export async function scrollUrns(
  db: Db,
  keyAspect: string,
  opts: { after?: string; limit: number; descending: boolean; includeSoftDeleted: boolean },
): Promise<ScrollPage> {
  const cmp = opts.descending ? '<' : '>';
  const order = opts.descending ? 'DESC' : 'ASC';
  const softDelete = opts.includeSoftDeleted
    ? ''
    : `AND NOT EXISTS (SELECT 1 FROM aspects s WHERE s.urn = k.urn AND s.aspect = 'status' AND s.version = 0 AND ${removedSql('s')})`;
  const rows = await q<{ urn: string }>(
    db,
    `SELECT k.urn FROM aspects k
      WHERE k.aspect = $1 AND k.version = 0 AND ($2::text IS NULL OR k.urn ${cmp} $2) ${softDelete}
      ORDER BY k.urn ${order} LIMIT $3`,
    [keyAspect, opts.after ?? null, opts.limit + 1],
  );
  const urns = rows.slice(0, opts.limit).map((r) => r.urn);
  return { urns, next: rows.length > opts.limit ? urns[urns.length - 1] : undefined };
}

/**
 * Writes one time series entry (its partition must exist: see timeseries/partitions.ts). An entry with
 * the identity of a stored one (its key, timeseries/entryKey.ts) replaces it, as
 * DataHub's document of the same id does: its value, metadata and author are the new write's, and so is
 * its id, which orders it as written now (and, in the `opensearch` store, tells a shipping step that
 * read the old value not to take the new one out of the outbox).
 */
export async function insertTimeseries(
  db: Db,
  e: { entityType: string; aspect: string; urn: string; timestampMillis: number; value: Record<string, unknown>; systemMetadata: unknown; actor: string },
): Promise<void> {
  const index = timeseriesIndexName(e.entityType, e.aspect);
  await q(
    db,
    `INSERT INTO timeseries_entries (index_name, entity_type, aspect, urn, timestamp_millis, metadata, system_metadata, created_by, entry_key)
     VALUES ($8, $1, $2, $3, $4, $5, $6, $7, $9)
     ON CONFLICT (index_name, timestamp_millis, entry_key) DO UPDATE
       SET id = EXCLUDED.id, metadata = EXCLUDED.metadata, system_metadata = EXCLUDED.system_metadata,
           created_on = EXCLUDED.created_on, created_by = EXCLUDED.created_by`,
    [e.entityType, e.aspect, e.urn, e.timestampMillis, JSON.stringify(e.value), JSON.stringify(e.systemMetadata), e.actor, index, entryKey(index, e.urn, e.value)],
  );
}

/** The latest entry (by timestampMillis) of each given time series aspect of an entity. */
export async function latestTimeseries(db: Db, urns: string[], aspects: string[]): Promise<StoredAspect[]> {
  if (urns.length === 0 || aspects.length === 0) return [];
  const rows = await q<Row>(
    db,
    `SELECT DISTINCT ON (urn, aspect) urn, aspect, 0 AS version, metadata, system_metadata, created_on, created_by
       FROM timeseries_entries WHERE urn = ANY($1) AND aspect = ANY($2)
      ORDER BY urn, aspect, timestamp_millis DESC, id DESC`,
    [urns, aspects],
  );
  return rows.map(toAspect);
}

/** A span of time, both ends included; an absent end is open. */
export interface TimeRange {
  startTimeMillis?: number;
  endTimeMillis?: number;
}

/** The entries of a time series aspect of an entity within a range ($1 urn, $2 aspect, $3 and $4 the range). */
const IN_RANGE = 'urn = $1 AND aspect = $2 AND timestamp_millis >= coalesce($3::bigint, timestamp_millis) AND timestamp_millis <= coalesce($4::bigint, timestamp_millis)';

/** Deletes the entries of a time series aspect of an entity within `range` (ends included); how many there were. */
export async function deleteTimeseriesRange(db: Db, urn: string, aspect: string, range: TimeRange): Promise<number> {
  const rows = await q<{ n: number }>(
    db,
    `WITH d AS (DELETE FROM timeseries_entries WHERE ${IN_RANGE} RETURNING 1) SELECT count(*)::int AS n FROM d`,
    [urn, aspect, range.startTimeMillis ?? null, range.endTimeMillis ?? null],
  );
  return rows[0]!.n;
}

/** {@link deleteTimeseriesRange}, answering the keys (`entry_key`) of the entries deleted. */
export async function deleteTimeseriesRangeKeys(db: Db, urn: string, aspect: string, range: TimeRange): Promise<string[]> {
  const rows = await q<{ entry_key: string }>(db, `DELETE FROM timeseries_entries WHERE ${IN_RANGE} RETURNING entry_key`, [urn, aspect, range.startTimeMillis ?? null, range.endTimeMillis ?? null]);
  return rows.map((r) => r.entry_key);
}

/** Deletes the latest entry of a time series aspect of an entity (DataHub's DELETE of a timeseries aspect). */
export async function deleteLatestTimeseries(db: Db, urn: string, aspect: string): Promise<number> {
  const rows = await q<{ n: number }>(
    db,
    `WITH latest AS (SELECT timestamp_millis, id FROM timeseries_entries WHERE urn = $1 AND aspect = $2 ORDER BY timestamp_millis DESC, id DESC LIMIT 1),
          d AS (DELETE FROM timeseries_entries t USING latest
                 WHERE t.urn = $1 AND t.aspect = $2 AND t.timestamp_millis = latest.timestamp_millis AND t.id = latest.id
      RETURNING 1) SELECT count(*)::int AS n FROM d`,
    [urn, aspect],
  );
  return rows[0]!.n;
}

/**
 * The statement every write of an aspect goes out as: `svc_write_checked` (db/migrations/
 * R__svc_write_checked.sql) for a batch of rows, each written only if what its writer read is still so
 * (its row, the guards); its answer per row (`<outcome>:<version>`, stale, a failed precondition), and
 * the reason of each precondition the database states in DataHub's words. The group commit
 * (writeBatcher.ts), locked writes and atomic batches all write through it.
 */
import { SvcError, type Reason } from '../shared/errors.ts';
import { inTransaction, query as q, type Db, type Pool } from '../db/pool.ts';

export type WriteMode = 'upsert' | 'create' | 'create_entity';
export type WriteOutcome = 'created' | 'updated' | 'unchanged';

/** What one write did, and the version number of the aspect it left latest (1 for its first version). */
export interface Written {
  outcome: WriteOutcome;
  version: number;
}

/** A row another aspect must still have (its latest metadata text; null: absent) for a write to go ahead. */
export interface Guard {
  urn: string;
  aspect: string;
  text: string | null;
}

export interface AspectWrite {
  urn: string;
  aspect: string;
  keyAspect: string;
  key: Record<string, string>;
  value: unknown;
  systemMetadata: Record<string, unknown>;
  actor: string;
  mode: WriteMode;
  /**
   * The aspect's latest row as its writer read it (aspectStore.ts, `ReadForWrite.token`; null: absent): the write
   * goes ahead only if it is still so. Undefined: written whatever is there.
   */
  expected?: string | null;
  /** Rows that must still be as read (their URNs are locked shared, after the entities written). */
  guards?: Guard[];
}

/**
 * Reads a written row's answer, `<outcome>:<version>` (see db/migrations/R__svc_write_aspect_row.sql).
 */
export function parseWritten(text: string): Written {
  const colon = text.indexOf(':');
  return { outcome: text.slice(0, colon) as WriteOutcome, version: Number(text.slice(colon + 1)) };
}

/**
 * A row's answer: `<outcome>:<version>` (see {@link parseWritten}); a failed CREATE precondition
 * (`precondition:<message>`) or a changed state the writer relied on (`stale:<reason>`), reported
 * rather than raised (its row wrote nothing).
 */
export type BatchOutcome = string;

/** `SELECT svc_write_checked(…)` for n rows: the flag, thirteen arrays, then the n values. */
const batchStatements: string[] = [];
function batchStatement(n: number): string {
  const values = Array.from({ length: n }, (_, i) => `$${i + 15}::json`).join(', ');
  return (batchStatements[n] ??= `SELECT svc_write_checked($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${values}) AS outcomes`);
}

/**
 * Writes aspects in the given order (URN order) through `svc_write_checked` (see
 * db/migrations/R__svc_write_checked.sql: upserts of distinct entities are written set-wise, other
 * batches row by row): one statement, so all of them commit together, or none when the statement fails.
 * With `atomic`, a stale row or a failed precondition fails the statement (SQLSTATE SV409 or SV412);
 * otherwise each row's outcome is reported. The small fields go as arrays; each value goes as a
 * parameter of its own, which the driver sends as it is (in an array it would escape it character by
 * character). One prepared statement per batch size.
 */
export async function writeAspects(db: Db, ws: AspectWrite[], atomic = false): Promise<BatchOutcome[]> {
  let rows;
  try {
    rows = await q<{ outcomes: BatchOutcome[] }>(db, batchStatement(ws.length), batchArguments(ws, atomic), `svc_write_checked_${ws.length}`);
  } catch (err) {
    // A precondition raised (SQLSTATE SV412, made a PRECONDITION by the pool) gets its reason here.
    if (err instanceof SvcError && err.code === 'PRECONDITION' && err.reason === undefined) throw preconditionFailed(err.message, err.cause);
    throw err;
  }
  return rows[0]!.outcomes;
}

/** The arguments of `svc_write_checked` for a batch, in its order (the flag, thirteen arrays, the values). */
export function batchArguments(ws: AspectWrite[], atomic: boolean): unknown[] {
  const guards = ws.flatMap((w, i) => (w.guards ?? []).map((g) => ({ ...g, row: i + 1 })));
  return [
    atomic,
    ws.map((w) => w.urn),
    ws.map((w) => w.aspect),
    ws.map((w) => w.keyAspect),
    ws.map((w) => JSON.stringify(w.key)),
    ws.map((w) => JSON.stringify(w.systemMetadata)),
    ws.map((w) => w.actor),
    ws.map((w) => w.mode),
    ws.map((w) => w.expected !== undefined),
    ws.map((w) => w.expected ?? null),
    guards.map((g) => g.row),
    guards.map((g) => g.urn),
    guards.map((g) => g.aspect),
    guards.map((g) => g.text),
    ...ws.map((w) => JSON.stringify(w.value)),
  ];
}

/**
 * Rows per statement at most: Postgres passes at most 100 arguments to a function, and each value is
 * one (beside 14 arrays).
 */
export const MAX_ROWS_PER_STATEMENT = 64;

/**
 * Writes aspects all or nothing (a stale state or a failed precondition raises): in one statement, or
 * in statements of {@link MAX_ROWS_PER_STATEMENT} rows inside one transaction.
 */
export async function writeAspectsAtomically(pool: Pool, ws: AspectWrite[]): Promise<Written[]> {
  const chunk = (db: Db, from: number) => writeAspects(db, ws.slice(from, from + MAX_ROWS_PER_STATEMENT), true);
  if (ws.length <= MAX_ROWS_PER_STATEMENT) return (await chunk(pool, 0)).map(parseWritten);
  const outcomes = await inTransaction(pool, async (tx) => {
    const out: BatchOutcome[] = [];
    for (let from = 0; from < ws.length; from += MAX_ROWS_PER_STATEMENT) for (const o of await chunk(tx, from)) out.push(o);
    return out;
  });
  return outcomes.map(parseWritten);
}

/** Writes one aspect (one round trip, history kept); a stale state or a failed precondition raises. */
export async function writeAspect(db: Db, w: AspectWrite): Promise<Written> {
  return parseWritten((await writeAspects(db, [w], true))[0]!);
}

/**
 * The reason of each precondition the database checks, by the words it states it in (DataHub's, which
 * are the message clients see; db/migrations/R__svc_write_aspect_row.sql): the database answers a
 * failed CREATE or CREATE_ENTITY with its words only (`precondition:<words>` in a row's answer, or
 * SQLSTATE SV412), so they are read here, once, and everything after branches on the reason.
 */
const PRECONDITION_REASONS: ReadonlyMap<string, Reason> = new Map([
  ['Cannot perform CREATE since the aspect already exists.', 'AspectExists'],
  ['Cannot perform CREATE_ENTITY if not exists since the entity key already exists.', 'EntityExists'],
]);

/** A precondition the database found failed, as a PRECONDITION error with its reason (`AspectExists`, `EntityExists`). */
export function preconditionFailed(message: string, cause?: unknown): SvcError {
  return new SvcError('PRECONDITION', message, { cause, reason: PRECONDITION_REASONS.get(message) });
}

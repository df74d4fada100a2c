/** The Postgres connection pool, and the transaction helper every multi-statement write goes through. */
import pg, { type DatabaseError } from 'pg';
import { SvcError } from '../shared/errors.ts';

// bigint columns (aspect versions, timestamps) fit in a double for every value svc writes.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export type Pool = pg.Pool;
export type Db = pg.Pool | pg.PoolClient;
export type Tx = pg.PoolClient;

export function createPool(connectionString: string, max: number): Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: 'svc' });
  // An idle client losing its connection (e.g. Postgres restarting) must not crash the process.
  pool.on('error', () => undefined);
  // Nor a client checked out: pg-pool listens to a client's errors only while it is idle, and a
  // connection lost between the statements of a transaction (Postgres shutting down while the search
  // outbox reads through the pool, say) is an 'error' event on the client. Its next statement fails
  // (UNAVAILABLE, see dbError) and its release drops it from the pool.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

const RETRIED = new Set(['40P01', '40001']); // deadlock detected, serialization failure
/**
 * Tries of a transaction that met a deadlock or a serialization failure. Three were not always enough
 * for an entity's hard delete beside a time series truncation deleting rows of the same partitions
 * (datahub-gc runs both): DataHub's clients do not retry a 409.
 */
const ATTEMPTS = 6;

/**
 * Transactions of this process run again after a deadlock or a serialization failure (exported as
 * metrics): svc takes its locks in one order, so a deadlock is a bug to see, not to hide.
 */
export const transactionRetries = { deadlock: 0, serialization: 0 };

/**
 * Runs `fn` in a transaction; rolls back on any error. A deadlock or serialization failure (rare:
 * writes lock in URN order) is retried with the whole transaction, which re-reads what it needs.
 */
export async function inTransaction<T>(pool: Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactionOnce(pool, fn);
    } catch (err) {
      // The driver's error, possibly wrapped in an SvcError by dbError().
      const driver = err instanceof SvcError ? err.cause : err;
      const sqlstate = (driver as { code?: string } | undefined)?.code;
      if (attempt >= ATTEMPTS || !sqlstate || !RETRIED.has(sqlstate)) throw err;
      transactionRetries[sqlstate === '40P01' ? 'deadlock' : 'serialization']++;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * 2 ** attempt));
    }
  }
}

/**
 * Runs `fn` under a savepoint of `tx`: released when `fn` succeeds; when it fails, what it did is rolled
 * back to the savepoint, so the transaction stays usable, and its error is thrown.
 */
export async function inSavepoint<T>(tx: Tx, name: string, fn: () => Promise<T>): Promise<T> {
  await query(tx, `SAVEPOINT ${name}`, []);
  try {
    const result = await fn();
    await query(tx, `RELEASE SAVEPOINT ${name}`, []);
    return result;
  } catch (err) {
    await query(tx, `ROLLBACK TO SAVEPOINT ${name}`, []);
    await query(tx, `RELEASE SAVEPOINT ${name}`, []);
    throw err;
  }
}

async function transactionOnce<T>(pool: Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new SvcError('UNAVAILABLE', 'The database is not reachable', { cause: err });
  }
  let broken: unknown;
  try {
    await query(client, 'BEGIN', []);
    const result = await fn(client);
    // A connection lost during COMMIT leaves the outcome unknown: the write is then wholly applied or not at all.
    await query(client, 'COMMIT', []);
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => (broken = rollbackErr));
    throw err;
  } finally {
    // A client whose ROLLBACK failed is in no known state: dropped from the pool, not reused.
    client.release(broken as Error | undefined);
  }
}

/**
 * SQLSTATE of a checked write whose state changed since its writer read it (raised by the write
 * statement: db/migrations/R__svc_write_checked.sql).
 */
export const STALE_SQLSTATE = 'SV409';

/** The error of a checked write whose state changed meanwhile: read again and retry. */
export function staleWrite(reason: string): SvcError {
  return new SvcError('CONFLICT', `The write conflicted with a concurrent one (${reason}); retry it`, { cause: { code: STALE_SQLSTATE } });
}

/** Whether `err` is a {@link staleWrite}. */
export function isStaleWrite(err: unknown): boolean {
  return err instanceof SvcError && err.code === 'CONFLICT' && (err.cause as { code?: string } | undefined)?.code === STALE_SQLSTATE;
}

/**
 * Wraps driver errors: svc's own preconditions (SQLSTATE SV412) become PRECONDITION, a stale checked
 * write (SV409) a {@link staleWrite}, a database that cannot be reached UNAVAILABLE (503), the rest
 * CONFLICT/INTERNAL.
 */
export function dbError(err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  const code = (err as DatabaseError | undefined)?.code;
  if (code === 'SV412') return new SvcError('PRECONDITION', (err as Error).message, { cause: err });
  if (code === STALE_SQLSTATE) return staleWrite((err as Error).message);
  if (code === '40P01' || code === '40001') {
    return new SvcError('CONFLICT', 'The write conflicted with a concurrent one and was not applied; retry it', { cause: err });
  }
  if (isDatabaseUnreachable(err)) return new SvcError('UNAVAILABLE', 'The database is not reachable', { cause: err });
  return new SvcError('INTERNAL', 'Internal server error occurred', { cause: err });
}

/** SQLSTATEs of a server going away or not there yet: admin shutdown, crash shutdown, starting up. */
const SHUTDOWN_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** Socket errors of a database that cannot be reached. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a driver error says the database cannot be reached now (it is stopping, restarting, or gone):
 * a shutdown SQLSTATE, a connection exception (class 08), a socket error, or node-postgres's own errors
 * for a connection that ended and a client left unusable by that, which carry no code
 * (`Connection terminated unexpectedly`, `Client has encountered a connection error and is not queryable`).
 */
function isDatabaseUnreachable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return code.startsWith('08') || SHUTDOWN_SQLSTATES.has(code) || SOCKET_CODES.has(code);
  return typeof message === 'string' && /^Connection terminated\b|\bis not queryable$/.test(message);
}

/**
 * Runs a query and returns its rows, driver errors wrapped by {@link dbError}. A `name` makes it a
 * prepared statement (parsed and planned once per connection) — only for queries whose best plan does
 * not depend on how full the tables are.
 */
export async function query<T extends object = Record<string, unknown>>(db: Db, sql: string, params: unknown[], name?: string): Promise<T[]> {
  try {
    return (await db.query<T>(name ? { name, text: sql, values: params } : { text: sql, values: params })).rows;
  } catch (err) {
    throw dbError(err);
  }
}

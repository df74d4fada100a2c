/** The Postgres connection pool, and the transaction helper every multi-statement write goes through. */
import pg from 'pg';
import { SvcError } from '../errors.ts';

// bigint columns (aspect versions, timestamps) fit in a double for every value svc writes.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export type Pool = pg.Pool;
export type Db = pg.Pool | pg.PoolClient;
export type Tx = pg.PoolClient;

export function createPool(connectionString: string, max: number): Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: 'svc' });
  // An idle client losing its connection (e.g. Postgres restarting) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `fn` in a transaction; rolls back on any error. */
export async function inTransaction<T>(pool: Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new SvcError('UNAVAILABLE', 'The database is not reachable', { cause: err });
  }
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Schema migrations: plain ordered SQL files in `migrations/`, each applied once in its own
 * transaction, recorded in `schema_migrations` with a checksum (a file changed after it was applied
 * stops the start); an advisory lock keeps two starting servers apart.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from './pool.ts';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const LOCK_KEY = 7_452_001; // arbitrary, constant: the advisory lock id for migrations

/**
 * Applies every migration not yet applied (or those up to `through`, a file name, to build the schema
 * of an older version, as upgrade tests do); returns the names it applied.
 */
export async function migrate(pool: Pool, through?: string): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d+_.+\.sql$/.test(f) && (through === undefined || f <= through))
    .sort();
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Map((await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations')).rows.map((r) => [r.name, r.checksum]));
    const applied: string[] = [];
    for (const file of files) {
      const sql = readFileSync(join(MIGRATIONS_DIR, file), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      if (done.has(file)) {
        // Migrations are append-only: a changed file would never reach databases that applied it.
        if (done.get(file) !== checksum) throw new Error(`migration ${file} changed after it was applied to this database; add a new migration instead`);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [file, checksum]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed`, { cause: err });
      }
      applied.push(file);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

/** True when every migration file has been applied (used by `/ready`). */
export async function migrationsDone(pool: Pool): Promise<boolean> {
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d+_.+\.sql$/.test(f));
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations WHERE name = ANY($1)', [files]);
  return rows[0]!.n === files.length;
}

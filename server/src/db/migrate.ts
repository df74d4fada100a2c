/**
 * The database schema, from the SQL files in `migrations/`, as Flyway lays them out:
 *
 * - Numbered migrations, `V<nnn>__<name>.sql` (`V001__baseline.sql`: the tables as of the first
 *   release): each applied once, in number order, in a transaction of its own. From the first tagged
 *   release on they are append-only: a file changed after a database applied it stops the start, and a
 *   change of the tables is a new file (test/server/schema/release-upgrade.test.ts upgrades the last
 *   release's schema with them).
 * - Repeatable files, `R__<name>.sql`: one per SQL function (with the triggers that call it), written
 *   to be run again (`CREATE OR REPLACE`). After the numbered migrations, every repeatable file whose
 *   text differs from the one this database last applied (or that it never applied; or all of them
 *   when a numbered migration ran) is applied, in file name order, all in one transaction. A function
 *   is defined in exactly one place; its history is git's. (Dropping a function, or changing its
 *   arguments or result type, needs a DROP: in the file, or in a numbered migration once released.)
 *
 * Each file applied is recorded in `schema_migrations` with a SHA-256 of its text; an advisory lock
 * keeps two starting servers apart. See docs/schema.md.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from './pool.ts';

/** The schema files shipped with this version. */
export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const LOCK_KEY = 7_452_001; // arbitrary, constant: the advisory lock id for migrations

const NUMBERED = /^V(\d+)__.+\.sql$/;
const REPEATABLE = /^R__.+\.sql$/;
/**
 * How the unreleased development schema named its migrations (`001_aspects.sql` …): a database that
 * records one was made before the schema became one baseline, and cannot be upgraded.
 */
const DEVELOPMENT = /^\d+_.+\.sql$/;

interface SchemaFile {
  name: string;
  sql: string;
  checksum: string;
}

/** The numbered migrations in number order, then the repeatable files in name order. */
export function schemaFiles(dir = MIGRATIONS_DIR): { numbered: SchemaFile[]; repeatable: SchemaFile[] } {
  const read = (name: string): SchemaFile => {
    const sql = readFileSync(join(dir, name), 'utf8');
    return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
  };
  const names = readdirSync(dir).sort();
  const numbered = names.filter((n) => NUMBERED.test(n)).sort((a, b) => Number(NUMBERED.exec(a)![1]) - Number(NUMBERED.exec(b)![1]));
  numbered.forEach((n, i) => {
    if (i > 0 && Number(NUMBERED.exec(n)![1]) === Number(NUMBERED.exec(numbered[i - 1]!)![1])) throw new Error(`migrations ${numbered[i - 1]} and ${n} have the same number`);
  });
  return { numbered: numbered.map(read), repeatable: names.filter((n) => REPEATABLE.test(n)).map(read) };
}

/** The error of a database made by the unreleased development schema. */
export function developmentDatabase(recorded: string): Error {
  return new Error(
    `this database was made by an unreleased development version of svc (its schema_migrations table records ${recorded}), ` +
      'whose schema this version does not upgrade: recreate it (stop svc and remove the data directory, SVC_DATA_DIR, ' +
      'or point DATABASE_URL at a new, empty database) and load its contents again',
  );
}

/**
 * Applies the numbered migrations not yet applied, then the repeatable files whose text changed;
 * returns the names it applied. `dir`: another directory of schema files (tests build the schema of a
 * release with it).
 */
export async function migrate(pool: Pool, opts: { dir?: string } = {}): Promise<string[]> {
  const { numbered, repeatable } = schemaFiles(opts.dir);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Map((await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations ORDER BY name')).rows.map((r) => [r.name, r.checksum]));
    const development = [...done.keys()].find((name) => DEVELOPMENT.test(name));
    if (development !== undefined) throw developmentDatabase(development);
    const inTransaction = async (fn: () => Promise<void>) => {
      await client.query('BEGIN');
      try {
        await fn();
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    };
    const run = async (file: SchemaFile) => {
      try {
        await client.query(file.sql);
      } catch (err) {
        throw new Error(`migration ${file.name} failed: ${(err as Error).message}`, { cause: err });
      }
    };
    const applied: string[] = [];
    for (const file of numbered) {
      if (done.has(file.name)) {
        // A changed migration would never reach the databases that applied it.
        if (done.get(file.name) !== file.checksum) {
          throw new Error(
            `migration ${file.name} changed after it was applied to this database: a released migration never changes ` +
              '(add a new one instead); a database made by an unreleased development version must be recreated',
          );
        }
        continue;
      }
      await inTransaction(async () => {
        await run(file);
        await client.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [file.name, file.checksum]);
      });
      applied.push(file.name);
    }
    // After a numbered migration every repeatable file runs again: the migration may have dropped
    // what one made (a table's triggers go with it).
    const changed = repeatable.filter((file) => applied.length > 0 || done.get(file.name) !== file.checksum);
    if (changed.length > 0) {
      await inTransaction(async () => {
        for (const file of changed) {
          await run(file);
          await client.query(
            'INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()',
            [file.name, file.checksum],
          );
        }
      });
      for (const file of changed) applied.push(file.name);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

/**
 * True when every numbered migration and every repeatable file of this version has been applied
 * (used by `/ready`). A repeatable file applied in another text counts: a server of another version
 * (a rolling upgrade) applied its own.
 */
export async function migrationsDone(pool: Pool): Promise<boolean> {
  const names = readdirSync(MIGRATIONS_DIR).filter((f) => NUMBERED.test(f) || REPEATABLE.test(f));
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations WHERE name = ANY($1)', [names]);
  return rows[0]!.n === names.length;
}

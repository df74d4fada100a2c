/**
 * A description of a database's schema (what `pg_dump --schema-only` would print, read from the
 * catalogs so that no client binary is needed), for asserting that two ways of building a schema give
 * the same one: relations, columns in order, constraints, indexes, triggers, functions and sequences
 * of the `public` schema. The rows of `schema_migrations` are data, not schema.
 */
import { after } from 'node:test';
import { rmSync } from 'node:fs';
import { createPool, type Pool } from '../../server/src/db/pool.ts';
import { createTestDatabase, sql } from './testServer.ts';

/** One line per schema object, sorted. */
export async function describeSchema(databaseUrl: string): Promise<string[]> {
  const rows = await sql<{ line: string }>(
    databaseUrl,
    `WITH rel AS (
       SELECT c.oid, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'S', 'v', 'm', 'i', 'I')
     )
     SELECT 'relation ' || relname || ' ' || relkind::text
            || coalesce(' partitioned by ' || pg_get_partkeydef(oid), '') AS line FROM rel
     UNION ALL
     SELECT 'column ' || r.relname || ' #' || row_number() OVER (PARTITION BY r.oid ORDER BY a.attnum) || ' ' || a.attname || ' '
            || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
            || coalesce(' COLLATE ' || co.collname, '') || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
       FROM rel r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
       LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> (SELECT oid FROM pg_collation WHERE collname = 'default')
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE r.relkind IN ('r', 'p', 'v', 'm')
     UNION ALL
     SELECT 'constraint ' || r.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
       FROM rel r JOIN pg_constraint k ON k.conrelid = r.oid
     UNION ALL
     SELECT 'index ' || pg_get_indexdef(r.oid) FROM rel r WHERE r.relkind IN ('i', 'I')
     UNION ALL
     SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN rel r ON r.oid = t.tgrelid WHERE NOT t.tgisinternal
     UNION ALL
     SELECT 'function ' || pg_get_functiondef(p.oid)
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
     UNION ALL
     SELECT 'sequence ' || s.sequencename || ' ' || s.data_type || ' start ' || s.start_value || ' by ' || s.increment_by
            || coalesce(' owned by ' || (SELECT r.relname || '.' || a.attname FROM pg_depend dep
                                            JOIN pg_class r ON r.oid = dep.refobjid
                                            JOIN pg_attribute a ON a.attrelid = dep.refobjid AND a.attnum = dep.refobjsubid
                                           WHERE dep.objid = (quote_ident(s.schemaname) || '.' || quote_ident(s.sequencename))::regclass
                                             AND dep.classid = 'pg_class'::regclass AND dep.deptype IN ('a', 'i')), '')
       FROM pg_sequences s WHERE s.schemaname = 'public'`,
  );
  return rows.map((r) => r.line).sort();
}

/**
 * Empty databases and scratch folders for a schema test file, each removed (pools ended, folders
 * deleted) when the file's tests are done.
 */
export function schemaScratch(poolSize: number): { database(): Promise<{ url: string; pool: Pool }>; folder(dir: string): string } {
  const pools: Pool[] = [];
  const dirs: string[] = [];
  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    async database() {
      const url = await createTestDatabase();
      const pool = createPool(url, poolSize);
      pools.push(pool);
      return { url, pool };
    },
    folder(dir) {
      dirs.push(dir);
      return dir;
    },
  };
}

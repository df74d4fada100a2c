/**
 * How the schema is applied (server/src/db/migrate.ts): numbered migrations once, repeatable files
 * (one per SQL function) whenever their text changes, each step in a transaction, under a lock; and a
 * database made by the unreleased development schema refused as it is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_DIR, migrate, migrationsDone, schemaFiles } from '../../../server/src/db/migrate.ts';
import { sql, startTestServer } from '../../support/testServer.ts';
import { describeSchema, schemaScratch } from '../../support/schemaDescription.ts';

const { database, folder } = schemaScratch(3);

/** A copy of the schema files, to change. */
function copyOfSchema(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-schema-'));
  folder(dir);
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

const ALL = (() => {
  const { numbered, repeatable } = schemaFiles();
  return [...numbered, ...repeatable].map((f) => f.name);
})();

async function recorded(url: string): Promise<Record<string, string>> {
  const rows = await sql<{ name: string; checksum: string }>(url, 'SELECT name, checksum FROM schema_migrations ORDER BY name');
  return Object.fromEntries(rows.map((r) => [r.name, r.checksum]));
}

test('a new database gets the baseline and then every function; a second start applies nothing', async () => {
  const { url, pool } = await database();
  assert.deepEqual(await migrate(pool), ALL);
  assert.ok(ALL[0]!.startsWith('V001__'), ALL[0]);
  assert.deepEqual(await migrate(pool), []);
  assert.equal(await migrationsDone(pool), true);
  assert.deepEqual(Object.keys(await recorded(url)).sort(), [...ALL].sort());
});

test('two servers starting at once apply the schema once', async () => {
  const { pool } = await database();
  const [a, b] = await Promise.all([migrate(pool), migrate(pool)]);
  assert.deepEqual([a, b].map((applied) => applied.length).sort((x, y) => x - y), [0, ALL.length]);
});

test('a repeatable file is applied again when its text changes, alone', async () => {
  const { url, pool } = await database();
  const dir = copyOfSchema();
  await migrate(pool, { dir });
  const before = await recorded(url);
  writeFileSync(
    join(dir, 'R__svc_timeseries_parent.sql'),
    `CREATE OR REPLACE FUNCTION svc_timeseries_parent(p_index text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'changed_' || p_index $$;\n`,
  );
  assert.deepEqual(await migrate(pool, { dir }), ['R__svc_timeseries_parent.sql']);
  assert.deepEqual(await sql(url, "SELECT svc_timeseries_parent('x') AS t"), [{ t: 'changed_x' }]);
  const after = await recorded(url);
  assert.notEqual(after['R__svc_timeseries_parent.sql'], before['R__svc_timeseries_parent.sql']);
  assert.deepEqual({ ...after, 'R__svc_timeseries_parent.sql': '' }, { ...before, 'R__svc_timeseries_parent.sql': '' });
  // Back to the shipped text: applied again, and the schema is the shipped one.
  assert.deepEqual(await migrate(pool), ['R__svc_timeseries_parent.sql']);
  const fresh = await database();
  await migrate(fresh.pool);
  assert.deepEqual(await describeSchema(url), await describeSchema(fresh.url));
});

test('a repeatable file that fails leaves every function as it was', async () => {
  const { url, pool } = await database();
  const dir = copyOfSchema();
  await migrate(pool, { dir });
  const before = await recorded(url);
  const schema = await describeSchema(url);
  // Two changed files, applied in one transaction: the first succeeds, the second fails.
  appendFileSync(join(dir, 'R__svc_jsonb_readable.sql'), '\nCREATE OR REPLACE FUNCTION svc_jsonb_readable(v json) RETURNS boolean LANGUAGE sql AS $$ SELECT false $$;\n');
  appendFileSync(join(dir, 'R__svc_latest_rows.sql'), '\nSELECT no_such_function();\n');
  await assert.rejects(migrate(pool, { dir }), /migration R__svc_latest_rows\.sql failed: function no_such_function\(\) does not exist/);
  assert.deepEqual(await recorded(url), before);
  assert.deepEqual(await describeSchema(url), schema);
});

test('a new numbered migration is applied once, then every repeatable file again', async () => {
  const { url, pool } = await database();
  const dir = copyOfSchema();
  await migrate(pool, { dir });
  // A migration that drops what a repeatable file made (a table's triggers go with it): it is made again.
  writeFileSync(join(dir, 'V002__drop_a_trigger.sql'), 'DROP TRIGGER search_outbox_notify ON search_outbox;\n');
  const applied = await migrate(pool, { dir });
  assert.deepEqual(applied, ['V002__drop_a_trigger.sql', ...ALL.filter((n) => n.startsWith('R__'))]);
  assert.deepEqual(await sql(url, "SELECT tgname FROM pg_trigger WHERE tgname = 'search_outbox_notify'"), [{ tgname: 'search_outbox_notify' }]);
  assert.deepEqual(await migrate(pool, { dir }), []);
});

test('a numbered migration changed after a database applied it stops the start, and changes nothing', async () => {
  const { url, pool } = await database();
  const dir = copyOfSchema();
  await migrate(pool, { dir });
  const before = await recorded(url);
  appendFileSync(join(dir, 'V001__baseline.sql'), '\nCREATE TABLE added_later (id int);\n');
  appendFileSync(join(dir, 'R__svc_jsonb_readable.sql'), '\n-- changed\n');
  await assert.rejects(migrate(pool, { dir }), /migration V001__baseline\.sql changed after it was applied to this database: a released migration never changes/);
  assert.deepEqual(await recorded(url), before);
  assert.deepEqual(await sql(url, "SELECT to_regclass('added_later') IS NULL AS absent"), [{ absent: true }]);
});

test('a database made by the unreleased development schema is refused, untouched, with what to do', async () => {
  const { url, pool } = await database();
  // What such a database holds: its migrations recorded under their old names, beside its tables.
  await sql(url, 'CREATE TABLE schema_migrations (name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
  await sql(url, "INSERT INTO schema_migrations (name, checksum) VALUES ('001_aspects.sql', 'x'), ('002_properties_tasks.sql', 'y')");
  await sql(url, 'CREATE TABLE aspects (urn text, aspect text, version bigint, metadata json)');
  const message = /this database was made by an unreleased development version of svc \(its schema_migrations table records 001_aspects\.sql\), whose schema this version does not upgrade: recreate it \(stop svc and remove the data directory, SVC_DATA_DIR, or point DATABASE_URL at a new, empty database\)/;
  await assert.rejects(migrate(pool), message);
  // The server does not start on it.
  await assert.rejects(startTestServer({ DATABASE_URL: url }), message);
  assert.deepEqual(Object.keys(await recorded(url)), ['001_aspects.sql', '002_properties_tasks.sql']);
  assert.deepEqual(await sql(url, "SELECT to_regclass('tasks') IS NULL AS absent"), [{ absent: true }]);
  assert.equal(await migrationsDone(pool), false);
});

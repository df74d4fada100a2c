/**
 * Upgrading to the record of assignments (migration 007) keeps what the value rows recorded: one row
 * per property set on an entity, with the definition version its values were written under.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPool, type Pool } from '../../server/src/db/pool.ts';
import { migrate } from '../../server/src/db/migrate.ts';
import { createTestDatabase, sql } from '../support/testServer.ts';

let databaseUrl: string;
let pool: Pool;

before(async () => {
  databaseUrl = await createTestDatabase();
  pool = createPool(databaseUrl, 2);
  await migrate(pool, '006_write_versions.sql');
});
after(async () => {
  await pool.end();
});

test('each property set on an entity keeps its recorded version', async () => {
  const e1 = 'urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)';
  const e2 = 'urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)';
  const p = 'urn:li:structuredProperty:p';
  const q = 'urn:li:structuredProperty:q';
  // As the earlier schema kept them: one row per value.
  await pool.query('SELECT svc_replace_property_values($1, $2, $3, $4, $5, $6)', [e1, [p, p, q], ['20240101000000', '20240101000000', ''], [0, 1, 0], ['x', 'y', null], [null, null, 3]]);
  await pool.query('SELECT svc_replace_property_values($1, $2, $3, $4, $5, $6)', [e2, [q], ['20230101000000'], [0], [null], [5]]);
  assert.ok((await migrate(pool)).includes('007_property_assignments.sql'));
  const rows = await sql(databaseUrl, 'SELECT entity_urn, property_urn, definition_version FROM structured_property_assignments ORDER BY 1, 2');
  assert.deepEqual(rows, [
    { entity_urn: e1, property_urn: p, definition_version: '20240101000000' },
    { entity_urn: e1, property_urn: q, definition_version: '' },
    { entity_urn: e2, property_urn: q, definition_version: '20230101000000' },
  ]);
  // The new function keeps what is given, drops the rest, and updates versions.
  await pool.query('SELECT svc_replace_assignments($1, $2, $3)', [e1, [q], ['20250101000000']]);
  assert.deepEqual(await sql(databaseUrl, 'SELECT property_urn, definition_version FROM structured_property_assignments WHERE entity_urn = $1', [e1]), [
    { property_urn: q, definition_version: '20250101000000' },
  ]);
});

/**
 * Upgrading to the record of assignments (migration 007) keeps what the value rows recorded: one row
 * per property set on an entity, with the definition version its values were written under. Upgrading
 * to the record of older versions (migration 025) takes the history written before it as written
 * under the definition version current at the time.
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

test('older versions of structuredProperties written before migration 025 get the definition version of their time', async () => {
  const url = await createTestDatabase();
  const old = createPool(url, 2);
  try {
    await migrate(old, '024_set_wise_writes.sql');
    const e = 'urn:li:dataset:(urn:li:dataPlatform:hive,history,PROD)';
    const p = 'urn:li:structuredProperty:p';
    const row = (urn: string, aspect: string, version: number, metadata: unknown, at: string) =>
      old.query("INSERT INTO aspects (urn, aspect, version, metadata, created_by, created_on) VALUES ($1, $2, $3, $4, 'urn:li:corpuser:t', $5)", [urn, aspect, version, JSON.stringify(metadata), at]);
    const definition = (version?: string) => ({ qualifiedName: 'p', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'], ...(version ? { version } : {}) });
    await row(p, 'propertyDefinition', 1, definition(), '2024-01-01T00:00:00Z');
    await row(p, 'propertyDefinition', 0, definition('20240614080000'), '2024-06-14T08:00:00Z');
    await row(e, 'structuredProperties', 1, { properties: [{ propertyUrn: p, values: [{ string: 'old' }] }] }, '2024-03-01T00:00:00Z');
    await row(e, 'structuredProperties', 2, { properties: [{ propertyUrn: p, values: [{ string: 'new' }] }] }, '2024-07-01T00:00:00Z');
    const applied = await migrate(old);
    assert.ok(applied.includes('025_assignment_history.sql') && applied.includes('027_assignment_history_backfill.sql'), applied.join(', '));
    assert.deepEqual(await sql(url, 'SELECT aspect_version, property_urn, definition_version FROM structured_property_assignment_history ORDER BY 1'), [
      { aspect_version: 1, property_urn: p, definition_version: '' },
      { aspect_version: 2, property_urn: p, definition_version: '20240614080000' },
    ]);
  } finally {
    await old.end();
  }
});

/**
 * The record of assignments and the search outbox hear of inserted aspect rows once per statement
 * (R__svc_aspects_inserted.sql and R__svc_record_inserted_assignments.sql in server/src/db/migrations/):
 * a statement inserting the rows of many entities, as a group commit does, leaves each entity the
 * record its own value names, and queues each entity once per row search builds on.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPool, type Pool } from '../../../server/src/db/pool.ts';
import { migrate } from '../../../server/src/db/migrate.ts';
import { writeAspects, type AspectWrite } from '../../../server/src/entities/writeStatement.ts';
import { createTestDatabase } from '../../support/testServer.ts';

let pool: Pool;
const P = 'urn:li:structuredProperty:sw.p';
const Q = 'urn:li:structuredProperty:sw.q';
const R = 'urn:li:structuredProperty:sw.r';
const dataset = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:sw,${name},PROD)`;

before(async () => {
  pool = createPool(await createTestDatabase(), 2);
  await migrate(pool);
  // P has a version, Q none; R has no definition at all.
  await pool.query(
    `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by) VALUES
       ($1, 'propertyDefinition', 0, '{"qualifiedName":"sw.p","valueType":"urn:li:dataType:svc.string","entityTypes":["urn:li:entityType:svc.dataset"],"version":"20250101000000"}', '{}', 'test'),
       ($2, 'propertyDefinition', 0, '{"qualifiedName":"sw.q","valueType":"urn:li:dataType:svc.string","entityTypes":["urn:li:entityType:svc.dataset"]}', '{}', 'test')`,
    [P, Q],
  );
});
after(async () => {
  await pool.end();
});

const values = (...properties: string[]) => ({ properties: properties.map((propertyUrn) => ({ propertyUrn, values: [{ string: 'x' }] })) });

function write(urn: string, aspect: string, value: unknown): AspectWrite {
  return { urn, aspect, keyAspect: 'datasetKey', key: {}, value, systemMetadata: {}, actor: 'test', mode: 'upsert' };
}

async function record(): Promise<Record<string, string[]>> {
  const { rows } = await pool.query<{ entity_urn: string; property_urn: string; definition_version: string }>(
    'SELECT entity_urn, property_urn, definition_version FROM structured_property_assignments ORDER BY 1, 2',
  );
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.entity_urn] ??= []).push(`${r.property_urn}@${r.definition_version}`);
  return out;
}

test('one statement inserting the values of several entities records each from its own value', async () => {
  const [a, b, c] = [dataset('a'), dataset('b'), dataset('c')];
  // A first statement: a holds P and Q, b holds Q, c nothing yet.
  await writeAspects(pool, [write(a, 'structuredProperties', values(P, Q)), write(b, 'structuredProperties', values(Q))], true);
  assert.deepEqual(await record(), { [a]: [`${P}@20250101000000`, `${Q}@`], [b]: [`${Q}@`] });

  // A second statement: a keeps P only (a new version of its row), b is given R and Q twice, c gets no
  // property at all, and a status row beside them changes no record.
  await writeAspects(
    pool,
    [
      write(a, 'structuredProperties', values(P)),
      write(b, 'structuredProperties', { properties: [...values(R, Q).properties, ...values(Q).properties] }),
      write(c, 'structuredProperties', values()),
      write(dataset('d'), 'status', { removed: false }),
    ],
    true,
  );
  assert.deepEqual(await record(), { [a]: [`${P}@20250101000000`], [b]: [`${Q}@`, `${R}@`] });
});

test('one statement queues each entity whose search document it changes', async () => {
  await pool.query('DELETE FROM search_outbox');
  const [e, f, h] = [dataset('e'), dataset('f'), dataset('h')];
  await writeAspects(
    pool,
    [write(e, 'structuredProperties', values(Q)), write(f, 'institutionalMemory', { elements: [] }), write(h, 'globalTags', { tags: [{ tag: 'urn:li:tag:t' }] })],
    true,
  );
  const { rows } = await pool.query<{ urn: string }>('SELECT urn FROM search_outbox ORDER BY id');
  // e: its key (a new entity) and its values; f: its key only (institutionalMemory builds no search
  // field); h: its key and its tags (a field of DataHub's documents, search/fields.ts).
  assert.deepEqual(rows.map((r) => r.urn).sort(), [e, e, f, h, h].sort());
});

test('an atomic batch of several aspects of each entity (an ingestion batch) is one statement per change: each entity queued once per statement', async () => {
  await pool.query('DELETE FROM search_outbox');
  const [i, j] = [dataset('i'), dataset('j')];
  const key = (urn: string): AspectWrite => ({ ...write(urn, 'datasetKey', { platform: 'urn:li:dataPlatform:sw', name: urn.split(',')[1], origin: 'PROD' }) });
  await writeAspects(
    pool,
    [key(i), write(i, 'globalTags', { tags: [{ tag: 'urn:li:tag:t' }] }), write(i, 'structuredProperties', values(Q)), write(j, 'status', { removed: false }), write(j, 'subTypes', { typeNames: ['Table'] })],
    true,
  );
  const { rows } = await pool.query<{ urn: string }>('SELECT urn FROM search_outbox ORDER BY id');
  // Set-wise, i's rows go in one insert (its key among them), j's key first then its two aspects in
  // that insert: i once, j twice. Row by row each row was an insert of its own (i three times, j four).
  assert.deepEqual(rows.map((r) => r.urn).sort(), [i, j, j].sort());
  assert.deepEqual(await record().then((r) => r[i]), [`${Q}@`]);
});

test('the record of an entity replaced from a list keeps what is given, drops the rest, and updates versions', async () => {
  // svc_replace_assignments: what the record's row trigger does for a latest row updated in place.
  const g = dataset('g');
  await writeAspects(pool, [write(g, 'structuredProperties', values(P, Q))], true);
  await pool.query('SELECT svc_replace_assignments($1, $2, $3)', [g, [Q], ['20250101000000']]);
  assert.deepEqual((await record())[g], [`${Q}@20250101000000`]);
});

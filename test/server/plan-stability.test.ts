/**
 * Prepared statements keep their plans per connection. A plan made while the tables were empty (a
 * fresh install, or right after an ANALYZE of an empty table) must still be a plan of index lookups
 * once the tables have grown: entity reads with their structured-property read context once joined
 * by nested sequential scans there, and a read of a few hundred entities ran for hours.
 *
 * The plans are those Postgres ran, as auto_explain reports them (nested statements included) to the
 * client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createPool, type Pool } from '../../server/src/db/pool.ts';
import { migrate } from '../../server/src/db/migrate.ts';
import { latestAspectsWith } from '../../server/src/entities/aspectStore.ts';
import { findProperties, loadProperties, loadReadContext, READ_CONTEXT_SQL } from '../../server/src/properties/propertyStore.ts';
import { createTestDatabase } from '../support/testServer.ts';

const N = 300;
const datasetUrn = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:plan,t${i},PROD)`;
const PROPERTY = 'urn:li:structuredProperty:plan.tier';

let databaseUrl: string;
let pool: Pool;

before(async () => {
  databaseUrl = await createTestDatabase();
  pool = createPool(databaseUrl, 2);
  await migrate(pool);
  await pool.query('ANALYZE');
});
after(async () => {
  await pool.end();
});

/** A connection that receives the plan of every statement it runs, nested ones included. */
async function explainingClient(): Promise<{ client: pg.PoolClient; plans: string[]; close(): Promise<void> }> {
  const own = createPool(databaseUrl, 1);
  const client = await own.connect();
  const plans: string[] = [];
  client.on('notice', (n) => {
    if (n.message?.includes('Query Text')) plans.push(n.message);
  });
  await client.query("LOAD 'auto_explain'");
  await client.query('SET auto_explain.log_min_duration = 0');
  await client.query('SET auto_explain.log_nested_statements = on');
  await client.query('SET client_min_messages = log');
  const close = async () => {
    client.release();
    await own.end();
  };
  return { client, plans, close };
}

/** The catalog grows: N datasets, each with a key, a status and a value of one property. */
async function grow(): Promise<void> {
  await pool.query(
    `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
       VALUES ($1, 'propertyDefinition', 0, '{"qualifiedName":"plan.tier","valueType":"urn:li:dataType:svc.string","entityTypes":["urn:li:entityType:svc.dataset"],"version":"20250101000000"}', '{}', 'test')`,
    [PROPERTY],
  );
  await pool.query(
    `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
       SELECT u, a.aspect, 0, a.metadata, '{}', 'test'
         FROM unnest($1::text[]) AS u,
              (VALUES ('datasetKey', '{}'::json), ('status', '{"removed":false}'::json),
                      ('structuredProperties', json_build_object('properties', json_build_array(json_build_object('propertyUrn', $2::text, 'values', json_build_array(json_build_object('string', 'gold'))))))) AS a(aspect, metadata)`,
    [Array.from({ length: N }, (_, i) => datasetUrn(i)), PROPERTY],
  );
}

test('plans made on empty tables read by index once the tables have grown', async () => {
  const { client, plans, close } = await explainingClient();
  try {
    const names = ['datasetKey', 'status', 'structuredProperties'];
    // On empty tables, as often as it takes the connection to settle on a cached plan.
    for (let k = 0; k < 8; k++) {
      await latestAspectsWith(client, [datasetUrn(k)], names, [READ_CONTEXT_SQL]);
      await loadReadContext(client, [datasetUrn(k)]);
      await loadProperties(client, [PROPERTY]);
      await findProperties(client, ['plan.tier'], ['plan_tier']);
    }
    await grow();
    plans.length = 0;
    const urns = Array.from({ length: N }, (_, i) => datasetUrn(i));
    const read = await latestAspectsWith(client, urns, names, [READ_CONTEXT_SQL]);
    const context = await loadReadContext(client, urns);
    const states = await loadProperties(client, [PROPERTY]);
    const found = await findProperties(client, [], ['plan_tier']);
    // What was read is right…
    assert.equal(read.aspects.length, 3 * N);
    assert.equal(context.recorded.size, N);
    assert.equal(context.recorded.get(datasetUrn(7))?.get(PROPERTY), '20250101000000');
    assert.equal(context.properties.get(PROPERTY)?.version, '20250101000000');
    assert.equal(states.get(PROPERTY)?.definition.qualifiedName, 'plan.tier');
    assert.deepEqual([...found.keys()], [PROPERTY]);
    // …and no plan of a read context or of a property lookup walked a whole table.
    const lookups = plans.filter((p) => /structured_property_assignments|propertyDefinition/.test(p));
    assert.ok(lookups.length >= 4, `plans of the lookups were reported:\n${plans.join('\n')}`);
    for (const p of lookups) {
      assert.doesNotMatch(p, /Seq Scan on (structured_property_assignments|aspects)/, `a plan scans a whole table:\n${p}`);
    }
  } finally {
    await close();
  }
});

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
import { latestAspects, latestAspectsWith, versionNumbers, type StoredAspect } from '../../server/src/entities/aspectStore.ts';
import { writeAspect } from '../../server/src/entities/writeStatement.ts';
import { HARD_DELETE_TASK } from '../../server/src/contract/tasks.ts';
import {
  findProperties,
  loadDefinitionContexts,
  loadProperties,
  loadReadContext,
  loadWriteContexts,
  READ_CONTEXT_SQL,
} from '../../server/src/properties/propertyStore.ts';
import { PostgresBackend } from '../../server/src/search/postgresBackend.ts';
import type { Resolved, SearchDocument } from '../../server/src/search/backend.ts';
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

/** A connection that receives the plan of every statement it runs, nested ones included (with what each node read, when `analyze`). */
async function explainingClient(url = databaseUrl, analyze = false): Promise<{ client: pg.PoolClient; plans: string[]; close(): Promise<void> }> {
  const own = createPool(url, 1);
  const client = await own.connect();
  const plans: string[] = [];
  client.on('notice', (n) => {
    if (n.message?.includes('Query Text')) plans.push(n.message);
  });
  await client.query("LOAD 'auto_explain'");
  await client.query('SET auto_explain.log_min_duration = 0');
  await client.query('SET auto_explain.log_nested_statements = on');
  if (analyze) await client.query('SET auto_explain.log_analyze = on');
  await client.query('SET client_min_messages = log');
  const close = async () => {
    client.release();
    await own.end();
  };
  return { client, plans, close };
}

/** A set of the property's value on one dataset, as the write path sends it (the record of assignments follows in a trigger). */
function setValue(db: pg.PoolClient, i: number, value: string) {
  return writeAspect(db, {
    urn: datasetUrn(i),
    aspect: 'structuredProperties',
    keyAspect: 'datasetKey',
    key: {},
    value: { properties: [{ propertyUrn: PROPERTY, values: [{ string: value }] }] },
    systemMetadata: {},
    actor: 'test',
    mode: 'upsert',
  });
}

/** A plan node of the index by property whose condition is on the entity (its second column). */
const ENTITY_BY_PROPERTY_INDEX = /using assignments_by_property[^\n]*\n(?:[^\n]*\n)?\s*(?:Index Cond|Filter): \(entity_urn/;

/** The latest status of a dataset, as a read returns it (for its version number). */
const latestStatus = (urn: string): StoredAspect => ({ urn, aspect: 'status', version: 0, value: {}, systemMetadata: {}, createdOn: new Date(), createdBy: 'test' });

/** The catalog grows: `n` datasets, each with a key, a status and a value of one property. */
async function grow(db: Pool = pool, n = N): Promise<void> {
  await db.query(
    `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
       VALUES ($1, 'propertyDefinition', 0, '{"qualifiedName":"plan.tier","valueType":"urn:li:dataType:svc.string","entityTypes":["urn:li:entityType:svc.dataset"],"version":"20250101000000"}', '{}', 'test')`,
    [PROPERTY],
  );
  await db.query(
    `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
       SELECT u, a.aspect, 0, a.metadata, '{}', 'test'
         FROM unnest($1::text[]) AS u,
              (VALUES ('datasetKey', '{}'::json), ('status', '{"removed":false}'::json),
                      ('structuredProperties', json_build_object('properties', json_build_array(json_build_object('propertyUrn', $2::text, 'values', json_build_array(json_build_object('string', 'gold'))))))) AS a(aspect, metadata)`,
    [Array.from({ length: n }, (_, i) => datasetUrn(i)), PROPERTY],
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
      await setValue(client, N + k, 'silver');
      await setValue(client, N + k, 'silver'); // unchanged: the record is checked, not replaced
      await versionNumbers(client, [latestStatus(datasetUrn(k))]);
    }
    await grow();
    plans.length = 0;
    const urns = Array.from({ length: N }, (_, i) => datasetUrn(i));
    const read = await latestAspectsWith(client, urns, names, [READ_CONTEXT_SQL]);
    const context = await loadReadContext(client, urns);
    const states = await loadProperties(client, [PROPERTY]);
    const found = await findProperties(client, [], ['plan_tier']);
    assert.equal((await setValue(client, 3, 'bronze')).outcome, 'updated');
    assert.equal((await setValue(client, 3, 'bronze')).outcome, 'unchanged');
    const numbered = urns.map(latestStatus);
    await versionNumbers(client, numbered);
    // What was read is right…
    assert.deepEqual(new Set(numbered.map((a) => a.number)), new Set([1]));
    assert.equal(read.aspects.length, 3 * N);
    assert.equal(context.recorded.size, N);
    assert.equal(context.recorded.get(datasetUrn(7))?.get(PROPERTY), '20250101000000');
    assert.equal(context.properties.get(PROPERTY)?.version, '20250101000000');
    assert.equal(states.get(PROPERTY)?.definition.qualifiedName, 'plan.tier');
    assert.deepEqual([...found.keys()], [PROPERTY]);
    const recorded = await pool.query('SELECT property_urn, definition_version FROM structured_property_assignments WHERE entity_urn = $1', [datasetUrn(3)]);
    assert.deepEqual(recorded.rows, [{ property_urn: PROPERTY, definition_version: '20250101000000' }]);
    // …and no plan of a read context, of a property lookup or of the record of a write walked a whole table.
    const lookups = plans.filter((p) => /structured_property_assignments|propertyDefinition|unnest\(p_urns/.test(p));
    assert.ok(lookups.length >= 4, `plans of the lookups were reported:\n${plans.join('\n')}`);
    // The set-wise write (R__svc_write_checked.sql): its classification of the rows and its updates.
    assert.ok(lookups.filter((p) => /unnest\(p_urns, p_aspects/.test(p)).length >= 2, `plans of the set-wise write were reported:\n${plans.join('\n')}`);
    // The check of the record when a value is given again unchanged (R__svc_record_assignments.sql).
    assert.ok(lookups.some((p) => /OLD\.metadata::text = NEW\.metadata::text/.test(p)), `the plan of the record's check was reported:\n${plans.join('\n')}`);
    // The record of the rows a write statement inserted, made once for all of them
    // (R__svc_record_inserted_assignments.sql).
    const recordPlans = lookups.filter((p) => /FROM latest l, json_array_elements/.test(p));
    assert.ok(recordPlans.length > 0, `the plan of the record of inserted rows was reported:\n${plans.join('\n')}`);
    // Its delete finds the entities' rows by key (a join with the statement's rows once walked the whole record).
    for (const p of recordPlans) assert.match(p, /Delete on structured_property_assignments[\s\S]*Index Cond: \(entity_urn = ANY/, `the record's delete looks its entities up by key:\n${p}`);
    // The version numbers shown with system metadata.
    lookups.push(...plans.filter((p) => /AS k\(urn, aspect\)/.test(p)));
    assert.ok(plans.some((p) => /AS k\(urn, aspect\)/.test(p)), `the plan of the version numbers was reported:\n${plans.join('\n')}`);
    for (const p of lookups) {
      assert.doesNotMatch(p, /Seq Scan on (structured_property_assignments|aspects)/, `a plan scans a whole table:\n${p}`);
      // A lookup by entity through the index by property reads that whole index (assignments_by_property).
      assert.doesNotMatch(p, ENTITY_BY_PROPERTY_INDEX, `a plan looks entities up through the index by property:\n${p}`);
    }
  } finally {
    await close();
  }
});

test('lookups of a few entities among many, planned before any ANALYZE, read only their own rows', async () => {
  // A catalog just loaded: thousands of rows that no ANALYZE (manual or autovacuum's) has seen yet.
  // Without statistics, a plan once took the index of latest rows by aspect with the aspect as its
  // only key and filtered every entity of it by URN: a structured-property write read the rows of
  // all 5,000 datasets of a fresh load (15 ms instead of 0.1) until autovacuum came by.
  const M = 3000;
  const url = await createTestDatabase();
  const db = createPool(url, 2);
  try {
    await migrate(db);
    for (const table of ['aspects', 'structured_property_assignments', 'tasks']) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    await grow(db, M);
    await db.query("INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by) VALUES ($1, 'status', 0, '{\"removed\":false}', '{}', 'test')", [PROPERTY]);
    const { client, plans, close } = await explainingClient(url, true);
    try {
      const few = [datasetUrn(5), datasetUrn(17)];
      const names = ['datasetKey', 'status', 'structuredProperties'];
      for (let k = 0; k < 3; k++) {
        const writes = await loadWriteContexts(client, 'structuredProperties', few.map((urn) => ({ urn, keyAspect: 'datasetKey', named: [PROPERTY] })));
        assert.equal(writes[1]!.previous?.urn, few[1]);
        assert.equal(writes[1]!.state.entityKey, '{}');
        assert.ok(writes[0]!.state.properties.has(PROPERTY));
        const context = await loadReadContext(client, few);
        assert.equal(context.recorded.get(few[0]!)?.get(PROPERTY), '20250101000000');
        assert.equal((await latestAspectsWith(client, few, names, [READ_CONTEXT_SQL])).aspects.length, 6);
        assert.equal((await latestAspects(client, few, names)).length, 6);
        assert.equal((await loadProperties(client, [PROPERTY])).get(PROPERTY)?.softDeleted, false);
        assert.ok((await findProperties(client, ['plan.tier'], [])).has(PROPERTY));
        const [definition] = await loadDefinitionContexts(client, [{ urn: PROPERTY, qualifiedName: 'plan.tier' }], HARD_DELETE_TASK);
        assert.deepEqual(definition!.state.holders, []);
        assert.equal((await setValue(client, 40 + k, 'bronze')).outcome, 'updated');
      }
      assert.ok(plans.length >= 7, `plans were reported:\n${plans.join('\n')}`);
      for (const p of plans) {
        for (const m of p.matchAll(/Rows Removed by (?:Join )?Filter: (\d+)/g)) {
          assert.ok(Number(m[1]) < 100, `a plan read ${m[1]} rows it did not need:\n${p}`);
        }
        assert.doesNotMatch(p, /Seq Scan on (structured_property_assignments|aspects)/, `a plan scans a whole table:\n${p}`);
      }
    } finally {
      await close();
    }
  } finally {
    await db.end();
  }
});

test("a search delivery step reads and deletes the stored values of its entities by key, not by scanning the table", async () => {
  // On a table of a few thousand values, the step's few hundred URNs as `urn = ANY (…)` were priced
  // below the index and planned as a scan comparing every row with every URN (4.5 ms a step at
  // 12,000 values, against 0.2 ms through the index).
  const url = await createTestDatabase();
  const db = createPool(url, 2);
  try {
    await migrate(db);
    const all = Array.from({ length: 6000 }, (_, i) => datasetUrn(i));
    await db.query(
      `INSERT INTO search_values (entity_type, urn, field, str_value, num_value)
         SELECT 'dataset', u, f, 'v', NULL FROM unnest($1::text[]) AS u, (VALUES ('name'), ('plan_tier')) AS t(f)`,
      [all],
    );
    await db.query('ANALYZE search_values');
    const step: SearchDocument[] = all.slice(1000, 1300).map((urn) => ({ entityType: 'dataset', urn, removed: false, fields: new Map([['plan_tier', { type: 'keyword' as const, values: ['w'] }]]) }));
    const { client, plans, close } = await explainingClient(url);
    try {
      await client.query('BEGIN');
      await new PostgresBackend(db).apply(step, [], client);
      await client.query('COMMIT');
      const read = plans.filter((p) => /FROM search_values s WHERE s\.urn = u\.urn|FROM search_values WHERE urn/.test(p));
      assert.equal(read.length, 1, `the read of the stored values was reported:\n${plans.join('\n')}`);
      assert.doesNotMatch(read[0]!, /Seq Scan on search_values/, `the read scans the whole table:\n${read[0]}`);
      // The step's entities had tier v, and now have w: their v rows were deleted, by key too.
      const drop = plans.filter((p) => /Delete on search_values/.test(p));
      assert.equal(drop.length, 1, `the delete of the values that went was reported:\n${plans.join('\n')}`);
      assert.doesNotMatch(drop[0]!, /Seq Scan on search_values/, `the delete scans the whole table:\n${drop[0]}`);
      const values = await db.query("SELECT count(*)::int AS n FROM search_values WHERE field = 'plan_tier' AND str_value = 'w'");
      assert.equal(values.rows[0].n, 300);
      const before = await db.query("SELECT count(*)::int AS n FROM search_values WHERE field = 'plan_tier' AND str_value = 'v'");
      assert.equal(before.rows[0].n, 5700);
    } finally {
      await close();
    }
  } finally {
    await db.end();
  }
});

test('searches on string values find them through the index of value keys: equality, ranges and prefixes, long values too', async () => {
  // The index holds a value's first 256 characters (search_values_by_string_prefix); conditions on
  // values must still be index conditions on it, with the whole value compared only for values longer
  // than the key.
  const url = await createTestDatabase();
  const db = createPool(url, 2);
  try {
    await migrate(db);
    const long = (i: number) => `${'k'.repeat(300)}${i}`;
    await db.query(
      `INSERT INTO search_documents (entity_type, urn, removed) SELECT 'dataset', u, false FROM unnest($1::text[]) AS u`,
      [Array.from({ length: 4000 }, (_, i) => datasetUrn(i))],
    );
    await db.query(
      `INSERT INTO search_values (entity_type, urn, field, str_value, num_value)
         SELECT 'dataset', u, f, v || lpad(i::text, 5, '0'), NULL
           FROM unnest($1::text[]) WITH ORDINALITY AS t(u, i), (VALUES ('name', 'n'), ('structuredProperties.plan_tier', 'v')) AS x(f, v)`,
      [Array.from({ length: 4000 }, (_, i) => datasetUrn(i))],
    );
    await db.query("INSERT INTO search_values (entity_type, urn, field, str_value) VALUES ('dataset', $1, 'structuredProperties.plan_tier', $2), ('dataset', $3, 'structuredProperties.plan_tier', $4)", [
      datasetUrn(1),
      long(1),
      datasetUrn(2),
      long(2),
    ]);
    await db.query('ANALYZE search_documents, search_values');
    // The backend's own pool, its connection reporting the plans of what it runs.
    const plans: string[] = [];
    const explainingUrl = new URL(url);
    explainingUrl.searchParams.set('options', '-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c client_min_messages=log');
    const explaining = createPool(explainingUrl.toString(), 1);
    explaining.on('connect', (client) =>
      client.on('notice', (n) => {
        if (n.message?.includes('Query Text')) plans.push(n.message);
      }),
    );
    try {
      const backend = new PostgresBackend(explaining);
      const field = { name: 'structuredProperties.plan_tier', type: 'keyword' as const };
      const search = async (where: Resolved) => {
        plans.length = 0;
        const { urns, total } = await backend.search({ entityTypes: ['dataset'], where, includeRemoved: false, descending: false, limit: 10, total: true });
        return { urns, total, plans: plans.join('\n') };
      };
      const cases: { what: string; where: Resolved; expect: string[]; cond: RegExp }[] = [
        { what: 'equality', where: { kind: 'terms', field, values: ['v00042'] }, expect: [datasetUrn(41)], cond: /Index Cond: .*"left"\(str_value, 256\) = ANY/ },
        {
          what: 'a range',
          where: { kind: 'range', field, min: { value: 'v00100', inclusive: true }, max: { value: 'v00103', inclusive: false } },
          expect: [99, 100, 101].map(datasetUrn).sort(),
          cond: /Index Cond: .*"left"\(str_value, 256\) >= 'v00100'.*"left"\(str_value, 256\) < 'v00103'/,
        },
        { what: 'a prefix', where: { kind: 'wildcard', field, pattern: ['v0020', { wildcard: '*' }] }, expect: [199, 200, 201, 202, 203, 204, 205, 206, 207, 208].map(datasetUrn).sort(), cond: /Index Cond: .*"left"\(str_value, 256\) >= 'v0020'/ },
        { what: 'a long value', where: { kind: 'terms', field, values: [long(2)] }, expect: [datasetUrn(2)], cond: /Index Cond: .*"left"\(str_value, 256\) = ANY[\s\S]*Filter: \(str_value = ANY/ },
      ];
      for (const c of cases) {
        const got = await search(c.where);
        assert.deepEqual(got.urns, c.expect, c.what);
        assert.match(got.plans, /search_values_by_string_prefix/, `${c.what}: the index of value keys is used:\n${got.plans}`);
        assert.match(got.plans, c.cond, `${c.what}: the condition is an index condition on the key:\n${got.plans}`);
        assert.doesNotMatch(got.plans, /Seq Scan on search_values/, `${c.what}: no plan scans the value rows:\n${got.plans}`);
      }
    } finally {
      await explaining.end();
    }
  } finally {
    await db.end();
  }
});

/**
 * The `postgres` search backend refreshes its tables' planner statistics as documents come, instead of
 * leaving the searches after a catalog's first load planned on the statistics of empty tables until
 * autovacuum's next round. Postgres only: OpenSearch keeps no planner statistics.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ANALYZE_AFTER } from '../../server/src/search/postgresBackend.ts';
import { datasetUrn, propertyUrn, writeDefinition } from '../support/structuredProperties.ts';
import { pollUntil } from '../support/poll.ts';
import { startTestServer, text, type TestServer } from '../support/testServer.ts';

const LOADED = propertyUrn('stats.loaded');
const COUNT = ANALYZE_AFTER + 100;

describe('planner statistics of the postgres search backend', () => {
  let s: TestServer;
  let db: pg.Client;
  before(async () => {
    s = await startTestServer({ SEARCH_BACKEND: 'postgres' });
    db = new pg.Client({ connectionString: s.databaseUrl });
    await db.connect();
    await text(await writeDefinition(s, LOADED, { qualifiedName: 'stats.loaded', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
  });
  after(async () => {
    await db?.end();
    await s?.close();
  });

  const analysed = async () =>
    (await db.query<{ relname: string; analyze_count: string }>("SELECT relname, analyze_count FROM pg_stat_user_tables WHERE relname IN ('search_documents', 'search_values') ORDER BY relname")).rows.map(
      (r) => `${r.relname} ${r.analyze_count}`,
    );

  test('a first load refreshes the search tables statistics without waiting for autovacuum', async () => {
    // A fresh database: nothing ran ANALYZE on them (autovacuum's own analyses are counted apart).
    assert.deepEqual(await analysed(), ['search_documents 0', 'search_values 0']);
    for (let start = 0; start < COUNT; start += 300) {
      const batch = Array.from({ length: Math.min(300, COUNT - start) }, (_, k) => ({
        urn: datasetUrn(`stats_t${start + k}`),
        status: { value: { removed: false } },
        structuredProperties: { value: { properties: [{ propertyUrn: LOADED, values: [{ string: 'yes' }] }] } },
      }));
      await text(await s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) }), 200);
    }
    await pollUntil(
      'the load searchable',
      async () => {
        const query = '{ scrollAcrossEntities(input: {types: [DATASET], query: "*", count: 1, orFilters: [{and: [{field: "structuredProperties.stats.loaded", values: ["yes"]}]}]}) { total } }';
        const res = await s.request('/api/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
        return ((await res.json()) as { data?: { scrollAcrossEntities?: { total: number } } }).data?.scrollAcrossEntities?.total;
      },
      (n) => n === COUNT,
    );
    const counts = await pollUntil('the statistics refreshed', analysed, (got) => got.every((line) => Number(line.split(' ')[1]) >= 1));
    assert.equal(counts.length, 2);
    // The statistics are those of the loaded table, not of an empty one.
    const [docs] = (await db.query<{ n: number }>("SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'search_documents'")).rows;
    assert.ok(docs!.n >= ANALYZE_AFTER, `search_documents estimated at ${docs!.n} rows`);
  });
});

/**
 * `scrollAcrossLineage`, as DataHub's SDK (`client.lineage.get_lineage`) asks it, on both search
 * backends: a chain through every lineage aspect (a dataset's upstreamLineage, a job's inputs and
 * outputs, a chart's inputs, a dashboard's charts) walked both ways, each entity at its degree with a
 * path; the SDK's `degree` filter, types, other filters, paging by scroll id, soft-deleted entities
 * left out (or asked for), a write seen at once when only the SDK's status filter is given, and a bad
 * scroll id or degree refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gqlData, gqlError } from '../support/graphql.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const ds = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,lineage.${name},PROD)`;
const A = ds('a');
const B = ds('b');
const C = ds('c');
const GONE = ds('gone');
const JOB = 'urn:li:dataJob:(urn:li:dataFlow:(airflow,etl,PROD),clean)';
const CHART = 'urn:li:chart:(looker,lineage.k)';
const DASHBOARD = 'urn:li:dashboard:(looker,lineage.d)';
const AUDIT = { time: 0, actor: 'urn:li:corpuser:datahub' };
const CHANGED = { created: AUDIT, lastModified: AUDIT };

/** A → B (B's upstreamLineage) → JOB (its input) → C (its output) → CHART (its input) → DASHBOARD (its chart); A → GONE, soft-deleted. */
const FIXTURE: [string, string, unknown][] = [
  [B, 'upstreamLineage', { upstreams: [{ dataset: A, type: 'TRANSFORMED', auditStamp: AUDIT }] }],
  [JOB, 'dataJobInputOutput', { inputDatasets: [B], outputDatasets: [C] }],
  [CHART, 'chartInfo', { title: 'k', description: '', lastModified: CHANGED, inputs: [{ string: C }] }],
  [DASHBOARD, 'dashboardInfo', { title: 'd', description: '', lastModified: CHANGED, charts: [CHART] }],
  [GONE, 'upstreamLineage', { upstreams: [{ dataset: A, type: 'TRANSFORMED', auditStamp: AUDIT }] }],
  [GONE, 'status', { removed: true }],
  [A, 'status', { removed: false }],
  [C, 'globalTags', { tags: [{ tag: 'urn:li:tag:gold' }] }],
];

/** The SDK's query, as `get_lineage` sends it (less its entity fields). */
const SDK_QUERY = `query scrollAcrossLineage($input: ScrollAcrossLineageInput!) {
  scrollAcrossLineage(input: $input) { nextScrollId total searchResults { degree entity { urn type } paths { path { urn type } } } }
}`;

interface Answer {
  scrollAcrossLineage: { nextScrollId: string | null; total: number; searchResults: { degree: number; entity: { urn: string }; paths: { path: { urn: string }[] }[] }[] };
}

for (const backend of searchBackends()) {
  describe(`scrollAcrossLineage on ${backend.name}`, () => {
    let s: TestServer;
    const lineage = async (input: Record<string, unknown>) => (await gqlData<Answer>(s, SDK_QUERY, { input })).scrollAcrossLineage;
    const degrees = async (input: Record<string, unknown>) => (await lineage(input)).searchResults.map((r) => [r.entity.urn, r.degree]);
    const degree = (values: string[]) => [{ and: [{ field: 'degree', condition: 'EQUAL', values }] }];

    before(async () => {
      s = await startTestServer(backend.env);
      for (const [urn, aspect, value] of FIXTURE) {
        await text(await s.request(`/openapi/v3/entity/${urn.split(':')[2]}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      }
      await s.svc.catalog.searchOutbox.deliverAll();
    });
    after(async () => {
      await s?.close();
    });

    test('downstream and upstream through every lineage aspect, each entity at its degree with its path; soft-deleted ones left out', async () => {
      const down = await lineage({ urn: A, direction: 'DOWNSTREAM', count: 100 });
      assert.deepEqual(down.searchResults.map((r) => [r.entity.urn, r.degree]), [[B, 1], [JOB, 2], [C, 3], [CHART, 4], [DASHBOARD, 5]]);
      assert.deepEqual(down.searchResults[2]!.paths.map((p) => p.path.map((e) => e.urn)), [[A, B, JOB, C]]);
      assert.equal(down.total, 5);
      assert.equal(down.nextScrollId, null);
      assert.deepEqual(await degrees({ urn: DASHBOARD, direction: 'UPSTREAM', count: 100 }), [[CHART, 1], [C, 2], [JOB, 3], [B, 4], [A, 5]]);
      assert.deepEqual(await degrees({ urn: A, direction: 'UPSTREAM', count: 100 }), []);
    });

    test('the SDK’s degree filter, types and other filters', async () => {
      assert.deepEqual(await degrees({ urn: A, direction: 'DOWNSTREAM', orFilters: degree(['1']) }), [[B, 1]]);
      assert.deepEqual(await degrees({ urn: A, direction: 'DOWNSTREAM', orFilters: degree(['1', '2']) }), [[B, 1], [JOB, 2]]);
      assert.deepEqual(await degrees({ urn: A, direction: 'DOWNSTREAM', orFilters: degree(['1', '2', '3+']) }), [[B, 1], [JOB, 2], [C, 3], [CHART, 4], [DASHBOARD, 5]]);
      assert.deepEqual(await degrees({ urn: A, direction: 'DOWNSTREAM', types: ['DATASET'], count: 100 }), [[B, 1], [C, 3]]);
      const tagged = [{ and: [{ field: 'degree', condition: 'EQUAL', values: ['3+'] }, { field: 'tags', condition: 'EQUAL', values: ['urn:li:tag:gold'] }] }];
      assert.deepEqual(await degrees({ urn: A, direction: 'DOWNSTREAM', orFilters: tagged }), [[C, 3]]);
    });

    test('with the SDK’s status filter alone, lineage is read from the primary store: a write is seen at once, soft-deleted entities on asking', async () => {
      const fresh = ds('fresh');
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(fresh)}/upstreamLineage?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { upstreams: [{ dataset: C, type: 'TRANSFORMED', auditStamp: AUDIT }] } }) }), 200);
      const sdk = (removed: boolean, negated: boolean) => [{ and: [{ field: 'degree', condition: 'EQUAL', values: ['1'] }, { field: 'removed', condition: 'EQUAL', values: [String(removed)], negated }] }];
      // No delivery to search is awaited: the new dataset is not in search yet.
      assert.deepEqual(await degrees({ urn: C, direction: 'DOWNSTREAM', orFilters: sdk(true, true) }), [[CHART, 1], [fresh, 1]]);
      assert.deepEqual(await degrees({ urn: A, direction: 'DOWNSTREAM', orFilters: sdk(true, false) }), [[GONE, 1]]);
      assert.deepEqual(await degrees({ urn: A, direction: 'DOWNSTREAM', orFilters: [...sdk(true, false), ...sdk(false, false)] }), [[B, 1], [GONE, 1]]);
    });

    test('pages follow nextScrollId; a bad scroll id or degree is refused', async () => {
      const first = await lineage({ urn: A, direction: 'DOWNSTREAM', count: 2 });
      assert.deepEqual(first.searchResults.map((r) => r.entity.urn), [B, JOB]);
      assert.ok(first.nextScrollId);
      const second = await lineage({ urn: A, direction: 'DOWNSTREAM', count: 2, scrollId: first.nextScrollId });
      assert.deepEqual(second.searchResults.map((r) => r.entity.urn), [C, CHART]);
      assert.match((await gqlError(s, SDK_QUERY, { input: { urn: A, direction: 'DOWNSTREAM', scrollId: 'nope' } })).message, /scrollId: "nope" is not a scroll id/);
      assert.match((await gqlError(s, SDK_QUERY, { input: { urn: A, direction: 'DOWNSTREAM', orFilters: degree(['x']) } })).message, /degree: "1", "2" or "3\+", not "x"/);
    });

    test('searchAcrossLineage: the same entities by offset (start, count) with the total; a negative start is refused', async () => {
      const SEARCH = `query ($input: SearchAcrossLineageInput!) { searchAcrossLineage(input: $input) { start count total searchResults { degree entity { urn } } } }`;
      type Page = { searchAcrossLineage: { start: number; count: number; total: number; searchResults: { degree: number; entity: { urn: string } }[] } };
      const all = await lineage({ urn: A, direction: 'DOWNSTREAM', count: 100 });
      const page = (await gqlData<Page>(s, SEARCH, { input: { urn: A, direction: 'DOWNSTREAM', start: 1, count: 2 } })).searchAcrossLineage;
      assert.deepEqual(
        { start: page.start, count: page.count, total: page.total, results: page.searchResults.map((r) => [r.entity.urn, r.degree]) },
        { start: 1, count: 2, total: all.total, results: all.searchResults.slice(1, 3).map((r) => [r.entity.urn, r.degree]) },
      );
      const upstream = (await gqlData<Page>(s, SEARCH, { input: { urn: C, direction: 'UPSTREAM', orFilters: degree(['1']) } })).searchAcrossLineage;
      assert.deepEqual(upstream.searchResults.map((r) => r.entity.urn), [JOB]);
      assert.match((await gqlError(s, SEARCH, { input: { urn: A, direction: 'DOWNSTREAM', start: -1 } })).message, /start: must be 0 or more, got -1/);
    });
  });
}

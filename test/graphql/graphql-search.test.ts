/**
 * Search over GraphQL on both backends (`postgres`, and `opensearch` on the harness's OpenSearch):
 * the seed's scrollAcrossEntities filters and aggregateAcrossEntities facets verbatim, the query
 * DataHub's Python SDK sends (`scrollUrnsWithFilters`) looped over `nextScrollId`, offset paging,
 * and the denied filter and facet on a soft-deleted property. Answers are computed from the fixture.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDataset, datasetUrn, definitionOf, propertyUrn, retentionTimeDefinition, setValues, writeDefinition, type Assignment } from '../support/structuredProperties.ts';
import { gqlData, gqlError, graphql } from '../support/graphql.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const BACKENDS = searchBackends();

const RETENTION = 'io.acryl.privacy.retentionTime';
const RETENTION02 = 'io.acryl.privacy.retentionTime02';
const HIDDEN = 'test.hidden';
const N = 9;
const name = (i: number) => `gql${i}`;
const URNS = Array.from({ length: N }, (_, i) => datasetUrn(name(i)));
/** The fixture: retention of dataset i (none for i % 3 == 2), its retentionTime02 value; dataset 8 is soft-deleted. */
const retentionOf = (i: number): number | undefined => [30, 60, undefined][i % 3];
const retention02Of = (i: number): string => `bar${i % 3}`;
const REMOVED = 8;
const live = (pred: (i: number) => boolean) => URNS.filter((_, i) => i !== REMOVED && pred(i)).sort();

const SDK_QUERY = `query scrollUrnsWithFilters(
    $types: [EntityType!],
    $query: String!,
    $orFilters: [AndFilterInput!],
    $batchSize: Int!,
    $scrollId: String,
    $skipCache: Boolean!,
    $includeSoftDelete: Boolean) {

    scrollAcrossEntities(input: {
        query: $query,
        count: $batchSize,
        scrollId: $scrollId,
        types: $types,
        orFilters: $orFilters,
        searchFlags: {
            skipHighlighting: true
            skipAggregates: true
            skipCache: $skipCache
            includeSoftDeleted: $includeSoftDelete
        }
    }) {
        nextScrollId
        searchResults {
            entity {
                urn
            }
        }
    }
}`;

const STATUS_FILTER = { field: 'removed', values: ['true'], condition: 'EQUAL', negated: true };

for (const backend of BACKENDS) {
  describe(`GraphQL search on ${backend.name}`, () => {
    let s: TestServer;
    const settle = () => s.svc.catalog.searchOutbox.deliverAll();

    /** Every URN the SDK's query finds with these extra filters, in pages of `batchSize`; and the number of pages. */
    async function sdkScroll(extraFilters: Record<string, unknown>[], batchSize = 2): Promise<{ urns: string[]; pages: number }> {
      const urns: string[] = [];
      let scrollId: string | null = null;
      let pages = 0;
      do {
        const data: { scrollAcrossEntities: { nextScrollId: string | null; searchResults: { entity: { urn: string } }[] } } = await gqlData(s, SDK_QUERY, {
          types: ['DATASET'],
          query: '*',
          orFilters: [{ and: [STATUS_FILTER, ...extraFilters] }],
          batchSize,
          scrollId,
          skipCache: false,
          includeSoftDelete: null,
        });
        pages++;
        urns.push(...data.scrollAcrossEntities.searchResults.map((r) => r.entity.urn));
        scrollId = data.scrollAcrossEntities.nextScrollId;
      } while (scrollId);
      return { urns, pages };
    }

    before(async () => {
      s = await startTestServer(backend.env);
      await text(await writeDefinition(s, propertyUrn(RETENTION), { ...retentionTimeDefinition(RETENTION), allowedValues: undefined }), 200);
      await text(await writeDefinition(s, propertyUrn(RETENTION02), definitionOf(RETENTION02)), 200);
      await text(await writeDefinition(s, propertyUrn(HIDDEN), definitionOf(HIDDEN)), 200);
      for (let i = 0; i < N; i++) {
        await createDataset(s, name(i));
        const props: Assignment[] = [{ propertyUrn: propertyUrn(RETENTION02), values: [{ string: retention02Of(i) }] }, { propertyUrn: propertyUrn(HIDDEN), values: [{ string: 'x' }] }];
        const r = retentionOf(i);
        if (r !== undefined) props.push({ propertyUrn: propertyUrn(RETENTION), values: [{ double: r }] });
        await text(await setValues(s, URNS[i]!, props), 200);
      }
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(URNS[REMOVED]!)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed: true } }) }), 200);
      await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(propertyUrn(HIDDEN))}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed: true } }) }), 200);
      await settle();
    });
    after(() => s?.close());

    test('the seed’s range filter, verbatim', async () => {
      const data = await gqlData(
        s,
        `query {
          scrollAcrossEntities(input: { types: DATASET, count: 10, query: "*", orFilters: { and: [{ field: "structuredProperties.io.acryl.privacy.retentionTime", condition: GREATER_THAN, values: ["45.0"] }] } }) {
            searchResults {
              entity {
                urn,
                type
              }
            }
          }
        }`,
      );
      assert.deepEqual(
        data.scrollAcrossEntities.searchResults,
        live((i) => (retentionOf(i) ?? 0) > 45).map((urn) => ({ entity: { urn, type: 'DATASET' } })),
      );
    });

    test('results carry the fields asked for (structured properties read with the page)', async () => {
      const data = await gqlData(
        s,
        `{ scrollAcrossEntities(input: { types: [DATASET], count: 3, query: "*", orFilters: [{ and: [{ field: "structuredProperties.${RETENTION}", condition: EXISTS }] }] }) {
          searchResults { entity { urn ... on Dataset { name structuredProperties { properties { structuredProperty { urn } values { ... on NumberValue { numberValue } } } } } } } } }`,
      );
      const expected = live((i) => retentionOf(i) !== undefined).slice(0, 3);
      assert.deepEqual(
        data.scrollAcrossEntities.searchResults.map((r: { entity: { urn: string; name: string; structuredProperties: { properties: { structuredProperty: { urn: string }; values: unknown[] }[] } } }) => [
          r.entity.urn,
          r.entity.name,
          r.entity.structuredProperties.properties.find((p) => p.structuredProperty.urn === propertyUrn(RETENTION))?.values,
        ]),
        expected.map((u) => [u, name(URNS.indexOf(u)), [{ numberValue: retentionOf(URNS.indexOf(u)) }]]),
      );
    });

    test('the seed’s exists and equality filters; dotted and underscored field names alike', async () => {
      const run = async (filter: string) =>
        ((await gqlData(s, `{ scrollAcrossEntities(input: { types: [DATASET], count: 100, query: "*", orFilters: [{ and: [${filter}] }] }) { count total searchResults { entity { urn } } } }`)).scrollAcrossEntities) as {
          count: number;
          total: number;
          searchResults: { entity: { urn: string } }[];
        };
      const exists = live((i) => retentionOf(i) !== undefined);
      for (const field of [`structuredProperties.${RETENTION}`, `structuredProperties.${RETENTION.replaceAll('.', '_')}`]) {
        const r = await run(`{ field: "${field}", condition: EXISTS }`);
        assert.deepEqual(r.searchResults.map((x) => x.entity.urn), exists, field);
        assert.deepEqual([r.count, r.total], [exists.length, exists.length]);
      }
      const equal = await run(`{ field: "structuredProperties.${RETENTION02}", condition: EQUAL, values: ["bar2"] }`);
      assert.deepEqual(equal.searchResults.map((x) => x.entity.urn), live((i) => retention02Of(i) === 'bar2'));
      const negated = await run(`{ field: "structuredProperties.${RETENTION02}", condition: EQUAL, values: ["bar2"], negated: true }`);
      assert.deepEqual(negated.searchResults.map((x) => x.entity.urn), live((i) => retention02Of(i) !== 'bar2'));
    });

    test('DataHub’s SDK query with the status filter, looped over nextScrollId to the end', async () => {
      const all = await sdkScroll([]);
      assert.deepEqual(all.urns, live(() => true));
      assert.equal(all.pages, Math.ceil(all.urns.length / 2), 'the last page has no nextScrollId');
      const filtered = await sdkScroll([{ field: `structuredProperties.${RETENTION}`, negated: 'false', condition: 'EXISTS' }], 1);
      assert.deepEqual(filtered.urns, live((i) => retentionOf(i) !== undefined));
    });

    test('searchAcrossEntities pages by start and count, with the total', async () => {
      const expected = live(() => true);
      const seen: string[] = [];
      for (let start = 0; start < expected.length; start += 3) {
        const data = await gqlData(s, `{ searchAcrossEntities(input: {types: [DATASET], query: "*", start: ${start}, count: 3}) { start count total searchResults { entity { urn } } } }`);
        const page = data.searchAcrossEntities;
        assert.equal(page.start, start);
        assert.equal(page.total, expected.length);
        seen.push(...page.searchResults.map((r: { entity: { urn: string } }) => r.entity.urn));
      }
      assert.deepEqual(seen, expected);
      const tooFar = await gqlError(s, '{ searchAcrossEntities(input: {query: "*", start: 9995, count: 10}) { count } }');
      assert.equal(tooFar.extensions?.code, 400);
    });

    test('a count of 0 gives the total alone; a negative count or maxAggValues below 1 is refused (they were read as 1)', async () => {
      const totalOnly = await gqlData(s, '{ scrollAcrossEntities(input: {types: [DATASET], query: "*", count: 0}) { count total nextScrollId searchResults { entity { urn } } } }');
      assert.deepEqual(totalOnly.scrollAcrossEntities, { count: 0, total: live(() => true).length, nextScrollId: null, searchResults: [] });
      const negative = await gqlError(s, '{ scrollAcrossEntities(input: {query: "*", count: -5}) { count } }');
      assert.deepEqual([negative.message, negative.extensions?.code], ['count must be 0 or more (got -5)', 400]);
      const noValues = await gqlError(s, `{ aggregateAcrossEntities(input: {query: "*", facets: ["structuredProperties.${RETENTION}"], searchFlags: {maxAggValues: 0}}) { facets { field } } }`);
      assert.deepEqual([noValues.message, noValues.extensions?.code], ['maxAggValues must be 1 or more (got 0)', 400]);
    });

    test('one request may ask for 5,000 search results in all: a search past that is refused, those before it answer', async () => {
      const pages = ['a', 'b', 'c', 'd', 'e', 'f'].map((alias) => `${alias}: scrollAcrossEntities(input: {types: [DATASET], query: "*", count: 1000}) { count }`);
      const a = await graphql(s, `{ ${pages.join(' ')} }`);
      assert.deepEqual(a.body.data, { a: { count: live(() => true).length }, b: { count: live(() => true).length }, c: { count: live(() => true).length }, d: { count: live(() => true).length }, e: { count: live(() => true).length }, f: null });
      assert.deepEqual(
        a.body.errors?.map((e) => [e.message, e.path, e.extensions?.code]),
        [['A request may ask for 5000 search results in all, and this search takes it past that: ask for the rest in another request', ['f'], 400]],
      );
      // Larger pages count as the 1,000 they are read as; the budget is the request's, not the server's.
      await gqlData(s, `{ ${pages.slice(0, 5).join(' ')} }`);
    });

    test('the seed’s aggregation, verbatim; numbers as decimal strings', async () => {
      const data = await gqlData(
        s,
        `query {
          aggregateAcrossEntities(input: { types: [], facets: ["structuredProperties.io.acryl.privacy.retentionTime02"], query: "*", orFilters: [], searchFlags: { maxAggValues: 100 } }) {
            facets {
              field
              aggregations {
                value
                count
              }
            }
          }
        }`,
      );
      const counts = new Map<string, number>();
      for (const u of live(() => true)) counts.set(retention02Of(URNS.indexOf(u)), (counts.get(retention02Of(URNS.indexOf(u))) ?? 0) + 1);
      const facet = data.aggregateAcrossEntities.facets[0];
      assert.equal(facet.field, `structuredProperties.${RETENTION02}`);
      assert.deepEqual(
        [...facet.aggregations].sort((a: { value: string }, b: { value: string }) => a.value.localeCompare(b.value)),
        [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([value, count]) => ({ value, count })),
      );
      const numbers = await gqlData(s, `{ aggregateAcrossEntities(input: { types: [DATASET], query: "*", facets: ["structuredProperties.${RETENTION}"], orFilters: [{and: [{field: "structuredProperties.${RETENTION02}", values: ["bar0"]}]}] }) { facets { aggregations { value count } } } }`);
      assert.deepEqual(numbers.aggregateAcrossEntities.facets[0].aggregations, [{ value: '30.0', count: live((i) => retention02Of(i) === 'bar0').length }]);
    });

    test('a filter or a facet on a soft-deleted property is refused', async () => {
      const filter = await gqlError(s, `{ scrollAcrossEntities(input: { types: [DATASET], query: "*", orFilters: [{ and: [{ field: "structuredProperties.${HIDDEN}", condition: EXISTS }] }] }) { count } }`);
      assert.equal(filter.message, `Cannot filter on deleted Structured Property [${propertyUrn(HIDDEN)}]`);
      assert.equal(filter.extensions?.code, 400);
      const facet = await gqlError(s, `{ aggregateAcrossEntities(input: { query: "*", facets: ["structuredProperties.${HIDDEN}"] }) { facets { field } } }`);
      assert.equal(facet.message, `Cannot filter on deleted Structured Property [${propertyUrn(HIDDEN)}]`);
    });
  });
}

/**
 * The search conformance suite: every case runs against both backends (`postgres`, and `opensearch` on
 * the real OpenSearch the harness started, `OPENSEARCH_URL`), and both must give the answer computed
 * here from the fixture. Covers P9 over REST (the seed's query strings verbatim), every filter
 * operator with and without `negated`, scrolling, facets, soft delete, versions and hard delete.
 *
 * Search is asynchronous (fed by the outbox): `settle()` delivers what is queued before a case reads.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { SYSTEM } from '../../server/src/auth/authorize.ts';
import type { Criterion } from '../../server/src/search/expr.ts';
import { addOp, createDataset, datasetUrn, patchValues, propertyUrn, retentionTimeDefinition, setValues, writeDefinition, type Assignment } from '../support/structuredProperties.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';
import { pollUntil } from '../support/poll.ts';
import { graphql } from '../support/graphql.ts';
import { expectValidationError } from '../support/expectRejected.ts';
import { createCatalog } from '../../server/src/catalog.ts';
import { ASPECT_FIELDS } from '../../server/src/search/fields.ts';
import { loadConfig } from '../../server/src/config.ts';
import { HARD_DELETE_TASK, waitForTask } from '../support/tasks.ts';

const BACKENDS = searchBackends();

const RETENTION = 'io.acryl.privacy.retentionTime';
const TIER = 'test.tier';
const CREATED = 'test.created';
const N = 12;

/** The fixture: what each dataset holds (index i of ds00…ds11); ds11 is soft-deleted. */
const retentionOf = (i: number): number[] => [[30], [60], [30, 365], []][i % 4]!;
const tierOf = (i: number): string | undefined => ['gold', 'silver', undefined][i % 3];
const createdOf = (i: number): string | undefined => (i < 6 ? `2024-01-${10 + i}` : undefined);
const name = (i: number) => `ds${String(i).padStart(2, '0')}`;
const URNS = Array.from({ length: N }, (_, i) => datasetUrn(name(i)));
const REMOVED = N - 1;

/** Entities holding DataHub's common aspects (fields.ts, ASPECT_FIELDS), by URN: their aspects. */
const D1 = 'urn:li:dataset:(urn:li:dataPlatform:hive,common.orders,PROD)';
const D2 = 'urn:li:dataset:(urn:li:dataPlatform:hive,common.staging,DEV)';
const C1 = 'urn:li:chart:(looker,common.c1)';
const K1 = 'urn:li:container:common-k1';
const COMMON_TYPES = ['dataset', 'chart', 'container'];
const AUDIT = { time: 0, actor: 'urn:li:corpuser:datahub' };
const COMMON_FIXTURE: Record<string, Record<string, unknown>> = {
  [D1]: {
    dataPlatformInstance: { platform: 'urn:li:dataPlatform:hive', instance: 'urn:li:dataPlatformInstance:(urn:li:dataPlatform:hive,warehouse)' },
    ownership: { owners: [{ owner: 'urn:li:corpuser:alice', type: 'DATAOWNER' }] },
    globalTags: { tags: [{ tag: 'urn:li:tag:pii' }] },
    glossaryTerms: { terms: [{ urn: 'urn:li:glossaryTerm:email' }], auditStamp: AUDIT },
    domains: { domains: ['urn:li:domain:sales'] },
    container: { container: K1 },
    subTypes: { typeNames: ['Table'] },
    browsePaths: { paths: ['/prod/hive/common'] },
    browsePathsV2: { path: [{ id: K1, urn: K1 }] },
    datasetProperties: { name: 'Orders', description: 'All orders', customProperties: { team: 'core' } },
    editableDatasetProperties: { description: 'Orders, as edited' },
  },
  [D2]: {
    ownership: { owners: [{ owner: 'urn:li:corpuser:bob', type: 'DATAOWNER' }] },
    globalTags: { tags: [{ tag: 'urn:li:tag:pii' }] },
    subTypes: { typeNames: ['View'] },
  },
  [C1]: {
    dataPlatformInstance: { platform: 'urn:li:dataPlatform:looker' },
    ownership: { owners: [{ owner: 'urn:li:corpuser:alice', type: 'DATAOWNER' }] },
    chartInfo: { title: 'C1', description: 'A chart', lastModified: { created: AUDIT, lastModified: AUDIT }, customProperties: { team: 'core' } },
  },
  [K1]: {
    containerProperties: { name: 'Warehouse', env: 'PROD', customProperties: { env: 'PROD' } },
    subTypes: { typeNames: ['Database'] },
  },
};
/** For each field: a value, the entities holding it, and those holding the field at all. */
/** The fields DataHub's maintenance source searches on, of entity types besides these (sorted-search.test.ts). */
const GC_FIELDS = ['parentTemplate', 'created', 'source', 'lastModifiedAt', 'requestTimeMs', 'ingestionSource'];

const COMMON_CASES: { field: string; value: string; holders: string[]; has: string[] }[] = [
  { field: 'platform', value: 'urn:li:dataPlatform:looker', holders: [C1], has: [D1, D2, C1] },
  { field: 'platform', value: 'urn:li:dataPlatform:hive', holders: [D1, D2], has: [D1, D2, C1] },
  { field: 'platformInstance', value: 'urn:li:dataPlatformInstance:(urn:li:dataPlatform:hive,warehouse)', holders: [D1], has: [D1] },
  { field: 'owners', value: 'urn:li:corpuser:alice', holders: [D1, C1], has: [D1, D2, C1] },
  { field: 'tags', value: 'urn:li:tag:pii', holders: [D1, D2], has: [D1, D2] },
  { field: 'glossaryTerms', value: 'urn:li:glossaryTerm:email', holders: [D1], has: [D1] },
  { field: 'domains', value: 'urn:li:domain:sales', holders: [D1], has: [D1] },
  { field: 'container', value: K1, holders: [D1], has: [D1] },
  { field: 'typeNames', value: 'Table', holders: [D1], has: [D1, D2, K1] },
  { field: 'browsePaths', value: '/prod/hive/common', holders: [D1], has: [D1] },
  { field: 'browsePathV2', value: `\u241f${K1}`, holders: [D1], has: [D1] },
  { field: 'env', value: 'PROD', holders: [K1], has: [K1] },
  { field: 'origin', value: 'DEV', holders: [D2], has: [D1, D2] },
  { field: 'name', value: 'Orders', holders: [D1], has: [D1, D2, K1] },
  { field: 'name', value: 'common.staging', holders: [D2], has: [D1, D2, K1] },
  { field: 'description', value: 'A chart', holders: [C1], has: [D1, C1] },
  { field: 'editedDescription', value: 'Orders, as edited', holders: [D1], has: [D1] },
  { field: 'customProperties', value: 'team=core', holders: [D1, C1], has: [D1, C1, K1] },
  { field: 'customProperties', value: 'env=PROD', holders: [K1], has: [D1, C1, K1] },
  { field: 'removed', value: 'false', holders: [D1, D2, C1, K1], has: [D1, D2, C1, K1] },
];

/** The URNs (in URN order) of the live datasets for which `pred` holds. */
function expected(pred: (i: number) => boolean, includeRemoved = false): string[] {
  return URNS.filter((_, i) => (includeRemoved || i !== REMOVED) && pred(i)).sort();
}

for (const backend of BACKENDS) {
  describe(`search on ${backend.name}`, () => {
    let s: TestServer;
    const settle = () => s.svc.catalog.searchOutbox.deliverAll();

    /** GET /openapi/v3/entity/dataset?query=… → the URNs of every page (count per page). */
    async function query(q: string, params = '', count = 1000): Promise<string[]> {
      const out: string[] = [];
      let scrollId: string | null = null;
      do {
        const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}&count=${count}${params}${scrollId ? `&scrollId=${encodeURIComponent(scrollId)}` : ''}`);
        const body = JSON.parse(await text(res, 200)) as { entities: { urn: string }[]; scrollId: string | null };
        out.push(...body.entities.map((e) => e.urn));
        scrollId = body.scrollId;
      } while (scrollId);
      return out;
    }

    async function filter(criteria: Criterion[]): Promise<string[]> {
      const r = await s.svc.catalog.search.search(SYSTEM, { entityTypes: ['dataset'], filters: [{ and: criteria }], count: 1000 });
      return r.entities.map((e) => e.urn);
    }

    before(async () => {
      s = await startTestServer(backend.env);
      await text(await writeDefinition(s, propertyUrn(RETENTION), { ...retentionTimeDefinition(RETENTION), allowedValues: undefined }), 200);
      await text(await writeDefinition(s, propertyUrn(TIER), { qualifiedName: TIER, valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      await text(await writeDefinition(s, propertyUrn(CREATED), { qualifiedName: CREATED, valueType: 'urn:li:dataType:svc.date', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      for (let i = 0; i < N; i++) {
        await createDataset(s, name(i));
        const props: Assignment[] = [];
        if (retentionOf(i).length) props.push({ propertyUrn: propertyUrn(RETENTION), values: retentionOf(i).map((d) => ({ double: d })) });
        if (tierOf(i)) props.push({ propertyUrn: propertyUrn(TIER), values: [{ string: tierOf(i)! }] });
        if (createdOf(i)) props.push({ propertyUrn: propertyUrn(CREATED), values: [{ string: createdOf(i)! }] });
        if (props.length) await text(await setValues(s, URNS[i]!, props), 200);
      }
      await text(
        await s.request(`/openapi/v3/entity/dataset/${enc(URNS[REMOVED]!)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed: true } }) }),
        200,
      );
      await settle();
    });
    after(async () => {
      await s?.close();
    });

    test('P9: the seed query strings verbatim (range, exists)', async () => {
      assert.deepEqual(await query('structuredProperties.io_acryl_privacy_retentionTime:>45'), expected((i) => retentionOf(i).some((d) => d > 45)));
      assert.deepEqual(await query('_exists_:structuredProperties.io_acryl_privacy_retentionTime'), expected((i) => retentionOf(i).length > 0));
    });

    test('P9: the response has the listing shape with the aspects asked for', async () => {
      const res = await s.request(
        `/openapi/v3/entity/dataset?query=${encodeURIComponent('structuredProperties.test_tier:gold')}&aspects=datasetKey&aspects=structuredProperties&count=2&sort=urn&sortOrder=ASCENDING&systemMetadata=false`,
      );
      const body = JSON.parse(await text(res, 200)) as { entities: Record<string, unknown>[]; scrollId: string | null };
      assert.equal(body.entities.length, 2);
      assert.deepEqual(Object.keys(body.entities[0]!), ['urn', 'datasetKey', 'structuredProperties']);
      assert.deepEqual(body.entities[0]!.datasetKey, { value: { platform: 'urn:li:dataPlatform:hive', name: name(0), origin: 'PROD' } });
      assert.ok(body.scrollId, 'more gold datasets follow');
    });

    test('query strings: ranges, booleans, wildcards, key fields, negation', async () => {
      const R = 'structuredProperties.io_acryl_privacy_retentionTime';
      assert.deepEqual(await query(`${R}:>=60`), expected((i) => retentionOf(i).some((d) => d >= 60)));
      assert.deepEqual(await query(`${R}:<60`), expected((i) => retentionOf(i).some((d) => d < 60)));
      assert.deepEqual(await query(`${R}:<=30`), expected((i) => retentionOf(i).some((d) => d <= 30)));
      assert.deepEqual(await query(`${R}:[31 TO 365}`), expected((i) => retentionOf(i).some((d) => d >= 31 && d < 365)));
      assert.deepEqual(await query(`${R}:60`), expected((i) => retentionOf(i).includes(60)));
      assert.deepEqual(await query(`structuredProperties.test_tier:gold OR structuredProperties.test_tier:silver`), expected((i) => tierOf(i) !== undefined));
      assert.deepEqual(await query(`structuredProperties.test_tier:gold AND ${R}:30`), expected((i) => tierOf(i) === 'gold' && retentionOf(i).includes(30)));
      assert.deepEqual(await query(`structuredProperties.test_tier:(gold OR silver) AND NOT ${R}:30`), expected((i) => tierOf(i) !== undefined && !retentionOf(i).includes(30)));
      assert.deepEqual(await query(`-_exists_:${R}`), expected((i) => retentionOf(i).length === 0));
      assert.deepEqual(await query(`structuredProperties.test_tier:gol*`), expected((i) => tierOf(i) === 'gold'));
      assert.deepEqual(await query(`structuredProperties.test_tier:"silver"`), expected((i) => tierOf(i) === 'silver'));
      assert.deepEqual(await query(`structuredProperties.test_created:>2024-01-12`), expected((i) => (createdOf(i) ?? '') > '2024-01-12'));
      assert.deepEqual(await query(`name:ds0*`), expected((i) => i < 10));
      assert.deepEqual(await query(`origin:PROD AND platform:"urn:li:dataPlatform:hive" AND -name:ds00`), expected((i) => i !== 0));
      assert.deepEqual(await query(`ds03`), expected((i) => i === 3), 'a bare term matches the key fields');
      assert.deepEqual(await query(`urn:"${URNS[4]}"`), [URNS[4]]);
      assert.deepEqual(await query('removed:true', '&includeSoftDelete=true'), [URNS[REMOVED]]);
      assert.deepEqual(await query('name:*', '&includeSoftDelete=true'), expected(() => true, true));
      assert.deepEqual(await query('structuredProperties.io.acryl.privacy.retentionTime:365'), expected((i) => retentionOf(i).includes(365)), 'dotted names resolve');
      assert.deepEqual(await query('structuredProperties.test_tier.keyword:gold'), expected((i) => tierOf(i) === 'gold'), '.keyword is ignored');
      assert.deepEqual(await query('structuredProperties.no_such_property:1'), [], 'a field of no property matches nothing');
    });

    test('every filter operator, with and without negated', async () => {
      const R = 'structuredProperties.io.acryl.privacy.retentionTime';
      const T = 'structuredProperties.test.tier';
      const cases: [Criterion, (i: number) => boolean][] = [
        [{ field: R, condition: 'EQUAL', values: ['60'] }, (i) => retentionOf(i).includes(60)],
        [{ field: R, condition: 'IN', values: ['60', '365'] }, (i) => retentionOf(i).some((d) => d === 60 || d === 365)],
        [{ field: R, condition: 'EXISTS' }, (i) => retentionOf(i).length > 0],
        [{ field: R, condition: 'GREATER_THAN', values: ['45.0'] }, (i) => retentionOf(i).some((d) => d > 45)],
        [{ field: R, condition: 'GREATER_THAN_OR_EQUAL_TO', values: ['60'] }, (i) => retentionOf(i).some((d) => d >= 60)],
        [{ field: R, condition: 'LESS_THAN', values: ['60'] }, (i) => retentionOf(i).some((d) => d < 60)],
        [{ field: R, condition: 'LESS_THAN_OR_EQUAL_TO', values: ['60'] }, (i) => retentionOf(i).some((d) => d <= 60)],
        [{ field: T, condition: 'CONTAIN', values: ['ilv'] }, (i) => tierOf(i) === 'silver'],
        [{ field: T, condition: 'START_WITH', values: ['go'] }, (i) => tierOf(i) === 'gold'],
        [{ field: T, condition: 'END_WITH', values: ['er'] }, (i) => tierOf(i) === 'silver'],
        [{ field: 'structuredProperties.test_tier', condition: 'EQUAL', values: ['gold'] }, (i) => tierOf(i) === 'gold'],
        // Literal text with the characters of query syntax: matched as text, `*` included.
        [{ field: 'platform', condition: 'START_WITH', values: ['urn:li:dataPlatform:hi'] }, () => true],
        [{ field: 'platform', condition: 'CONTAIN', values: ['Platform:*'] }, () => false],
      ];
      for (const [c, pred] of cases) {
        assert.deepEqual(await filter([c]), expected(pred), `${c.condition} ${c.values ?? ''}`);
        assert.deepEqual(await filter([{ ...c, negated: true }]), expected((i) => !pred(i)), `negated ${c.condition} ${c.values ?? ''}`);
      }
      // The SDK's status filter, and an OR of ANDs.
      assert.deepEqual(await filter([{ field: 'removed', values: ['true'], negated: true }, { field: T, condition: 'EXISTS' }]), expected((i) => tierOf(i) !== undefined));
      const r = await s.svc.catalog.search.search(SYSTEM, {
        entityTypes: ['dataset'],
        filters: [{ and: [{ field: T, values: ['gold'] }] }, { and: [{ field: R, values: ['365'] }] }],
        count: 1000,
        total: true,
      });
      assert.deepEqual(r.entities.map((e) => e.urn), expected((i) => tierOf(i) === 'gold' || retentionOf(i).includes(365)));
      assert.equal(r.total, r.entities.length);
    });

    test('scroll across pages in both orders: no duplicates, no gaps', async () => {
      const all = expected(() => true);
      assert.deepEqual(await query('name:*', '', 3), all);
      assert.deepEqual(await query('name:*', '&sortOrder=DESCENDING', 4), [...all].reverse());
      const res = await s.request(`/openapi/v3/entity/dataset?query=name:*&scrollId=forged.id`);
      assert.equal(res.status, 400);
    });

    test('facets: value counts, numbers as decimal strings, capped by maxAggValues', async () => {
      const facets = await s.svc.catalog.search.aggregate(SYSTEM, {
        entityTypes: ['dataset'],
        facets: ['structuredProperties.io.acryl.privacy.retentionTime', 'structuredProperties.test_tier', 'platform'],
        maxAggValues: 100,
      });
      const count = (pred: (i: number) => boolean) => expected(pred).length;
      assert.deepEqual(facets[0], {
        field: 'structuredProperties.io.acryl.privacy.retentionTime',
        aggregations: [
          { value: '30.0', count: count((i) => retentionOf(i).includes(30)) },
          { value: '60.0', count: count((i) => retentionOf(i).includes(60)) },
          { value: '365.0', count: count((i) => retentionOf(i).includes(365)) },
        ].sort((a, b) => b.count - a.count || Number(a.value) - Number(b.value)),
      });
      assert.deepEqual(facets[1]!.aggregations, [
        { value: 'gold', count: count((i) => tierOf(i) === 'gold') },
        { value: 'silver', count: count((i) => tierOf(i) === 'silver') },
      ]);
      assert.deepEqual(facets[2]!.aggregations, [{ value: 'urn:li:dataPlatform:hive', count: N - 1 }]);
      const capped = await s.svc.catalog.search.aggregate(SYSTEM, { entityTypes: ['dataset'], query: 'structuredProperties.test_tier:gold', facets: ['structuredProperties.io_acryl_privacy_retentionTime'], maxAggValues: 1 });
      assert.equal(capped[0]!.aggregations.length, 1);
    });

    test('bad queries are 400s that say what is supported; nothing is a 500', async () => {
      for (const [q, message] of [
        ['name:/re.*/', 'regular expressions'],
        ['name:(', 'cannot parse'],
        ['nosuchfield:1', 'Unknown search field "nosuchfield"'],
        ['structuredProperties.io_acryl_privacy_retentionTime:abc', 'is not a number'],
        ['structuredProperties.io_acryl_privacy_retentionTime:>abc', 'is not a number'],
        ['structuredProperties.io_acryl_privacy_retentionTime:>0x10', 'is not a number'],
        ['structuredProperties.test_created:>yesterday', 'is not a date'],
        ['structuredProperties.io_acryl_privacy_retentionTime:3*', 'wildcards'],
        ['removed:maybe', 'true or false'],
        // The query parser took these, dropping the operator or reading it as a term; Lucene refuses them.
        ['name:x OR', 'OR needs a clause after it'],
        ['x OR OR', 'OR needs a clause after it'],
        ['OR name:x', 'OR needs a clause before it'],
        ['name:x\\', 'ends with a \\ that escapes nothing'],
        ['structuredProperties.io_acryl_privacy_retentionTime:>=', '>= needs a value after it'],
      ] as const) {
        const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}`);
        const body = await res.text();
        assert.equal(res.status, 400, `${q}: ${body}`);
        assert.ok((JSON.parse(body) as { message: string }).message.includes(message), `${q}: ${body}`);
      }
    });

    test('soft delete: filters, queries and facets naming the property are refused; restore brings them back', async () => {
      const status = (removed: boolean) =>
        s.request(`/openapi/v3/entity/structuredProperty/${enc(propertyUrn(TIER))}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed } }) });
      await text(await status(true), 200);
      try {
        const message = `Cannot filter on deleted Structured Property [${propertyUrn(TIER)}]`;
        const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent('structuredProperties.test_tier:gold')}`);
        assert.equal(res.status, 400);
        assert.ok((JSON.parse(await res.text()) as { message: string }).message.includes(message));
        await assert.rejects(filter([{ field: 'structuredProperties.test.tier', condition: 'EXISTS' }]), (e: Error) => e.message.includes(message) || JSON.stringify(e).includes(message));
        await assert.rejects(s.svc.catalog.search.aggregate(SYSTEM, { entityTypes: ['dataset'], facets: ['structuredProperties.test_tier'], maxAggValues: 10 }));
        // The values are hidden from the documents too.
        await settle();
        const facets = await s.svc.catalog.search.aggregate(SYSTEM, { entityTypes: ['dataset'], facets: ['platform'], query: '*', maxAggValues: 10 });
        assert.equal(facets[0]!.aggregations[0]!.count, N - 1);
      } finally {
        await text(await status(false), 200);
      }
      await settle();
      assert.deepEqual(await query('structuredProperties.test_tier:gold'), expected((i) => tierOf(i) === 'gold'));
    });

    test('another server on the same database hears of a definition change: a property soft-deleted through one is refused by the other', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-other-'));
      const other = await createCatalog(loadConfig({ ...backend.env, DATABASE_URL: s.databaseUrl, SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: 'other-admin-token' }), pino({ level: 'silent' }), { background: false });
      const status = (removed: boolean) =>
        s.request(`/openapi/v3/entity/structuredProperty/${enc(propertyUrn(TIER))}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed } }) });
      const search = () =>
        other.search.search(SYSTEM, { entityTypes: ['dataset'], query: 'structuredProperties.test_tier:gold', count: 1000 }).then(
          () => 'served',
          (e: Error) => e.message,
        );
      try {
        // Both servers listen; the other one has resolved the field (and keeps it).
        await pollUntil('both servers listen for property changes', async () => (await sql<{ n: number }>(s.databaseUrl, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'svc-properties' AND datname = current_database()"))[0]!.n, (n) => n === 2);
        assert.equal(await search(), 'served');
        assert.equal(await search(), 'served');
        await text(await status(true), 200);
        const refused = await pollUntil('the other server refuses the soft-deleted property', search, (m) => m !== 'served', 10_000);
        assert.match(refused, /Cannot filter on deleted Structured Property/);
        await text(await status(false), 200);
        await pollUntil('the other server serves the restored property again', search, (m) => m === 'served', 10_000);
      } finally {
        await text(await status(false), 200);
        await other.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    test('versions: after a breaking change, values are searched under the new versioned field only', async () => {
      const qn = 'io.acryl.privacy.retentionTime02';
      const P2 = propertyUrn(qn);
      const def = { qualifiedName: qn, valueType: 'urn:li:dataType:svc.string', cardinality: 'MULTIPLE', entityTypes: ['urn:li:entityType:svc.dataset'] };
      await text(await writeDefinition(s, P2, def), 200);
      // Patches: the datasets keep their other properties.
      await text(await patchValues(s, URNS[0]!, [addOp(P2, [{ string: 'bar2' }, { string: 'foo2' }])]), 200);
      await settle();
      assert.deepEqual(await query('structuredProperties.io_acryl_privacy_retentionTime02:bar2'), [URNS[0]]);
      // MULTIPLE → SINGLE is breaking: only with a new version.
      await text(await writeDefinition(s, P2, { ...def, cardinality: 'SINGLE', version: '20240614080000' }), 200);
      await settle();
      const VERSIONED = 'structuredProperties._versioned.io_acryl_privacy_retentionTime02.20240614080000.string';
      assert.deepEqual(await query('structuredProperties.io_acryl_privacy_retentionTime02:bar2'), [], 'values written under the old version are no longer found');
      assert.deepEqual(await query(`${VERSIONED}:bar2`), [], 'nor under the new field');
      await text(await patchValues(s, URNS[1]!, [addOp(P2, [{ string: 'bar2' }])]), 200);
      await settle();
      // The seed's versioned field name, verbatim: exists and equality.
      assert.deepEqual(await query(`_exists_:${VERSIONED}`), [URNS[1]]);
      assert.deepEqual(await query(`${VERSIONED}:bar2`), [URNS[1]]);
      assert.deepEqual(await filter([{ field: `structuredProperties.${qn}`, condition: 'EQUAL', values: ['bar2'] }]), [URNS[1]], 'the dotted name resolves to the current versioned field');
      assert.deepEqual(await filter([{ field: 'structuredProperties.io_acryl_privacy_retentionTime02', condition: 'EQUAL', values: ['bar2'] }]), [URNS[1]], 'so does the underscored name, in a filter');
      const facet = async (name: string) => (await s.svc.catalog.search.aggregate(SYSTEM, { entityTypes: ['dataset'], facets: [name], maxAggValues: 10 }))[0]!.aggregations;
      assert.deepEqual(await facet(`structuredProperties.${qn}`), [{ value: 'bar2', count: 1 }]);
      assert.deepEqual(await facet('structuredProperties.io_acryl_privacy_retentionTime02'), [{ value: 'bar2', count: 1 }]);
      assert.deepEqual(await query('structuredProperties.io_acryl_privacy_retentionTime02:bar2'), [], 'a query string names the unversioned field as written');
      assert.deepEqual(await query(`${VERSIONED}:foo2`), []);
    });

    test('versions of a property whose qualified name has no dot: filters and facets follow the current version', async () => {
      const P = propertyUrn('plainver');
      const def = { qualifiedName: 'plainver', valueType: 'urn:li:dataType:svc.string', cardinality: 'MULTIPLE', entityTypes: ['urn:li:entityType:svc.dataset'] };
      await text(await writeDefinition(s, P, def), 200);
      await text(await patchValues(s, URNS[2]!, [addOp(P, [{ string: 'v1' }])]), 200);
      await settle();
      assert.deepEqual(await filter([{ field: 'structuredProperties.plainver', condition: 'EQUAL', values: ['v1'] }]), [URNS[2]]);
      await text(await writeDefinition(s, P, { ...def, cardinality: 'SINGLE', version: '20240614080000' }), 200);
      await text(await patchValues(s, URNS[3]!, [addOp(P, [{ string: 'v2' }])]), 200);
      await settle();
      assert.deepEqual(await filter([{ field: 'structuredProperties.plainver', condition: 'EQUAL', values: ['v2'] }]), [URNS[3]]);
      assert.deepEqual(await filter([{ field: 'structuredProperties.plainver', condition: 'EXISTS' }]), [URNS[3]], 'the value of the old version is not found');
      assert.deepEqual((await s.svc.catalog.search.aggregate(SYSTEM, { entityTypes: ['dataset'], facets: ['structuredProperties.plainver'], maxAggValues: 10 }))[0]!.aggregations, [{ value: 'v2', count: 1 }]);
      assert.deepEqual(await query('structuredProperties._versioned.plainver.20240614080000.string:v2'), [URNS[3]]);
      assert.deepEqual(await query('_exists_:structuredProperties.plainver'), [], 'a query string names the unversioned field as written, which no value of the current version is under');
    });

    test('dates before 1970, four-digit numbers and bounds beyond any date are read as svc reads them (milliseconds), on both backends', async () => {
      const when = propertyUrn('test.when');
      await text(await writeDefinition(s, when, { qualifiedName: 'test.when', valueType: 'urn:li:dataType:svc.date', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      const dated: Record<string, string> = {};
      for (const [n, day] of [['when.old', '1000-01-01'], ['when.before', '1969-12-31'], ['when.now', '2024-01-01']] as const) {
        dated[day] = await createDataset(s, n);
        await text(await setValues(s, dated[day]!, [{ propertyUrn: when, values: [{ string: day }] }]), 200);
      }
      await settle();
      const F = 'structuredProperties.test_when';
      assert.deepEqual(await query(`${F}:1969-12-31`), [dated['1969-12-31']]);
      assert.deepEqual(await query(`${F}:1000-01-01`), [dated['1000-01-01']]);
      assert.deepEqual(await query(`${F}:<=1969-12-31`), [dated['1969-12-31'], dated['1000-01-01']].sort());
      assert.deepEqual(await query(`${F}:>1000-01-01`), [dated['1969-12-31'], dated['2024-01-01']].sort());
      assert.deepEqual(await query(`${F}:2024`), [], 'a number is milliseconds since 1970, not a year');
      assert.deepEqual(await query(`${F}:>2024`), [dated['2024-01-01']]);
      assert.deepEqual(await query(`${F}:>99999999999999999999`), []);
      assert.deepEqual(await query(`${F}:<99999999999999999999`), Object.values(dated).sort());
      assert.deepEqual(await filter([{ field: 'structuredProperties.test.when', condition: 'EQUAL', values: ['1000-01-01'] }]), [dated['1000-01-01']]);
      assert.deepEqual(await filter([{ field: 'structuredProperties.test.when', condition: 'LESS_THAN', values: ['1970-01-01T00:00:01Z'] }]), [dated['1969-12-31'], dated['1000-01-01']].sort());
    });

    test('a value too long for an OpenSearch term keeps its entity in search, found by its other values', async () => {
      const urn = await createDataset(s, 'long.value');
      const long = 'é'.repeat(20_000);
      await text(await setValues(s, urn, [{ propertyUrn: propertyUrn(TIER), values: [{ string: long }] }, { propertyUrn: propertyUrn(RETENTION), values: [{ double: 777 }] }]), 200);
      await settle();
      assert.deepEqual(await query('structuredProperties.io_acryl_privacy_retentionTime:777'), [urn]);
      assert.deepEqual(await query('urn:*long.value*'), [urn]);
    });

    test('a search holds 100 terms and conditions at most, on both backends alike', async () => {
      const terms = (n: number) => Array.from({ length: n }, (_, i) => `structuredProperties.test_tier:t${i}`).join(' OR ');
      assert.deepEqual(await query(`${terms(99)} OR structuredProperties.test_tier:gold`), expected((i) => tierOf(i) === 'gold'));
      await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(terms(101))}`), 400, 'A search may hold 100 terms and conditions at most', 'this one holds 101');
      await assert.rejects(filter(Array.from({ length: 101 }, (_, i) => ({ field: 'structuredProperties.test.tier', condition: 'EQUAL', values: [`t${i}`] }))), /this one holds 101/);
    });

    test('a wildcard OpenSearch finds too complex is a 400 saying so there, and runs on Postgres', async () => {
      const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(`urn:*a${'?'.repeat(40)}*b${'?'.repeat(40)}`)}`);
      const body = await res.text();
      if (backend.name === 'postgres') assert.equal(res.status, 200, body);
      else {
        assert.equal(res.status, 400, body);
        assert.match(JSON.parse(body).message, /^The search is more than the index can run \(/);
      }
    });

    test('hard delete: once the cleanup is done, no search finds the property; other properties stay', async () => {
      const doomed = propertyUrn('test.doomed');
      await text(await writeDefinition(s, doomed, { qualifiedName: 'test.doomed', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      for (const i of [2, 3]) {
        await text(await patchValues(s, URNS[i]!, [addOp(doomed, [{ string: 'x' }])]), 200);
      }
      await settle();
      assert.deepEqual(await query('_exists_:structuredProperties.test_doomed'), [URNS[2], URNS[3]]);
      await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(doomed)}`, { method: 'DELETE' }), 200);
      await waitForTask(s, doomed, HARD_DELETE_TASK);
      await settle();
      assert.deepEqual(await query('_exists_:structuredProperties.test_doomed'), []);
      assert.deepEqual(await filter([{ field: 'structuredProperties.test.doomed', condition: 'EXISTS' }]), []);
      assert.deepEqual(await query('structuredProperties.test_tier:gold'), expected((i) => tierOf(i) === 'gold'), 'the other property still finds its datasets');
    });

    test('a changed value replaces the old one; the fields left as they were stay searchable', async () => {
      const urn = await createDataset(s, 'changing');
      const tier = (value: string) => setValues(s, urn, [{ propertyUrn: propertyUrn(TIER), values: [{ string: value }] }]);
      await text(await tier('tier-a'), 200);
      await settle();
      assert.deepEqual(await query('structuredProperties.test_tier:tier-a'), [urn]);
      await text(await tier('tier-b'), 200);
      await settle();
      assert.deepEqual(await query('structuredProperties.test_tier:tier-a'), [], 'the old value is no longer found');
      assert.deepEqual(await query('structuredProperties.test_tier:tier-b'), [urn]);
      assert.deepEqual(await query('name:changing AND structuredProperties.test_tier:tier-b'), [urn], 'the key fields are still found');
      await text(await tier('tier-a'), 200);
      await settle();
      assert.deepEqual(await query('structuredProperties.test_tier:tier-b'), []);
      assert.deepEqual(await query('name:changing AND structuredProperties.test_tier:tier-a'), [urn]);
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'DELETE' }), 200);
      await settle();
      assert.deepEqual(await query('name:changing'), [], 'a deleted entity leaves search');
    });

    test('a qualified name that differs from another only by . vs _ is refused: each property keeps a search field of its own', async () => {
      const number = { valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'] };
      const first = propertyUrn('col.a_b');
      const second = propertyUrn('col_a.b');
      await text(await writeDefinition(s, first, { qualifiedName: 'col.a_b', ...number }), 200);
      const urn = await createDataset(s, 'field_collision');
      await text(await setValues(s, urn, [{ propertyUrn: first, values: [{ double: 20 }] }]), 200);
      const collision =
        "Structured property Elasticsearch field 'col_a_b' collides with existing property mapping. Qualified names that differ only by '.' vs '_' normalize to the same field name (proposed qualifiedName='col_a.b').";
      const refused = () => writeDefinition(s, second, { qualifiedName: 'col_a.b', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] });
      await expectValidationError(s, refused, 400, collision, `The field is that of ${first}`);
      await settle();
      assert.deepEqual(await query('structuredProperties.col_a_b:>10'), [urn]);

      // A soft-deleted property keeps its field (a restore brings its values back).
      const status = (removed: boolean) => s.request(`/openapi/v3/entity/structuredProperty/${enc(first)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed } }) });
      await text(await status(true), 200);
      await expectValidationError(s, refused, 400, collision);
      await text(await status(false), 200);

      // A hard-deleted one gives it up once its values are removed.
      await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(first)}`, { method: 'DELETE' }), 200);
      await waitForTask(s, first, HARD_DELETE_TASK);
      await text(await writeDefinition(s, second, { qualifiedName: 'col_a.b', ...number }), 200);
      await text(await setValues(s, urn, [{ propertyUrn: second, values: [{ double: 5 }] }]), 200);
      await settle();
      assert.deepEqual(await query('structuredProperties.col_a_b:>10'), []);
      assert.deepEqual(await query('structuredProperties.col_a_b:<10'), [urn]);
    });

    test('a write is found without any barrier (the dispatcher delivers on its own)', async () => {
      const urn = await createDataset(s, 'fresh');
      await text(await setValues(s, urn, [{ propertyUrn: propertyUrn(TIER), values: [{ string: 'fresh-tier' }] }]), 200);
      const deadline = Date.now() + 10_000;
      let found: string[] = [];
      while (Date.now() < deadline && found.length === 0) {
        found = await query('structuredProperties.test_tier:fresh-tier');
        if (found.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      assert.deepEqual(found, [urn]);
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'DELETE' }), 200);
      await settle();
      assert.deepEqual(await query('structuredProperties.test_tier:fresh-tier'), [], 'a deleted entity leaves search');
    });
  });

  describe(`DataHub's common search fields on ${backend.name}`, () => {
    let s: TestServer;
    const settle = () => s.svc.catalog.searchOutbox.deliverAll();
    const write = async (type: string, urn: string, aspect: string, value: unknown) =>
      text(await s.request(`/openapi/v3/entity/${type}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
    const find = async (criteria: Criterion[], entityTypes = COMMON_TYPES) =>
      (await s.svc.catalog.search.search(SYSTEM, { entityTypes, filters: [{ and: criteria }], count: 1000 })).entities.map((e) => e.urn).sort();

    before(async () => {
      s = await startTestServer(backend.env);
      for (const [urn, aspects] of Object.entries(COMMON_FIXTURE)) {
        for (const [aspect, value] of Object.entries(aspects)) await write(urn.split(':')[2]!, urn, aspect, value);
      }
      await settle();
    });
    after(async () => {
      await s?.close();
    });

    test('every field of DataHub’s documents filters as written and with .keyword: EQUAL, negated, EXISTS', async () => {
      // The fields of runs, queries and execution requests (datahub-gc's) are tested in sorted-search.test.ts.
      for (const f of ASPECT_FIELDS.filter((f) => !GC_FIELDS.includes(f.name))) assert.ok(COMMON_CASES.some((c) => c.field === f.name), `${f.name} has a case here`);
      for (const c of COMMON_CASES) {
        for (const field of [c.field, `${c.field}.keyword`]) {
          const all = Object.keys(COMMON_FIXTURE).sort();
          assert.deepEqual(await find([{ field, condition: 'EQUAL', values: [c.value] }]), [...c.holders].sort(), `${field} = ${c.value}`);
          assert.deepEqual(await find([{ field, condition: 'EQUAL', values: [c.value], negated: true }]), all.filter((u) => !c.holders.includes(u)), `${field} != ${c.value}`);
          assert.deepEqual(await find([{ field, condition: 'EXISTS' }]), [...c.has].sort(), `${field} exists`);
        }
      }
    });

    test('the filters DataHub’s clients build: a container’s descendants by CONTAIN on browsePathV2, env over origin, customProperties and env', async () => {
      assert.deepEqual(await find([{ field: 'browsePathV2', condition: 'CONTAIN', values: [K1] }]), [D1]);
      const env = (v: string) => [{ field: 'origin', values: [v] }, { field: 'customProperties', values: [`env=${v}`] }, { field: 'env', values: [v] }];
      const byEnv = async (v: string, types = COMMON_TYPES) =>
        (await s.svc.catalog.search.search(SYSTEM, { entityTypes: types, filters: env(v).map((c) => ({ and: [c] })), count: 100 })).entities.map((e) => e.urn).sort();
      assert.deepEqual(await byEnv('PROD'), [D1, K1].sort());
      assert.deepEqual(await byEnv('DEV'), [D2]);
      // A field of other types' documents (a chart has no origin) matches nothing there; it is no 400.
      assert.deepEqual(await byEnv('PROD', ['chart']), []);
      assert.deepEqual(await find([{ field: 'platform.keyword', values: ['urn:li:dataPlatform:hive'] }, { field: 'owners', values: ['urn:li:corpuser:alice'] }]), [D1]);
    });

    test('_entityType, as DataHub’s SDK filters on entity types: by name in any case, by GraphQL’s name, negated; a range or an unknown type is a 400', async () => {
      assert.deepEqual(await find([{ field: '_entityType', values: ['chart'] }]), [C1]);
      assert.deepEqual(await find([{ field: '_entityType', values: ['DATASET', 'container'] }]), [D1, D2, K1].sort());
      assert.deepEqual(await find([{ field: '_entityType', values: ['dataset'], negated: true }]), [C1, K1].sort());
      assert.deepEqual(await find([{ field: '_entityType', values: ['dataset'] }, { field: 'tags', values: ['urn:li:tag:pii'] }]), [D1, D2].sort());
      await assert.rejects(find([{ field: '_entityType', values: ['nosuch'] }]), /_entityType: "nosuch" is not an entity type/);
      await assert.rejects(find([{ field: '_entityType', condition: 'GREATER_THAN', values: ['a'] }]), /_entityType is matched by equality/);
      // Through GraphQL, as the SDK sends it: the enum's names.
      const found = await graphql(
        s,
        `{ searchAcrossEntities(input: { types: [DATASET, CHART, CONTAINER], query: "*", count: 10, orFilters: [{ and: [{ field: "_entityType", values: ["CONTAINER", "CHART"] }] }] }) { searchResults { entity { urn } } } }`,
      );
      const urns = (found.body.data?.searchAcrossEntities as { searchResults: { entity: { urn: string } }[] }).searchResults.map((r) => r.entity.urn);
      assert.deepEqual(urns.sort(), [C1, K1].sort(), JSON.stringify(found));
    });

    test('a document follows its aspects: a tag taken off, an aspect deleted, an owner added', async () => {
      await write('dataset', D2, 'globalTags', { tags: [] });
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(D1)}/domains`, { method: 'DELETE' }), 200);
      await write('dataset', D2, 'ownership', { owners: [{ owner: 'urn:li:corpuser:bob', type: 'DATAOWNER' }, { owner: 'urn:li:corpuser:carol', type: 'DATAOWNER' }] });
      await settle();
      assert.deepEqual(await find([{ field: 'tags', values: ['urn:li:tag:pii'] }]), [D1]);
      assert.deepEqual(await find([{ field: 'domains', condition: 'EXISTS' }]), []);
      assert.deepEqual(await find([{ field: 'owners', values: ['urn:li:corpuser:carol'] }]), [D2]);
      // As they were, for the other cases.
      await write('dataset', D2, 'globalTags', COMMON_FIXTURE[D2]!.globalTags);
      await write('dataset', D1, 'domains', COMMON_FIXTURE[D1]!.domains);
      await write('dataset', D2, 'ownership', COMMON_FIXTURE[D2]!.ownership);
      await settle();
    });
  });
}

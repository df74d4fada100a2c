/**
 * The fields DataHub's GraphQL API gives entities from their common aspects (`properties`,
 * `editableProperties`, `ownership`, `tags`, `glossaryTerms`, `domain`, `status`, `container`,
 * `subTypes`, `dataPlatformInstance`, `globalTags`, `browsePathV2`, a dataset's `schemaMetadata`), as
 * scripts and DataHub's SDK ask for them: on entity reads,
 * and on search results (whose entities are read with the aspects the selection names), on both
 * search backends. An entity without the aspect answers null.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gqlData, gqlError } from '../support/graphql.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:snowflake,db.sch.orders,PROD)';
const BARE = 'urn:li:dataset:(urn:li:dataPlatform:snowflake,db.sch.bare,PROD)';
const CONTAINER = 'urn:li:container:db-guid';
const FLOW = 'urn:li:dataFlow:(airflow,etl,PROD)';
const JOB = `urn:li:dataJob:(${FLOW},clean)`;
const CHART = 'urn:li:chart:(looker,c1)';
const INSTANCE = 'urn:li:dataPlatformInstance:(urn:li:dataPlatform:snowflake,eu)';
const AUDIT = { time: 0, actor: 'urn:li:corpuser:datahub' };

/** Aspects by entity, written through REST v3 before the tests. */
const FIXTURE: Record<string, Record<string, unknown>> = {
  [DATASET]: {
    datasetProperties: { name: 'orders', qualifiedName: 'db.sch.orders', description: 'Orders', customProperties: { team: 'sales' }, externalUrl: 'https://example.com/orders' },
    editableDatasetProperties: { description: 'Orders, edited' },
    ownership: { owners: [{ owner: 'urn:li:corpuser:alice', type: 'TECHNICAL_OWNER' }, { owner: 'urn:li:corpGroup:finance', type: 'BUSINESS_OWNER' }] },
    globalTags: { tags: [{ tag: 'urn:li:tag:pii' }] },
    glossaryTerms: { terms: [{ urn: 'urn:li:glossaryTerm:email' }], auditStamp: AUDIT },
    domains: { domains: ['urn:li:domain:sales'] },
    container: { container: CONTAINER },
    subTypes: { typeNames: ['Table'] },
    dataPlatformInstance: { platform: 'urn:li:dataPlatform:snowflake', instance: INSTANCE },
    status: { removed: false },
    browsePathsV2: { path: [{ id: 'db', urn: CONTAINER }, { id: 'sch' }] },
    schemaMetadata: {
      schemaName: 'orders',
      platform: 'urn:li:dataPlatform:snowflake',
      version: 0,
      hash: 'h2',
      platformSchema: { 'com.linkedin.schema.MySqlDDL': { tableSchema: '' } },
      primaryKeys: ['id'],
      fields: [
        { fieldPath: 'id', nativeDataType: 'NUMBER(38,0)', type: { type: { 'com.linkedin.schema.NumberType': {} } }, nullable: false, isPartOfKey: true },
        {
          fieldPath: 'email',
          nativeDataType: 'VARCHAR',
          type: { type: { 'com.linkedin.schema.StringType': {} } },
          nullable: true,
          description: 'who ordered',
          globalTags: { tags: [{ tag: 'urn:li:tag:pii' }] },
        },
        { fieldPath: 'lines', nativeDataType: 'ARRAY', type: { type: { 'com.linkedin.schema.ArrayType': { nestedType: ['struct'] } } }, nullable: true },
        { fieldPath: 'address', nativeDataType: 'OBJECT', type: { type: { 'com.linkedin.schema.RecordType': {} } }, nullable: true, recursive: false },
      ],
    },
  },
  [BARE]: { status: { removed: false } },
  [CONTAINER]: { containerProperties: { name: 'db', description: 'the database' } },
  [FLOW]: { dataFlowInfo: { name: 'ETL', project: 'warehouse' } },
  [JOB]: { dataJobInfo: { name: 'Clean', type: { string: 'COMMAND' }, description: 'cleans orders' }, dataPlatformInstance: { platform: 'urn:li:dataPlatform:airflow' } },
  [CHART]: { chartInfo: { title: 'Orders by day', description: 'a chart', lastModified: { created: AUDIT, lastModified: AUDIT } } },
  'urn:li:tag:pii': { tagProperties: { name: 'PII', colorHex: '#ff0000' } },
  'urn:li:glossaryTerm:email': { glossaryTermInfo: { name: 'Email', definition: 'An e-mail address', termSource: 'INTERNAL' } },
  'urn:li:domain:sales': { domainProperties: { name: 'Sales' } },
};

const DATASET_FIELDS = `urn name platform { name }
  properties { name qualifiedName description customProperties { key value associatedUrn } externalUrl }
  editableProperties { description }
  ownership { owners { owner { __typename ... on CorpUser { urn username } ... on CorpGroup { urn name } } type associatedUrn } }
  tags { tags { tag { urn name properties { name colorHex } } } }
  glossaryTerms { terms { term { urn name properties { name definition } } } }
  domain { domain { urn id properties { name } } }
  status { removed } subTypes { typeNames }
  container { urn properties { name description } }
  dataPlatformInstance { urn platform { name } instanceId }
  globalTags { tags { tag { urn } } }
  browsePathV2 { path { name entity { urn type } } }
  schemaMetadata { name platformUrn version hash datasetUrn primaryKeys
    fields { fieldPath jsonPath nullable description type nativeDataType recursive isPartOfKey globalTags { tags { tag { urn } } } glossaryTerms { terms { term { urn } } } } }`;

/** What DATASET's fields answer. */
const DATASET_ANSWER = {
  urn: DATASET,
  name: 'db.sch.orders',
  platform: { name: 'snowflake' },
  properties: { name: 'orders', qualifiedName: 'db.sch.orders', description: 'Orders', customProperties: [{ key: 'team', value: 'sales', associatedUrn: DATASET }], externalUrl: 'https://example.com/orders' },
  editableProperties: { description: 'Orders, edited' },
  ownership: {
    owners: [
      { owner: { __typename: 'CorpUser', urn: 'urn:li:corpuser:alice', username: 'alice' }, type: 'TECHNICAL_OWNER', associatedUrn: DATASET },
      { owner: { __typename: 'CorpGroup', urn: 'urn:li:corpGroup:finance', name: 'finance' }, type: 'BUSINESS_OWNER', associatedUrn: DATASET },
    ],
  },
  tags: { tags: [{ tag: { urn: 'urn:li:tag:pii', name: 'pii', properties: { name: 'PII', colorHex: '#ff0000' } } }] },
  glossaryTerms: { terms: [{ term: { urn: 'urn:li:glossaryTerm:email', name: 'email', properties: { name: 'Email', definition: 'An e-mail address' } } }] },
  domain: { domain: { urn: 'urn:li:domain:sales', id: 'sales', properties: { name: 'Sales' } } },
  status: { removed: false },
  subTypes: { typeNames: ['Table'] },
  container: { urn: CONTAINER, properties: { name: 'db', description: 'the database' } },
  dataPlatformInstance: { urn: INSTANCE, platform: { name: 'snowflake' }, instanceId: 'eu' },
  globalTags: { tags: [{ tag: { urn: 'urn:li:tag:pii' } }] },
  browsePathV2: { path: [{ name: 'db', entity: { urn: CONTAINER, type: 'CONTAINER' } }, { name: 'sch', entity: null }] },
  schemaMetadata: {
    name: 'orders',
    platformUrn: 'urn:li:dataPlatform:snowflake',
    version: 0,
    hash: 'h2',
    datasetUrn: DATASET,
    primaryKeys: ['id'],
    fields: [
      { fieldPath: 'id', jsonPath: null, nullable: false, description: null, type: 'NUMBER', nativeDataType: 'NUMBER(38,0)', recursive: false, isPartOfKey: true, globalTags: null, glossaryTerms: null },
      { fieldPath: 'email', jsonPath: null, nullable: true, description: 'who ordered', type: 'STRING', nativeDataType: 'VARCHAR', recursive: false, isPartOfKey: false, globalTags: { tags: [{ tag: { urn: 'urn:li:tag:pii' } }] }, glossaryTerms: null },
      { fieldPath: 'lines', jsonPath: null, nullable: true, description: null, type: 'ARRAY', nativeDataType: 'ARRAY', recursive: false, isPartOfKey: false, globalTags: null, glossaryTerms: null },
      { fieldPath: 'address', jsonPath: null, nullable: true, description: null, type: 'STRUCT', nativeDataType: 'OBJECT', recursive: false, isPartOfKey: false, globalTags: null, glossaryTerms: null },
    ],
  },
};

for (const backend of searchBackends()) {
  describe(`GraphQL entity fields of common aspects on ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(backend.env);
      for (const [urn, aspects] of Object.entries(FIXTURE)) {
        const type = urn.split(':')[2]!;
        for (const [aspect, value] of Object.entries(aspects)) {
          await text(await s.request(`/openapi/v3/entity/${type}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
        }
      }
      await s.svc.catalog.searchOutbox.deliverAll();
    });
    after(async () => {
      await s?.close();
    });

    test('a dataset read shows its common aspects under DataHub’s field names; one without them answers null', async () => {
      const data = await gqlData(s, `{ dataset(urn: "${DATASET}") { ${DATASET_FIELDS} } bare: dataset(urn: "${BARE}") { properties { name } ownership { owners { type } } tags { tags { context } } domain { associatedUrn } container { urn } status { removed } } }`);
      assert.deepEqual(data.dataset, DATASET_ANSWER);
      assert.deepEqual(data.bare, { properties: null, ownership: null, tags: null, domain: null, container: null, status: { removed: false } });
    });

    test('schemaMetadata(version): 0 is the latest, an earlier version reads as REST v2 shows it, one that was never written is null', async () => {
      const first = { ...(FIXTURE[DATASET]!.schemaMetadata as Record<string, unknown>), hash: 'h1', fields: [] };
      const ds = 'urn:li:dataset:(urn:li:dataPlatform:snowflake,db.sch.versions,PROD)';
      for (const value of [first, FIXTURE[DATASET]!.schemaMetadata]) {
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(ds)}/schemaMetadata?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      }
      const older = JSON.parse(await text(await s.request(`/openapi/v2/entity/dataset/${enc(ds)}/schemaMetadata?version=1`), 200)) as { value: { hash: string } };
      const data = await gqlData<Record<string, { schemaMetadata: { hash: string; fields: unknown[] } | null }>>(
        s,
        `{ latest: dataset(urn: "${ds}") { schemaMetadata { hash fields { fieldPath } } } zero: dataset(urn: "${ds}") { schemaMetadata(version: 0) { hash } }
           one: dataset(urn: "${ds}") { schemaMetadata(version: 1) { hash fields { fieldPath } } } never: dataset(urn: "${ds}") { schemaMetadata(version: 9) { hash } } }`,
      );
      assert.equal(data.latest!.schemaMetadata!.hash, 'h2');
      assert.equal(data.latest!.schemaMetadata!.fields.length, 4);
      assert.deepEqual(data.zero!.schemaMetadata, { hash: 'h2' });
      assert.deepEqual(data.one!.schemaMetadata, { hash: older.value.hash, fields: [] });
      assert.equal(older.value.hash, 'h1');
      assert.equal(data.never!.schemaMetadata, null);
    });

    test('a browse path entry naming an entity type svc does not know shows its name with no entity, not an error', async () => {
      const ds = 'urn:li:dataset:(urn:li:dataPlatform:snowflake,db.sch.browsed,PROD)';
      const value = { path: [{ id: 'elsewhere', urn: 'urn:li:nothing:x' }, { id: 'db', urn: CONTAINER }] };
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(ds)}/browsePathsV2?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      const data = await gqlData<{ dataset: unknown }>(s, `{ dataset(urn: "${ds}") { browsePathV2 { path { name entity { urn } } } } }`);
      assert.deepEqual(data.dataset, { browsePathV2: { path: [{ name: 'elsewhere', entity: null }, { name: 'db', entity: { urn: CONTAINER } }] } });
    });

    test('data jobs, flows and charts: properties named from their info aspects (a chart’s title), the key’s name otherwise', async () => {
      const data = await gqlData(
        s,
        `{ dataJob(urn: "${JOB}") { jobId properties { name description } dataPlatformInstance { urn } dataFlow { properties { name project } } }
           entity(urn: "${CHART}") { ... on Chart { properties { name description } editableProperties { description } } } }`,
      );
      assert.deepEqual(data.dataJob, { jobId: 'clean', properties: { name: 'Clean', description: 'cleans orders' }, dataPlatformInstance: null, dataFlow: { properties: { name: 'ETL', project: 'warehouse' } } });
      assert.deepEqual(data.entity, { properties: { name: 'Orders by day', description: 'a chart' }, editableProperties: null });
    });

    test('every other entity type of the model shows the common aspects it has (an ML model, a glossary node, a user group); not those it has not', async () => {
      const model = 'urn:li:mlModel:(urn:li:dataPlatform:sagemaker,churn,PROD)';
      const node = 'urn:li:glossaryNode:finance';
      const group = 'urn:li:corpGroup:analysts';
      const written: [string, string, Record<string, unknown>][] = [
        [model, 'ownership', { owners: [{ owner: 'urn:li:corpuser:alice', type: 'TECHNICAL_OWNER' }] }],
        [model, 'globalTags', { tags: [{ tag: 'urn:li:tag:pii' }] }],
        [model, 'glossaryTerms', { terms: [{ urn: 'urn:li:glossaryTerm:email' }], auditStamp: AUDIT }],
        [model, 'domains', { domains: ['urn:li:domain:sales'] }],
        [model, 'container', { container: CONTAINER }],
        [model, 'browsePathsV2', { path: [{ id: 'models' }] }],
        [node, 'ownership', { owners: [{ owner: 'urn:li:corpGroup:finance', type: 'BUSINESS_OWNER' }] }],
        [node, 'domains', { domains: ['urn:li:domain:sales'] }],
        [group, 'globalTags', { tags: [{ tag: 'urn:li:tag:pii' }] }],
        [group, 'status', { removed: true }],
      ];
      for (const [urn, aspect, value] of written) {
        await text(await s.request(`/openapi/v3/entity/${urn.split(':')[2]}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      }
      const data = await gqlData(
        s,
        `{ model: entity(urn: "${model}") { type ... on MLModel { ownership { owners { owner { ... on CorpUser { urn } ... on CorpGroup { urn } } type } } tags { tags { tag { urn } } } globalTags { tags { tag { urn } } }
             glossaryTerms { terms { term { urn } } } domain { domain { urn } } container { urn } browsePathV2 { path { name } } status { removed } subTypes { typeNames } } }
           node: entity(urn: "${node}") { type ... on GlossaryNode { ownership { owners { owner { ... on CorpUser { urn } ... on CorpGroup { urn } } } } domain { domain { urn } } tags { tags { context } } } }
           group: entity(urn: "${group}") { type ... on CorpGroup { name tags { tags { tag { urn } } } status { removed } ownership { owners { type } } } } }`,
      );
      assert.deepEqual(data.model, {
        type: 'MLMODEL',
        ownership: { owners: [{ owner: { urn: 'urn:li:corpuser:alice' }, type: 'TECHNICAL_OWNER' }] },
        tags: { tags: [{ tag: { urn: 'urn:li:tag:pii' } }] },
        globalTags: { tags: [{ tag: { urn: 'urn:li:tag:pii' } }] },
        glossaryTerms: { terms: [{ term: { urn: 'urn:li:glossaryTerm:email' } }] },
        domain: { domain: { urn: 'urn:li:domain:sales' } },
        container: { urn: CONTAINER },
        browsePathV2: { path: [{ name: 'models' }] },
        status: null,
        subTypes: null,
      });
      assert.deepEqual(data.node, { type: 'GLOSSARY_NODE', ownership: { owners: [{ owner: { urn: 'urn:li:corpGroup:finance' } }] }, domain: { domain: { urn: 'urn:li:domain:sales' } }, tags: null });
      assert.deepEqual(data.group, { type: 'CORP_GROUP', name: 'analysts', tags: { tags: [{ tag: { urn: 'urn:li:tag:pii' } }] }, status: { removed: true }, ownership: null });
      // A glossary node has no container aspect in DataHub's model: no such field.
      const error = await gqlError(s, `{ entity(urn: "${node}") { ... on GlossaryNode { container { urn } } } }`);
      assert.match(error.message, /container/);
    });

    test('search results carry the same fields (their entities read with the aspects the selection names)', async () => {
      const data = await gqlData<{ scrollAcrossEntities: { searchResults: { entity: unknown }[] } }>(
        s,
        `{ scrollAcrossEntities(input: { types: [DATASET], query: "*", count: 10, orFilters: [{ and: [{ field: "tags", values: ["urn:li:tag:pii"] }] }] }) { searchResults { entity { ... on Dataset { ${DATASET_FIELDS} } } } } }`,
      );
      assert.deepEqual(data.scrollAcrossEntities.searchResults.map((r) => r.entity), [DATASET_ANSWER]);
    });
  });
}

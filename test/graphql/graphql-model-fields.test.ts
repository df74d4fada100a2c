/**
 * The fields DataHub's GraphQL API gives the other entity types of its model from their own aspects
 * (modelFields.graphql): ML models, model groups, features, primary keys and feature tables, glossary
 * nodes, data products, users, groups, notebooks, a dataset's editableSchemaMetadata, and the
 * `deprecation` and `institutionalMemory` of every type with those aspects, under DataHub's names, on
 * entity reads and on search results, on both search backends. Names an info aspect does not give are
 * the key's, as DataHub's are.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gqlData } from '../support/graphql.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:snowflake,db.sch.customers,PROD)';
const MODEL = 'urn:li:mlModel:(urn:li:dataPlatform:sagemaker,churn,PROD)';
const GROUP = 'urn:li:mlModelGroup:(urn:li:dataPlatform:sagemaker,churn-models,PROD)';
const FEATURE = 'urn:li:mlFeature:(customers,tenure)';
const PRIMARY_KEY = 'urn:li:mlPrimaryKey:(customers,id)';
const TABLE = 'urn:li:mlFeatureTable:(urn:li:dataPlatform:feast,customers)';
const NODE = 'urn:li:glossaryNode:finance';
const PRODUCT = 'urn:li:dataProduct:customer-360';
const ALICE = 'urn:li:corpuser:alice';
const ANALYSTS = 'urn:li:corpGroup:analysts';
const OKTA_GROUP = 'urn:li:corpGroup:okta-admins';
const NOTEBOOK = 'urn:li:notebook:(querybook,42)';
const JOB = 'urn:li:dataJob:(urn:li:dataFlow:(airflow,train,PROD),fit)';
const STAMP = { time: 1_700_000_000_000, actor: ALICE };

/** Aspects by entity, written through REST v3 before the tests. */
const FIXTURE: Record<string, Record<string, unknown>> = {
  [DATASET]: {
    editableSchemaMetadata: {
      editableSchemaFieldInfo: [
        { fieldPath: 'email', description: 'who bought', globalTags: { tags: [{ tag: 'urn:li:tag:pii' }] }, glossaryTerms: { terms: [{ urn: 'urn:li:glossaryTerm:email' }], auditStamp: STAMP } },
        { fieldPath: 'id' },
      ],
    },
  },
  [MODEL]: {
    mlModelProperties: {
      name: 'Churn',
      description: 'who will leave',
      type: 'xgboost',
      version: { versionTag: '3' },
      externalUrl: 'https://example.com/churn',
      created: STAMP,
      date: 1_700_000_000_000,
      hyperParams: [{ name: 'depth', value: '6' }],
      trainingMetrics: [{ name: 'auc', description: 'area under the curve', value: '0.91' }],
      mlFeatures: [FEATURE],
      tags: ['prod'],
      groups: [GROUP, DATASET],
      customProperties: { team: 'growth' },
      trainingJobs: [JOB],
    },
    editableMlModelProperties: { description: 'who will leave, edited' },
    deprecation: { deprecated: true, note: 'use churn v4', actor: ALICE, decommissionTime: 1_800_000_000_000, replacement: DATASET },
    institutionalMemory: { elements: [{ url: 'https://example.com/runbook', description: 'Runbook', createStamp: STAMP }] },
  },
  [GROUP]: { mlModelGroupProperties: { description: 'churn models', createdAt: 5, version: { versionTag: 'v1' }, created: { time: 5 } } },
  [FEATURE]: { mlFeatureProperties: { description: 'months as a customer', dataType: 'CONTINUOUS', version: { versionTag: '1' }, sources: [DATASET] } },
  [PRIMARY_KEY]: { mlPrimaryKeyProperties: { dataType: 'NOMINAL', sources: [DATASET] }, editableMlPrimaryKeyProperties: { description: 'the customer' } },
  [TABLE]: { mlFeatureTableProperties: { description: 'customer features', mlFeatures: [FEATURE], mlPrimaryKeys: [PRIMARY_KEY], customProperties: { store: 'redis' } } },
  [NODE]: { glossaryNodeInfo: { definition: 'Money matters', customProperties: { owner: 'cfo' } } },
  [PRODUCT]: { dataProductProperties: { name: 'Customer 360', externalUrl: 'https://example.com/c360', assets: [{ destinationUrn: DATASET }, { destinationUrn: MODEL }] } },
  [ALICE]: {
    corpUserInfo: { active: true, displayName: 'Alice A.', email: 'alice@example.com', title: 'Analyst', managerUrn: 'urn:li:corpuser:bob', firstName: 'Alice', countryCode: 'NL', customProperties: { desk: '4' } },
    corpUserEditableInfo: { aboutMe: 'numbers', teams: ['data'], skills: ['sql'], pictureLink: 'https://example.com/alice.png', slack: '@alice' },
    corpUserStatus: { status: 'SUSPENDED', lastModified: STAMP },
  },
  [ANALYSTS]: {
    corpGroupInfo: { displayName: 'Analysts', email: 'analysts@example.com', admins: [ALICE], members: [ALICE, 'urn:li:corpuser:bob'], groups: [] },
    corpGroupEditableInfo: { description: 'the analysts', slack: '#analysts' },
  },
  [OKTA_GROUP]: { origin: { type: 'EXTERNAL', externalType: 'okta' } },
  [NOTEBOOK]: {
    notebookInfo: { title: 'Churn analysis', description: 'why they leave', changeAuditStamps: { created: STAMP, lastModified: STAMP } },
    editableNotebookProperties: { description: 'edited' },
  },
};

const MODEL_FIELDS = `name platform { name } origin description
  properties { name description type version externalUrl created { time actor } lastModified { time } date hyperParams { name value } trainingMetrics { name description value }
    mlFeatures tags groups { urn name } customProperties { key value associatedUrn } mlModelLineageInfo { trainingJobs downstreamJobs } }
  editableProperties { description }
  deprecation { deprecated note actor decommissionTime replacement { urn } }
  institutionalMemory { elements { url label description created { time actor } actor { ... on CorpUser { urn } } associatedUrn } }`;

const MODEL_ANSWER = {
  name: 'churn',
  platform: { name: 'sagemaker' },
  origin: 'PROD',
  description: 'who will leave',
  properties: {
    name: 'Churn',
    description: 'who will leave',
    type: 'xgboost',
    version: '3',
    externalUrl: 'https://example.com/churn',
    created: STAMP,
    lastModified: null,
    date: 1_700_000_000_000,
    hyperParams: [{ name: 'depth', value: '6' }],
    trainingMetrics: [{ name: 'auc', description: 'area under the curve', value: '0.91' }],
    mlFeatures: [FEATURE],
    tags: ['prod'],
    // Only the groups among the URNs: a field typed as a model group shows no dataset.
    groups: [{ urn: GROUP, name: 'churn-models' }],
    customProperties: [{ key: 'team', value: 'growth', associatedUrn: MODEL }],
    mlModelLineageInfo: { trainingJobs: [JOB], downstreamJobs: null },
  },
  editableProperties: { description: 'who will leave, edited' },
  deprecation: { deprecated: true, note: 'use churn v4', actor: ALICE, decommissionTime: 1_800_000_000_000, replacement: { urn: DATASET } },
  institutionalMemory: { elements: [{ url: 'https://example.com/runbook', label: 'Runbook', description: 'Runbook', created: STAMP, actor: { urn: ALICE }, associatedUrn: MODEL }] },
};

for (const backend of searchBackends()) {
  describe(`GraphQL fields of DataHub's other entity types on ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(backend.env);
      for (const [urn, aspects] of Object.entries(FIXTURE)) {
        for (const [aspect, value] of Object.entries(aspects)) {
          await text(await s.request(`/openapi/v3/entity/${urn.split(':')[2]}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
        }
      }
      await s.svc.catalog.searchOutbox.deliverAll();
    });
    after(async () => {
      await s?.close();
    });

    test('ML models and model groups: properties, editable properties, deprecation and links; a group named by its key without a name', async () => {
      const data = await gqlData(
        s,
        `{ model: entity(urn: "${MODEL}") { type ... on MLModel { ${MODEL_FIELDS} } }
           group: entity(urn: "${GROUP}") { ... on MLModelGroup { name origin description properties { name description createdAt created { time actor } version { versionTag } } editableProperties { description } deprecation { deprecated } } } }`,
      );
      assert.deepEqual(data.model, { type: 'MLMODEL', ...MODEL_ANSWER });
      assert.deepEqual(data.group, {
        name: 'churn-models',
        origin: 'PROD',
        description: 'churn models',
        properties: { name: 'churn-models', description: 'churn models', createdAt: 5, created: { time: 5, actor: null }, version: { versionTag: 'v1' } },
        editableProperties: null,
        deprecation: null,
      });
    });

    test('features, primary keys and feature tables: their keys, data types and sources, under both of DataHub’s names', async () => {
      const data = await gqlData(
        s,
        `{ feature: entity(urn: "${FEATURE}") { ... on MLFeature { name featureNamespace description dataType properties { description dataType version { versionTag } sources { urn name } customProperties { key } } featureProperties { dataType } editableProperties { description } } }
           key: entity(urn: "${PRIMARY_KEY}") { ... on MLPrimaryKey { name featureNamespace description dataType properties { dataType sources { urn } } primaryKeyProperties { dataType } editableProperties { description } } }
           table: entity(urn: "${TABLE}") { ... on MLFeatureTable { name platform { name } description properties { description mlFeatures { urn name } mlPrimaryKeys { urn featureNamespace } customProperties { key value } } featureTableProperties { description } editableProperties { description } } } }`,
      );
      assert.deepEqual(data.feature, {
        name: 'tenure',
        featureNamespace: 'customers',
        description: 'months as a customer',
        dataType: 'CONTINUOUS',
        properties: { description: 'months as a customer', dataType: 'CONTINUOUS', version: { versionTag: '1' }, sources: [{ urn: DATASET, name: 'db.sch.customers' }], customProperties: [] },
        featureProperties: { dataType: 'CONTINUOUS' },
        editableProperties: null,
      });
      assert.deepEqual(data.key, {
        name: 'id',
        featureNamespace: 'customers',
        description: null,
        dataType: 'NOMINAL',
        properties: { dataType: 'NOMINAL', sources: [{ urn: DATASET }] },
        primaryKeyProperties: { dataType: 'NOMINAL' },
        editableProperties: { description: 'the customer' },
      });
      assert.deepEqual(data.table, {
        name: 'customers',
        platform: { name: 'feast' },
        description: 'customer features',
        properties: {
          description: 'customer features',
          mlFeatures: [{ urn: FEATURE, name: 'tenure' }],
          mlPrimaryKeys: [{ urn: PRIMARY_KEY, featureNamespace: 'customers' }],
          customProperties: [{ key: 'store', value: 'redis' }],
        },
        featureTableProperties: { description: 'customer features' },
        editableProperties: null,
      });
    });

    test('glossary nodes (a definition as description, the key as name), data products (their assets counted) and notebooks', async () => {
      const data = await gqlData(
        s,
        `{ node: entity(urn: "${NODE}") { ... on GlossaryNode { properties { name description customProperties { key value associatedUrn } } } }
           product: entity(urn: "${PRODUCT}") { ... on DataProduct { properties { name description externalUrl numAssets customProperties { key } } } }
           notebook: entity(urn: "${NOTEBOOK}") { ... on Notebook { tool notebookId info { title description externalUrl customProperties { key } changeAuditStamps { created { time actor } lastModified { time } deleted { time } } } editableProperties { description } } } }`,
      );
      assert.deepEqual(data.node, { properties: { name: 'finance', description: 'Money matters', customProperties: [{ key: 'owner', value: 'cfo', associatedUrn: NODE }] } });
      assert.deepEqual(data.product, { properties: { name: 'Customer 360', description: null, externalUrl: 'https://example.com/c360', numAssets: 2, customProperties: [] } });
      assert.deepEqual(data.notebook, {
        tool: 'querybook',
        notebookId: '42',
        info: { title: 'Churn analysis', description: 'why they leave', externalUrl: null, customProperties: [], changeAuditStamps: { created: STAMP, lastModified: { time: STAMP.time }, deleted: null } },
        editableProperties: { description: 'edited' },
      });
    });

    test('users (properties, the older info, editable properties, the user status as DataHub’s enum) and groups (members, origin UNKNOWN without its aspect)', async () => {
      const userFields = 'active displayName email title manager { urn username } firstName lastName countryCode';
      const data = await gqlData(
        s,
        `{ user: entity(urn: "${ALICE}") { ... on CorpUser { username status properties { ${userFields} customProperties { key value } } info { ${userFields} }
             editableProperties { aboutMe teams skills pictureLink slack phone } } }
           group: entity(urn: "${ANALYSTS}") { ... on CorpGroup { name properties { displayName description email slack } info { displayName admins { urn } members { urn } groups }
             editableProperties { description slack pictureLink } origin { type externalType } } }
           okta: entity(urn: "${OKTA_GROUP}") { ... on CorpGroup { properties { displayName } origin { type externalType } } } }`,
      );
      const properties = { active: true, displayName: 'Alice A.', email: 'alice@example.com', title: 'Analyst', manager: { urn: 'urn:li:corpuser:bob', username: 'bob' }, firstName: 'Alice', lastName: null, countryCode: 'NL' };
      assert.deepEqual(data.user, {
        username: 'alice',
        status: 'SUSPENDED',
        properties: { ...properties, customProperties: [{ key: 'desk', value: '4' }] },
        info: properties,
        editableProperties: { aboutMe: 'numbers', teams: ['data'], skills: ['sql'], pictureLink: 'https://example.com/alice.png', slack: '@alice', phone: null },
      });
      assert.deepEqual(data.group, {
        name: 'analysts',
        properties: { displayName: 'Analysts', description: null, email: 'analysts@example.com', slack: null },
        info: { displayName: 'Analysts', admins: [{ urn: ALICE }], members: [{ urn: ALICE }, { urn: 'urn:li:corpuser:bob' }], groups: [] },
        editableProperties: { description: 'the analysts', slack: '#analysts', pictureLink: null },
        origin: { type: 'UNKNOWN', externalType: null },
      });
      assert.deepEqual(data.okta, { properties: null, origin: { type: 'EXTERNAL', externalType: 'okta' } });
    });

    test('a dataset’s editableSchemaMetadata: each field’s description, tags (under both names) and terms', async () => {
      const data = await gqlData(
        s,
        `{ dataset(urn: "${DATASET}") { editableSchemaMetadata { editableSchemaFieldInfo { fieldPath description tags { tags { tag { urn } associatedUrn } } globalTags { tags { tag { urn } } } glossaryTerms { terms { term { urn } } } } } } }`,
      );
      const pii = { tags: [{ tag: { urn: 'urn:li:tag:pii' } }] };
      assert.deepEqual(data.dataset, {
        editableSchemaMetadata: {
          editableSchemaFieldInfo: [
            { fieldPath: 'email', description: 'who bought', tags: { tags: [{ tag: { urn: 'urn:li:tag:pii' }, associatedUrn: DATASET }] }, globalTags: pii, glossaryTerms: { terms: [{ term: { urn: 'urn:li:glossaryTerm:email' } }] } },
            { fieldPath: 'id', description: null, tags: null, globalTags: null, glossaryTerms: null },
          ],
        },
      });
    });

    test('search results carry the same fields (their entities read with the aspects the selection names)', async () => {
      const data = await gqlData<{ scrollAcrossEntities: { searchResults: { entity: unknown }[] } }>(
        s,
        `{ scrollAcrossEntities(input: { types: [MLMODEL], query: "*", count: 10 }) { searchResults { entity { ... on MLModel { ${MODEL_FIELDS} } } } } }`,
      );
      assert.deepEqual(data.scrollAcrossEntities.searchResults.map((r) => r.entity), [MODEL_ANSWER]);
    });
  });
}

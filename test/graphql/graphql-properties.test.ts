/**
 * Structured properties over GraphQL (`/api/graphql`): the seed's mutations verbatim, the reads, each
 * validation message (the same as REST's for the same input), soft delete, versions, hard delete,
 * authorization, error shapes and limits; and that a GraphQL write and a REST read (and the reverse)
 * see the same data.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDataset, datasetUrn, definitionOf, propertyUrn, readValues, setValues, writeDefinition } from '../support/structuredProperties.ts';
import { gqlData, gqlError, graphql } from '../support/graphql.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';
import { HARD_DELETE_TASK, waitForTask } from '../support/tasks.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(() => s.close());

const RETENTION = propertyUrn('retentionTime');

// DataHub's documented create mutation, with the seed's input forms (`urn:li:dataType:number`).
const CREATE_RETENTION = `mutation createStructuredProperty {
  createStructuredProperty(
    input: {
      id: "retentionTime",
      qualifiedName:"retentionTime",
      displayName: "Retention Time",
      description: "Retention Time is used to figure out how long to retain records in a dataset",
      valueType: "urn:li:dataType:number",
      allowedValues: [
        {numberValue: 30, description: "30 days, usually reserved for datasets that are ephemeral and contain pii"},
        {numberValue: 90, description:"description: Use this for datasets that drive monthly reporting but contain pii"},
        {numberValue: 365, description:"Use this for non-sensitive data that can be retained for longer"}
      ],
      cardinality: SINGLE,
      entityTypes: ["urn:li:entityType:dataset", "urn:li:entityType:dataFlow"],
    }
  ) {
    urn
  }
}`;

const DEFINITION_FIELDS = `urn type exists definition {
  qualifiedName displayName description cardinality immutable
  valueType { urn type info { type qualifiedName displayName } }
  entityTypes { urn type info { type qualifiedName } }
  allowedValues { value { ... on NumberValue { numberValue } ... on StringValue { stringValue } } description }
}`;

async function restDefinition(urn: string): Promise<Record<string, any>> {
  const body = JSON.parse(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition`), 200));
  return body.propertyDefinition.value;
}

/** The message of a REST rejection (v3). */
async function restMessage(res: Response, status: number): Promise<string> {
  return (JSON.parse(await text(res, status)) as { message: string }).message;
}

async function token(name: string, role: string): Promise<string> {
  const res = await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name, role }) });
  return (JSON.parse(await text(res, 201)) as { token: string }).token;
}

function upsert(assetUrn: string, propertyUrn: string, values: string) {
  return `mutation { upsertStructuredProperties(input: {assetUrn: ${JSON.stringify(assetUrn)}, structuredPropertyInputParams: [{structuredPropertyUrn: ${JSON.stringify(propertyUrn)}, values: [${values}]}]}) { properties { structuredProperty { urn } values { ... on NumberValue { numberValue } ... on StringValue { stringValue } } associatedUrn } } }`;
}

const softDelete = async (urn: string, removed: boolean) =>
  text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed } }) }), 200);

describe('createStructuredProperty', () => {
  test('the documented mutation creates the property, read back the same over GraphQL and REST', async () => {
    const data = await gqlData(s, CREATE_RETENTION);
    assert.deepEqual(data, { createStructuredProperty: { urn: RETENTION } });
    const read = await gqlData(s, `{ structuredProperty(urn: "${RETENTION}") { ${DEFINITION_FIELDS} } }`);
    assert.deepEqual(read.structuredProperty, {
      urn: RETENTION,
      type: 'STRUCTURED_PROPERTY',
      exists: true,
      definition: {
        qualifiedName: 'retentionTime',
        displayName: 'Retention Time',
        description: 'Retention Time is used to figure out how long to retain records in a dataset',
        cardinality: 'SINGLE',
        immutable: false,
        valueType: { urn: 'urn:li:dataType:svc.number', type: 'DATA_TYPE', info: { type: 'NUMBER', qualifiedName: 'svc.number', displayName: 'Number' } },
        entityTypes: [
          { urn: 'urn:li:entityType:svc.dataset', type: 'ENTITY_TYPE', info: { type: 'DATASET', qualifiedName: 'svc.dataset' } },
          { urn: 'urn:li:entityType:svc.dataFlow', type: 'ENTITY_TYPE', info: { type: 'DATA_FLOW', qualifiedName: 'svc.dataFlow' } },
        ],
        allowedValues: [
          { value: { numberValue: 30 }, description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
          { value: { numberValue: 90 }, description: 'description: Use this for datasets that drive monthly reporting but contain pii' },
          { value: { numberValue: 365 }, description: 'Use this for non-sensitive data that can be retained for longer' },
        ],
      },
    });
    // REST shows what GraphQL wrote, echoing only what was given (no immutable, no audit stamps).
    const rest = await restDefinition(RETENTION);
    assert.deepEqual(rest, {
      qualifiedName: 'retentionTime',
      displayName: 'Retention Time',
      description: 'Retention Time is used to figure out how long to retain records in a dataset',
      valueType: 'urn:li:dataType:svc.number',
      cardinality: 'SINGLE',
      entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'],
      allowedValues: [
        { value: { double: 30 }, description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
        { value: { double: 90 }, description: 'description: Use this for datasets that drive monthly reporting but contain pii' },
        { value: { double: 365 }, description: 'Use this for non-sensitive data that can be retained for longer' },
      ],
    });
  });

  test('a property created over REST reads the same over GraphQL; the id defaults to the qualified name', async () => {
    const urn = propertyUrn('test.rest.made');
    await text(await writeDefinition(s, urn, definitionOf('test.rest.made', { displayName: 'Made over REST' })), 200);
    const read = await gqlData(s, `{ structuredProperty(urn: "${urn}") { definition { qualifiedName displayName cardinality valueType { urn } } } }`);
    assert.deepEqual(read.structuredProperty.definition, { qualifiedName: 'test.rest.made', displayName: 'Made over REST', cardinality: 'SINGLE', valueType: { urn: 'urn:li:dataType:svc.string' } });
    const made = await gqlData(s, `mutation { createStructuredProperty(input: {qualifiedName: "test.no.id", valueType: "urn:li:dataType:svc.string", entityTypes: ["dataset"]}) { urn } }`);
    assert.equal(made.createStructuredProperty.urn, propertyUrn('test.no.id'));
    // Created without a cardinality: stored as given, shown as the SINGLE it is checked as.
    assert.equal((await restDefinition(propertyUrn('test.no.id'))).cardinality, undefined);
    const single = await gqlData(s, `{ structuredProperty(urn: "${propertyUrn('test.no.id')}") { definition { cardinality } } }`);
    assert.deepEqual(single.structuredProperty.definition, { cardinality: 'SINGLE' });
  });

  test('creating a property that exists is a conflict, and changes nothing', async () => {
    const before = await restDefinition(RETENTION);
    const err = await gqlError(s, CREATE_RETENTION.replace('cardinality: SINGLE', 'cardinality: MULTIPLE'));
    assert.equal(err.message, `A structured property already exists with this urn: ${RETENTION}`);
    assert.deepEqual(err.extensions, { code: 409, type: 'CONFLICT' });
    assert.deepEqual(await restDefinition(RETENTION), before);
  });

  test('an allowed value must hold exactly one of stringValue and numberValue', async () => {
    const err = await gqlError(
      s,
      `mutation { createStructuredProperty(input: {qualifiedName: "test.bad.allowed", valueType: "urn:li:dataType:number", entityTypes: ["urn:li:entityType:dataset"], allowedValues: [{numberValue: 1, stringValue: "one"}, {description: "none"}]}) { urn } }`,
    );
    assert.equal(err.message, 'allowedValues[0]: each value must provide exactly one of stringValue or numberValue; allowedValues[1]: each value must provide exactly one of stringValue or numberValue');
    assert.deepEqual(err.extensions?.code, 400);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(propertyUrn('test.bad.allowed'))}/propertyDefinition`), 404);
  });

  test('an invalid definition gets REST’s message for the same definition', async () => {
    const bad = { qualifiedName: 'test.bad.type', valueType: 'urn:li:dataType:svc.nope', entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.nothing'] };
    const rest = await restMessage(await writeDefinition(s, propertyUrn('test.bad.type'), bad), 400);
    const err = await gqlError(s, `mutation { createStructuredProperty(input: {qualifiedName: "test.bad.type", valueType: "urn:li:dataType:svc.nope", entityTypes: ["urn:li:entityType:svc.dataset", "urn:li:entityType:svc.nothing"]}) { urn } }`);
    assert.equal(err.message, rest);
    assert.deepEqual(err.extensions, { code: 400, type: 'BAD_REQUEST', violations: err.extensions?.violations });
  });

  test('a reader may not create, with DataHub’s message', async () => {
    const reader = await token('gql-reader', 'reader');
    const err = await gqlError(s, `mutation { createStructuredProperty(input: {qualifiedName: "test.by.reader", valueType: "urn:li:dataType:svc.string", entityTypes: ["dataset"]}) { urn } }`, undefined, reader);
    assert.equal(err.message, 'Unable to create structured property. Please contact your admin.');
    // DataHub's GraphQL type of a 403.
    assert.equal(err.extensions?.code, 403);
    assert.equal(err.extensions?.type, 'UNAUTHORIZED');
    assert.match(String(err.extensions?.detail), /needs a token with the writer role/);
  });
});

describe('updateStructuredProperty', () => {
  test('the documented mutation appends allowed values and changes the display name; REST reads the result', async () => {
    const data = await gqlData(
      s,
      `mutation updateStructuredProperty {
        updateStructuredProperty(
          input: {
            urn: "${RETENTION}",
            displayName: "Retention Time (days)",
            description: "Retention Time is used to figure out how long to retain records in a dataset",
            newAllowedValues: [
              { numberValue: 730, description: "Two years" },
              { numberValue: 30, description: "30 days" }
            ]
          }
        ) {
          urn
        }
      }`,
    );
    assert.deepEqual(data, { updateStructuredProperty: { urn: RETENTION } });
    const rest = await restDefinition(RETENTION);
    assert.equal(rest.displayName, 'Retention Time (days)');
    // Appended; a value given again takes the new description.
    assert.deepEqual(
      rest.allowedValues.map((a: { value: { double: number }; description: string }) => [a.value.double, a.description]),
      [
        [30, '30 days'],
        [90, 'description: Use this for datasets that drive monthly reporting but contain pii'],
        [365, 'Use this for non-sensitive data that can be retained for longer'],
        [730, 'Two years'],
      ],
    );
  });

  test('entity types and allowed types are appended once; cardinality goes to MULTIPLE', async () => {
    const urn = propertyUrn('test.refs');
    await text(await writeDefinition(s, urn, definitionOf('test.refs', { valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: ['urn:li:entityType:svc.corpuser'] } })), 200);
    const data = await gqlData(
      s,
      `mutation { updateStructuredProperty(input: {urn: "${urn}", newEntityTypes: ["urn:li:entityType:dataset", "dataFlow"], typeQualifier: {newAllowedTypes: ["corpGroup", "urn:li:entityType:svc.corpuser"]}, setCardinalityAsMultiple: true}) {
        definition { cardinality entityTypes { urn } typeQualifier { allowedTypes { urn info { type } } } } } }`,
    );
    assert.deepEqual(data.updateStructuredProperty.definition, {
      cardinality: 'MULTIPLE',
      entityTypes: [{ urn: 'urn:li:entityType:svc.dataset' }, { urn: 'urn:li:entityType:svc.dataFlow' }],
      typeQualifier: { allowedTypes: [{ urn: 'urn:li:entityType:svc.corpuser', info: { type: 'CORP_USER' } }, { urn: 'urn:li:entityType:svc.corpGroup', info: { type: 'CORP_GROUP' } }] },
    });
  });

  test("a rule's message names an allowed value where the mutation gave it, and nothing is written", async () => {
    const urn = propertyUrn('test.grades');
    const allowed = [
      { value: { double: 1 }, description: 'one' },
      { value: { double: 2 }, description: 'two' },
    ];
    await text(await writeDefinition(s, urn, definitionOf('test.grades', { valueType: 'urn:li:dataType:svc.number', allowedValues: allowed })), 200);
    // The second input lands third in the definition (the first replaces the stored 2).
    const err = await gqlError(s, `mutation { updateStructuredProperty(input: {urn: "${urn}", newAllowedValues: [{numberValue: 2, description: "deux"}, {stringValue: "three"}]}) { urn } }`);
    assert.equal(err.message, 'newAllowedValues[1], value: {string=three} should be a number');
    assert.equal(err.extensions?.code, 400);
    assert.deepEqual((await restDefinition(urn)).allowedValues, allowed);
  });

  test('a property without a definition cannot be updated', async () => {
    const err = await gqlError(s, `mutation { updateStructuredProperty(input: {urn: "${propertyUrn('test.never')}", displayName: "x"}) { urn } }`);
    assert.equal(err.message, `Attempting to update a structured property with no definition aspect: ${propertyUrn('test.never')}`);
    assert.equal(err.extensions?.code, 404);
  });
});

describe('values', () => {
  const ds = datasetUrn('gql.orders');
  const tier = propertyUrn('test.tier');

  before(async () => {
    await createDataset(s, 'gql.orders');
    await text(await writeDefinition(s, tier, definitionOf('test.tier')), 200);
  });

  test('the documented upsert sets a value, which REST reads; others are kept, the named one replaced', async () => {
    const data = await gqlData(s, upsert(ds, RETENTION, '{numberValue: 365}'));
    assert.deepEqual(data.upsertStructuredProperties.properties, [{ structuredProperty: { urn: RETENTION }, values: [{ numberValue: 365 }], associatedUrn: ds }]);
    await gqlData(s, upsert(ds, tier, '{stringValue: "gold"}'));
    await gqlData(s, upsert(ds, RETENTION, '{numberValue: 30}'));
    assert.deepEqual(await readValues(s, ds), [
      { propertyUrn: RETENTION, values: [{ double: 30 }] },
      { propertyUrn: tier, values: [{ string: 'gold' }] },
    ]);
  });

  test('values set over REST read the same over GraphQL (entity and dataset)', async () => {
    const other = await createDataset(s, 'gql.rest.set');
    await text(await setValues(s, other, [{ propertyUrn: RETENTION, values: [{ double: 90 }] }]), 200);
    const q = `{ VAR(urn: "${other}") { urn type ... on Dataset { name origin platform { urn name } structuredProperties { properties { structuredProperty { urn definition { qualifiedName } } values { ... on NumberValue { numberValue } } } } } } }`;
    for (const field of ['entity', 'dataset']) {
      const data = await gqlData(s, q.replace('VAR', field));
      assert.deepEqual(data[field], {
        urn: other,
        type: 'DATASET',
        name: 'gql.rest.set',
        origin: 'PROD',
        platform: { urn: 'urn:li:dataPlatform:hive', name: 'hive' },
        structuredProperties: { properties: [{ structuredProperty: { urn: RETENTION, definition: { qualifiedName: 'retentionTime' } }, values: [{ numberValue: 90 }] }] },
      });
    }
    assert.deepEqual(await gqlData(s, `{ dataset(urn: "${datasetUrn('gql.none')}") { urn } }`), { dataset: null });
  });

  test('a value not allowed gets REST’s message, and changes nothing', async () => {
    const rest = await restMessage(await setValues(s, ds, [{ propertyUrn: RETENTION, values: [{ double: 31 }] }]), 400);
    const err = await gqlError(s, upsert(ds, RETENTION, '{numberValue: 31}'));
    assert.equal(err.message, rest);
    assert.match(err.message, /should be one of/);
    assert.equal(err.extensions?.code, 400);
    assert.deepEqual((await readValues(s, ds))[0], { propertyUrn: RETENTION, values: [{ double: 30 }] });
  });

  test('a value must hold exactly one of stringValue and numberValue', async () => {
    const err = await gqlError(s, upsert(ds, RETENTION, '{}'));
    assert.equal(err.message, 'structuredPropertyInputParams[0].values[0]: each value must provide exactly one of stringValue or numberValue');
  });

  test('the asset must exist (REST’s message); an unknown property is a failed precondition as on REST', async () => {
    const missing = datasetUrn('gql.missing');
    const restMissing = await restMessage(await setValues(s, missing, [{ propertyUrn: RETENTION, values: [{ double: 30 }] }]), 412);
    const err = await gqlError(s, upsert(missing, RETENTION, '{numberValue: 30}'));
    assert.equal(err.message, restMissing);
    assert.match(err.message, /does not exist/);
    assert.equal(err.extensions?.code, 412);
    const removeErr = await gqlError(s, `mutation { removeStructuredProperties(input: {assetUrn: "${missing}", structuredPropertyUrns: ["${RETENTION}"]}) { properties { structuredProperty { urn } } } }`);
    assert.equal(removeErr.message, restMissing);
    const unknown = propertyUrn('test.unknown');
    const rest = await restMessage(await setValues(s, ds, [{ propertyUrn: unknown, values: [{ string: 'x' }] }]), 412);
    const err2 = await gqlError(s, upsert(ds, unknown, '{stringValue: "x"}'));
    assert.equal(err2.message, rest);
    assert.equal(err2.extensions?.code, 412);
  });

  test('the documented remove drops the named properties and ignores those not set', async () => {
    const data = await gqlData(
      s,
      `mutation removeStructuredProperties {
        removeStructuredProperties(
          input: {
            assetUrn: "${ds}",
            structuredPropertyUrns: ["${RETENTION}", "${propertyUrn('test.not.set')}"]
          }
        ) {
          properties {
            structuredProperty {urn}
          }
        }
      }`,
    );
    assert.deepEqual(data.removeStructuredProperties.properties, [{ structuredProperty: { urn: tier } }]);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: tier, values: [{ string: 'gold' }] }]);
  });

  test('soft delete: values hidden on GraphQL reads, setting and updating denied with REST’s messages; restore shows them again', async () => {
    const flagged = await createDataset(s, 'gql.soft');
    const prop = propertyUrn('test.soft');
    await text(await writeDefinition(s, prop, definitionOf('test.soft')), 200);
    await gqlData(s, upsert(flagged, prop, '{stringValue: "kept"}'));
    await softDelete(prop, true);
    const read = await gqlData(s, `{ dataset(urn: "${flagged}") { structuredProperties { properties { structuredProperty { urn } } } } }`);
    assert.deepEqual(read.dataset.structuredProperties.properties, []);

    const restSet = await restMessage(await setValues(s, flagged, [{ propertyUrn: prop, values: [{ string: 'new' }] }]), 400);
    const setErr = await gqlError(s, upsert(flagged, prop, '{stringValue: "new"}'));
    assert.equal(setErr.message, restSet);

    const restUpdate = await restMessage(await writeDefinition(s, prop, definitionOf('test.soft', { displayName: 'x' })), 400);
    const updateErr = await gqlError(s, `mutation { updateStructuredProperty(input: {urn: "${prop}", displayName: "x"}) { urn } }`);
    assert.equal(updateErr.message, restUpdate);

    await softDelete(prop, false);
    const restored = await gqlData(s, `{ dataset(urn: "${flagged}") { structuredProperties { properties { structuredProperty { urn } values { ... on StringValue { stringValue } } } } } }`);
    assert.deepEqual(restored.dataset.structuredProperties.properties, [{ structuredProperty: { urn: prop }, values: [{ stringValue: 'kept' }] }]);
  });

  test('a versioned breaking change hides values written under the older version from GraphQL reads', async () => {
    const entity = await createDataset(s, 'gql.versioned');
    const prop = propertyUrn('test.versioned');
    await text(await writeDefinition(s, prop, definitionOf('test.versioned', { cardinality: 'MULTIPLE' })), 200);
    await gqlData(s, upsert(entity, prop, '{stringValue: "a"}, {stringValue: "b"}'));
    // MULTIPLE → SINGLE is breaking: refused without a version, accepted with one.
    const refused = await writeDefinition(s, prop, definitionOf('test.versioned', { cardinality: 'SINGLE' }));
    assert.equal(refused.status, 400);
    await text(await writeDefinition(s, prop, definitionOf('test.versioned', { cardinality: 'SINGLE', version: '20260101000000' })), 200);
    const read = await gqlData(s, `{ dataset(urn: "${entity}") { structuredProperties { properties { structuredProperty { urn } } } } }`);
    assert.deepEqual(read.dataset.structuredProperties.properties, []);
    const again = await gqlData(s, upsert(entity, prop, '{stringValue: "c"}'));
    assert.deepEqual(again.upsertStructuredProperties.properties, [{ structuredProperty: { urn: prop }, values: [{ stringValue: 'c' }], associatedUrn: entity }]);
  });

  test('update and delete of a URN that is not a structured property’s say so, in GraphQL’s terms', async () => {
    const ds = datasetUrn('gql.not.a.property');
    for (const mutation of [`mutation { updateStructuredProperty(input: {urn: "${ds}", displayName: "x"}) { urn } }`, `mutation { deleteStructuredProperty(input: {urn: "${ds}"}) }`, `{ structuredProperty(urn: "${ds}") { urn } }`]) {
      const err = await gqlError(s, mutation);
      assert.equal(err.message, `urn ${ds} is not a structured property URN (urn:li:structuredProperty:<id>)`, mutation);
      assert.deepEqual(err.extensions, { code: 400, type: 'BAD_REQUEST' });
    }
  });

  test('a reader may not set or remove values, with DataHub’s message; nothing changes', async () => {
    const entity = await createDataset(s, 'gql.by.reader');
    const prop = propertyUrn('test.by.reader.values');
    await text(await writeDefinition(s, prop, definitionOf('test.by.reader.values')), 200);
    await gqlData(s, upsert(entity, prop, '{stringValue: "kept"}'));
    const reader = await token('gql-value-reader', 'reader');
    const set = await gqlError(s, upsert(entity, prop, '{stringValue: "other"}'), undefined, reader);
    const removed = await gqlError(s, `mutation { removeStructuredProperties(input: {assetUrn: "${entity}", structuredPropertyUrns: ["${prop}"]}) { properties { structuredProperty { urn } } } }`, undefined, reader);
    for (const err of [set, removed]) {
      assert.equal(err.message, `Not authorized to update properties on the gives urn ${entity}`);
      assert.equal(err.extensions?.code, 403);
      assert.equal(err.extensions?.type, 'UNAUTHORIZED');
      assert.match(String(err.extensions?.detail), /needs a token with the writer role/);
    }
    const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(entity)}/structuredProperties`), 200));
    assert.deepEqual(stored.structuredProperties.value.properties, [{ propertyUrn: prop, values: [{ string: 'kept' }] }]);
  });
});

describe('deleteStructuredProperty', () => {
  test('a writer may not hard delete; an admin does, the definition goes at once and its values by the cleanup task', async () => {
    const prop = propertyUrn('test.doomed');
    const entity = await createDataset(s, 'gql.doomed');
    await text(await writeDefinition(s, prop, definitionOf('test.doomed')), 200);
    await gqlData(s, upsert(entity, prop, '{stringValue: "x"}'));

    const writer = await token('gql-writer', 'writer');
    const denied = await gqlError(s, `mutation { deleteStructuredProperty(input: {urn: "${prop}"}) }`, undefined, writer);
    assert.equal(denied.message, 'Unable to delete structured property. Please contact your admin.');
    assert.equal(denied.extensions?.code, 403);

    assert.deepEqual(await gqlData(s, `mutation { deleteStructuredProperty(input: {urn: "${prop}"}) }`), { deleteStructuredProperty: true });
    assert.deepEqual(await gqlData(s, `{ structuredProperty(urn: "${prop}") { urn } }`), { structuredProperty: null });
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(prop)}/propertyDefinition`), 404);
    await waitForTask(s, prop, HARD_DELETE_TASK);
    const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(entity)}/structuredProperties`), 200));
    assert.deepEqual(stored.structuredProperties.value.properties, []);
  });
});

describe('the endpoint', () => {
  test('needs a token: none is 401 as on REST', async () => {
    const a = await graphql(s, '{ __typename }', undefined, null);
    assert.equal(a.status, 401);
  });

  test('a malformed query and a wrong variable type are GraphQL errors, not 500s', async () => {
    const parse = await graphql(s, '{ structuredProperty(urn: ');
    assert.ok(parse.status < 500 && parse.body.errors?.[0]?.message.startsWith('Syntax Error'), JSON.stringify(parse.body));
    const unknownField = await graphql(s, '{ nothingHere }');
    assert.ok(unknownField.status < 500 && /Cannot query field "nothingHere"/.test(unknownField.body.errors?.[0]?.message ?? ''), JSON.stringify(unknownField.body));
    const variable = await graphql(s, 'query($c: Int) { scrollAcrossEntities(input: {query: "*", count: $c}) { count } }', { c: 'ten' });
    assert.ok(variable.status < 500 && /Int cannot represent/.test(variable.body.errors?.[0]?.message ?? ''), JSON.stringify(variable.body));
    const badUrn = await gqlError(s, '{ entity(urn: "not-a-urn") { urn } }');
    assert.deepEqual([badUrn.message, badUrn.extensions?.code], ['Invalid urn!: not-a-urn', 400]);
    // Each error says where in the query it is (DataHub's errors carry locations and path).
    assert.deepEqual([badUrn.locations, badUrn.path], [[{ line: 1, column: 3 }], ['entity']]);
  });

  test('a fault of svc’s own is masked: "Internal server error occurred", code 500, the cause not shown', async () => {
    const properties = s.svc.catalog.properties;
    const original = properties.removeValues;
    properties.removeValues = async () => {
      throw new Error('disk on fire at /var/lib/secret');
    };
    try {
      const err = await gqlError(s, `mutation { removeStructuredProperties(input: {assetUrn: "${datasetUrn('gql.orders')}", structuredPropertyUrns: ["${RETENTION}"]}) { properties { structuredProperty { urn } } } }`);
      assert.equal(err.message, 'Internal server error occurred');
      assert.deepEqual(err.extensions, { code: 500, type: 'SERVER_ERROR' });
      assert.doesNotMatch(JSON.stringify(err), /disk on fire|secret|stack/);
    } finally {
      properties.removeValues = original;
    }
  });

  test('a query too deep or with too many aliases is refused before it runs', async () => {
    let deep = 'urn';
    for (let i = 0; i < 8; i++) deep = `structuredProperties { properties { structuredProperty { urn } valueEntities { ... on Dataset { urn ${deep.includes('structuredProperties') ? deep : ''} } } } }`;
    const tooDeep = await graphql(s, `{ dataset(urn: "${datasetUrn('gql.orders')}") { ${deep} } }`);
    assert.match(tooDeep.body.errors?.[0]?.message ?? '', /^Query depth limit of 12 exceeded/, JSON.stringify(tooDeep.body));
    assert.equal(tooDeep.body.errors?.[0]?.extensions?.code, 'GRAPHQL_VALIDATION_FAILED');
    const aliases = Array.from({ length: 40 }, (_, i) => `a${i}: structuredProperty(urn: "${RETENTION}") { urn }`).join(' ');
    const tooMany = await graphql(s, `{ ${aliases} }`);
    assert.match(tooMany.body.errors?.[0]?.message ?? '', /aliases/i, JSON.stringify(tooMany.body));
    assert.equal(tooMany.body.errors?.[0]?.extensions?.code, 'GRAPHQL_VALIDATION_FAILED');
    // graphql-js gives up comparing 1,000 copies of a field pair by pair: said in words a caller can act on.
    const repeated = await graphql(s, `{ ${Array.from({ length: 1000 }, () => '__typename').join(' ')} }`);
    assert.equal(repeated.status, 200);
    assert.deepEqual(repeated.body.errors, [
      { message: 'Validation aborted. The document repeats fields so often that checking which of them merge is too much work: select each field once', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
    ]);
    // Validation results are cached by document: the same document sent again is refused the same way.
    for (const [query, first] of [
      [`{ dataset(urn: "${datasetUrn('gql.orders')}") { ${deep} } }`, tooDeep],
      [`{ ${aliases} }`, tooMany],
      [`{ ${Array.from({ length: 1000 }, () => '__typename').join(' ')} }`, repeated],
    ] as const) {
      const again = await graphql(s, query);
      assert.equal(again.status, first.status);
      assert.deepEqual(again.body, first.body);
    }
  });

  test('a browser asking for HTML gets GraphiQL without a token', async () => {
    const res = await fetch(`${s.url}/api/graphql`, { headers: { accept: 'text/html' } });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<title>svc GraphQL<\/title>/);
  });

  test('GET runs queries (not mutations)', async () => {
    const res = await s.request(`/api/graphql?query=${encodeURIComponent(`{ structuredProperty(urn: "${RETENTION}") { urn } }`)}`);
    assert.deepEqual(await res.json(), { data: { structuredProperty: { urn: RETENTION } }, extensions: {} });
    const mutation = await s.request(`/api/graphql?query=${encodeURIComponent(`mutation { deleteStructuredProperty(input: {urn: "${RETENTION}"}) }`)}`);
    assert.equal(mutation.status, 405);
    assert.equal(mutation.headers.get('allow'), 'POST');
    assert.deepEqual(await mutation.json(), { errors: [{ message: 'Can only perform a mutation operation from a POST request.', extensions: { code: 405, type: 'BAD_REQUEST' } }], extensions: {} });
    await restDefinition(RETENTION);
    // Variables (or extensions) that are not JSON are the caller's mistake, named as such: they were a masked 500.
    for (const name of ['variables', 'extensions']) {
      const res = await s.request(`/api/graphql?query=${encodeURIComponent('{ __typename }')}&${name}=${encodeURIComponent('{nope')}`);
      assert.equal(res.status, 400);
      const body = (await res.json()) as { errors: { message: string; extensions: unknown }[] };
      assert.match(body.errors[0]!.message, new RegExp(`^The query parameter ${name} must be a JSON object: `));
      assert.deepEqual(body.errors[0]!.extensions, { code: 400, type: 'BAD_REQUEST' });
    }
    // No query, or a parameter given twice: 400 saying so (they were 200 with yoga's own code, or an
    // operation looked up under the first name). A browser asking for HTML still gets GraphiQL.
    const q = encodeURIComponent('query A { __typename }');
    const refusedGets: [string, string][] = [
      ['', 'A GraphQL GET request needs a query: ?query=…&variables=… (URL-encoded)'],
      ['?variables=%7B%7D', 'A GraphQL GET request needs a query: ?query=…&variables=… (URL-encoded)'],
      [`?query=${q}&query=${q}`, 'The query parameter query is given 2 times; give it once'],
      [`?query=${q}&operationName=A&operationName=B`, 'The query parameter operationName is given 2 times; give it once'],
    ];
    for (const [params, message] of refusedGets) {
      const res = await s.request(`/api/graphql${params}`);
      assert.equal(res.status, 400, params);
      assert.deepEqual(await res.json(), { errors: [{ message, extensions: { code: 400, type: 'BAD_REQUEST' } }], extensions: {} }, params);
    }
    const page = await s.request('/api/graphql', { headers: { accept: 'text/html' }, token: null });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  });

  test('a plain JSON POST, answered without yoga\'s fetch layer, gets yoga\'s answer to the letter', async () => {
    // Accept `application/json` is served directly (directPost.ts); the equivalent list below goes
    // through yoga whole, which answers it as application/json too.
    const answer = async (body: unknown, accept: string) => {
      const res = await s.request('/api/graphql', { method: 'POST', body: JSON.stringify(body), headers: { accept } });
      const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
      return { status: res.status, headers, body: await res.text() };
    };
    const dataset = datasetUrn('gql.orders');
    const requests: unknown[] = [
      { query: `{ structuredProperty(urn: "${RETENTION}") { ${DEFINITION_FIELDS} } }` },
      { query: `query A { __typename } query B($u: String!) { dataset(urn: $u) { urn } }`, operationName: 'B', variables: { u: dataset } },
      { query: `query A { __typename }`, operationName: 'Nope' },
      { query: '{ structuredProperty(urn: ' },
      { query: '{ nothingHere }' },
      { query: 'query($c: Int) { scrollAcrossEntities(input: {query: "*", count: $c}) { count } }', variables: { c: 'ten' } },
      { query: '{ entity(urn: "not-a-urn") { urn } }' },
      { query: upsert(dataset, RETENTION, '{numberValue: 31}') },
      { query: upsert(dataset, RETENTION, '{numberValue: 90}') },
      { query: '{ __typename }', variables: null, operationName: null, extensions: {} },
    ];
    for (const body of requests) {
      const direct = await answer(body, 'application/json');
      const viaYoga = await answer(body, 'application/json, */*;q=0.5');
      assert.deepEqual(direct, viaYoga, JSON.stringify(body));
    }
  });

  test('a request refused before GraphQL runs is answered in GraphQL\'s error form, with the HTTP status of its error', async () => {
    const shape = (message: string, code: number, type: string) => ({ errors: [{ message, extensions: { code, type } }], extensions: {} });
    // A POST without a body was a bare 415 (found by the fuzz test); {} and null were "POST body sent invalid JSON".
    for (const headers of [{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/json' }] as Record<string, string>[]) {
      const res = await s.request('/api/graphql', { method: 'POST', headers });
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), shape('A GraphQL request needs a body: {"query": "…", "variables": {…}}, sent with Content-Type application/json', 400, 'BAD_REQUEST'));
    }
    const cases: [string, number, string, string][] = [
      ['{}', 400, 'BAD_REQUEST', 'A GraphQL request needs a query: {"query": "…", "variables": {…}}'],
      // These were 200 with yoga's "Must provide query string." and a code of its own.
      ['{"query": null}', 400, 'BAD_REQUEST', 'A GraphQL request needs a query: {"query": "…", "variables": {…}}'],
      ['{"variables": {}}', 400, 'BAD_REQUEST', 'A GraphQL request needs a query: {"query": "…", "variables": {…}}'],
      ['null', 400, 'BAD_REQUEST', 'A GraphQL request is a JSON object, {"query": "…", "variables": {…}}; got null'],
      ['"{ __typename }"', 400, 'BAD_REQUEST', 'A GraphQL request is a JSON object, {"query": "…", "variables": {…}}; got a string'],
      ['{"query": "{ __typename }"', 400, 'BAD_REQUEST', "Malformed JSON in the request body: Expected ',' or '}' after property value in JSON at position 26"],
      ['{"query": "{ __typename }", "variables": {"a": "x\\u0000"}}', 400, 'BAD_REQUEST', 'body.variables.a: the string contains the NUL character (U+0000), which svc does not store'],
      // Yoga takes any operationName and looks for it in the document (200, OPERATION_RESOLUTION_FAILURE).
      ['{"query": "{ __typename }", "operationName": 5}', 400, 'BAD_REQUEST', 'Expected "operationName" param to be a string, but given number.'],
      ['{"query": "{ __typename }", "operationName": ["A"]}', 400, 'BAD_REQUEST', 'Expected "operationName" param to be a string, but given array.'],
    ];
    for (const [body, status, type, message] of cases) {
      const res = await s.request('/api/graphql', { method: 'POST', body });
      assert.equal(res.status, status, body);
      assert.deepEqual(await res.json(), shape(message, status, type), body);
    }
    // What yoga refuses in a request (a batch, parameters of the wrong type) in the same form.
    const refusedByYoga: [string, string][] = [
      ['[{"query": "{ __typename }"}]', 'Batching is not supported.'],
      ['{"query": 5}', 'Expected "query" param to be a string, but given number.'],
      ['{"query": "{ __typename }", "variables": "x"}', 'Expected "variables" param to be empty or an object, but given string.'],
    ];
    for (const [body, message] of refusedByYoga) {
      const res = await s.request('/api/graphql', { method: 'POST', body });
      assert.equal(res.status, 400, body);
      assert.deepEqual(await res.json(), shape(message, 400, 'BAD_REQUEST'), body);
    }
    // An operation that cannot be resolved is GraphQL's own error, as a document that does not validate.
    for (const body of [{ query: 'query A { __typename }', operationName: 'Nope' }, { query: 'query A { __typename } query B { __typename }' }]) {
      const named = await s.request('/api/graphql', { method: 'POST', body: JSON.stringify(body) });
      assert.equal(named.status, 200, JSON.stringify(body));
      const json = (await named.json()) as { errors: { message: string; extensions: unknown }[] };
      assert.deepEqual(json.errors.map((e) => e.extensions), [{ code: 'OPERATION_RESOLUTION_FAILURE' }], JSON.stringify(json));
    }
    const noToken = await s.request('/api/graphql', { method: 'POST', body: '{"query": "{ __typename }"}', token: null });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.headers.get('www-authenticate'), 'Bearer');
    assert.deepEqual(((await noToken.json()) as { errors: { extensions: unknown }[] }).errors[0]!.extensions, { code: 401, type: 'UNAUTHORIZED' });
  });

  test('a Float is written as a double, as on every read (30.0), however it is reached; other numbers are left alone', async () => {
    const ds = await createDataset(s, 'gql.floats');
    await gqlData(s, upsert(ds, RETENTION, '{numberValue: 30}'));
    const query = `query Q($u: String!) {
      dataset(urn: $u) { ...Props structuredProperties { properties { values { ... on NumberValue { n: numberValue } } } } }
      structuredProperty(urn: "${RETENTION}") { definition { allowedValues { value { ... on NumberValue { numberValue } } } } }
      scrollAcrossEntities(input: {types: [DATASET], query: "*", count: 1}) { count }
    }
    fragment Props on Dataset { structuredProperties { properties { values { ... on NumberValue { numberValue } } } } }`;
    for (const accept of ['application/json', 'application/json, */*;q=0.5']) {
      // Served directly, and through yoga whole.
      const res = await s.request('/api/graphql', { method: 'POST', body: JSON.stringify({ query, variables: { u: ds } }), headers: { accept } });
      const text = await res.text();
      assert.match(text, /"values":\[\{("numberValue":30\.0,"n":30\.0|"n":30\.0,"numberValue":30\.0)\}\]/, text);
      assert.match(text, /"allowedValues":\[\{"value":\{"numberValue":30\.0\}/, text);
      assert.match(text, /"scrollAcrossEntities":\{"count":1\}/, text);
    }
    const get = await s.request(`/api/graphql?query=${encodeURIComponent(`{ dataset(urn: "${ds}") { structuredProperties { properties { values { ... on NumberValue { numberValue } } } } } }`)}`);
    assert.match(await get.text(), /"numberValue":30\.0/);
    // A Float aliased to the name of an Int elsewhere in the answer: each keeps its own form.
    const raw = await (await s.request('/api/graphql', { method: 'POST', body: JSON.stringify({ query: `{ dataset(urn: "${ds}") { structuredProperties { properties { values { ... on NumberValue { count: numberValue } } } } } scrollAcrossEntities(input: {types: [DATASET], query: "*", count: 1}) { count } }` }) })).text();
    assert.match(raw, /"values":\[\{"count":30\.0\}\]/, raw);
    assert.match(raw, /"scrollAcrossEntities":\{"count":1\}/, raw);
  });

  test('a value written in the query is held to the rules of any input: no NUL, numbers kept exactly; nothing is written', async () => {
    const dataset = datasetUrn('gql.orders');
    const before = await readValues(s, dataset);
    const definition = await restDefinition(RETENTION);
    const refused: [string, string][] = [
      [`mutation { updateStructuredProperty(input: {urn: "${RETENTION}", displayName: "a\\u0000"}) { urn } }`, 'A string in the query contains the NUL character (U+0000), which svc does not store'],
      [upsert(dataset, RETENTION, '{numberValue: 12345678901234567890}'), 'A number in the query: the integer 12345678901234567890 is beyond ±9007199254740991 and cannot be kept exactly; send it as a string, or as a decimal (1.2345678901234567e+19) if rounding is acceptable'],
      [upsert(dataset, RETENTION, '{numberValue: 1e400}'), 'A number in the query: the number is out of range (at most about 1.8e308)'],
    ];
    for (const [query, message] of refused) {
      const a = await graphql(s, query);
      assert.equal(a.status, 200);
      assert.deepEqual(a.body.errors?.map((e) => [e.message, e.extensions?.code]), [[message, 'GRAPHQL_VALIDATION_FAILED']], query);
      assert.equal(a.body.data, undefined);
    }
    // A lone surrogate cannot even be written: GraphQL's lexer refuses the escape.
    const surrogate = await graphql(s, `mutation { updateStructuredProperty(input: {urn: "${RETENTION}", description: "\\ud800"}) { urn } }`);
    assert.deepEqual(surrogate.body.errors?.map((e) => [e.message, e.extensions?.code]), [['Syntax Error: Invalid Unicode escape sequence: "\\ud800".', 'GRAPHQL_PARSE_FAILED']]);
    assert.deepEqual(await readValues(s, dataset), before);
    assert.deepEqual(await restDefinition(RETENTION), definition);
  });

  test('a subscription is refused as GraphQL refuses it (it was a 500 from the compiled executor)', async () => {
    const a = await graphql(s, 'subscription { x }');
    assert.deepEqual(a.body.errors?.map((e) => [e.message, e.extensions?.code]), [['Schema is not configured to execute subscription operation.', 'GRAPHQL_VALIDATION_FAILED']]);
  });

  test('a variable of the wrong type is named, with the path to the wrong value', async () => {
    const a = await graphql(s, 'query($f: [AndFilterInput!]) { scrollAcrossEntities(input: {query: "*", orFilters: $f}) { count } }', { f: [{ and: [{ field: 'urn', negated: 'yes' }] }] });
    assert.deepEqual(a.body.errors?.map((e) => [e.message, e.extensions?.code]), [['Variable "$f" got invalid value "yes" at "f[0].and[0].negated"; Boolean cannot represent a non boolean value: "yes"', 'GRAPHQL_VALIDATION_FAILED']]);
  });
});

/**
 * The machine-readable `reason` of each refusal the CLI, the operator and the server itself act on
 * (server/src/contract/errors.ts), in each error form: REST's `{"error", "message", "reason"}`,
 * Rest.li's `{"message", "status", "reason"}` and GraphQL's `extensions.reason`. DataHub's `error` and
 * `message` stay as they are; a refusal of no particular kind carries no reason.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { REASONS } from '../../server/src/contract/errors.ts';
import { gqlError } from '../support/graphql.ts';
import { createDataset, createProperty, datasetUrn, definitionOf, propertyUrn, setValues, writeDefinition } from '../support/structuredProperties.ts';
import { enc, startTestServer, type TestServer } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

/** The status and parsed body of an answer. */
async function answer(res: Response | Promise<Response>): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await res;
  return { status: r.status, body: JSON.parse(await r.text()) as Record<string, unknown> };
}

/** A Rest.li proposal of one aspect (DataHub's clients' form). */
function ingest(urn: string, aspectName: string, value: unknown): Promise<Response> {
  const proposal = { entityType: urn.split(':')[2], entityUrn: urn, changeType: 'UPSERT', aspectName, aspect: { value: JSON.stringify(value), contentType: 'application/json' } };
  return s.request('/aspects?action=ingestProposal', { method: 'POST', body: JSON.stringify({ proposal }), headers: { 'X-RestLi-Protocol-Version': '2.0.0' } });
}

const softDelete = (urn: string) =>
  s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed: true } }) });

test('the reasons are a closed set, each named as itself', () => {
  assert.deepEqual(Object.keys(REASONS).sort(), ['AspectExists', 'BreakingChange', 'CleanupPending', 'EntityExists', 'SoftDeleted']);
  for (const [name, value] of Object.entries(REASONS)) assert.equal(value, name);
});

describe('BreakingChange: a definition change only a greater version allows', () => {
  test('over REST (v3 and v2) and Rest.li, beside DataHub’s words', async () => {
    const urn = await createProperty(s, 'test.reasons.breaking');
    const changed = definitionOf('test.reasons.breaking', { valueType: 'urn:li:dataType:svc.number' });
    for (const v of ['v3', 'v2'] as const) {
      const { status, body } = await answer(writeDefinition(s, urn, changed, v));
      assert.equal(status, 400, v);
      assert.equal(body.error, 'Validation Error');
      assert.match(String(body.message), /^Value type cannot be changed as this is a backwards incompatible change; A breaking change needs a version/);
      assert.equal(body.reason, 'BreakingChange', v);
    }
    const restli = await answer(ingest(urn, 'propertyDefinition', changed));
    assert.equal(restli.status, 400);
    assert.match(String(restli.body.message), /Value type cannot be changed as this is a backwards incompatible change/);
    assert.deepEqual([restli.body.status, restli.body.reason], [400, 'BreakingChange']);
  });

  test('each of the rules a version lifts; none on a refusal of another kind, nor once the version is greater', async () => {
    const urn = await createProperty(s, 'test.reasons.kinds', { cardinality: 'MULTIPLE', allowedValues: [{ value: { string: 'a' } }, { value: { string: 'b' } }] });
    const base = { cardinality: 'MULTIPLE', allowedValues: [{ value: { string: 'a' } }, { value: { string: 'b' } }] };
    for (const change of [{ cardinality: 'SINGLE' }, { allowedValues: [{ value: { string: 'a' } }] }]) {
      const { status, body } = await answer(writeDefinition(s, urn, definitionOf('test.reasons.kinds', { ...base, ...change })));
      assert.deepEqual([status, body.reason], [400, 'BreakingChange'], JSON.stringify(body));
    }
    const unknownType = await answer(writeDefinition(s, urn, definitionOf('test.reasons.kinds', { ...base, entityTypes: ['urn:li:entityType:svc.nothing'] })));
    assert.equal(unknownType.status, 400);
    assert.equal('reason' in unknownType.body, false, JSON.stringify(unknownType.body));
    const versioned = await answer(writeDefinition(s, urn, definitionOf('test.reasons.kinds', { ...base, cardinality: 'SINGLE', version: '20240614080000' })));
    assert.equal(versioned.status, 200, JSON.stringify(versioned.body));
  });
});

describe('SoftDeleted: a write to a soft-deleted property', () => {
  test('its definition (REST) and a value of it (REST, GraphQL)', async () => {
    const qn = 'test.reasons.soft';
    const urn = await createProperty(s, qn);
    const ds = await createDataset(s, 'reasons_soft');
    assert.equal((await softDelete(urn)).status, 200);
    const definition = await answer(writeDefinition(s, urn, definitionOf(qn, { description: 'changed' })));
    assert.equal(definition.status, 400);
    assert.match(String(definition.body.message), /Cannot mutate a soft deleted Structured Property Definition/);
    assert.equal(definition.body.reason, 'SoftDeleted');
    // Soft deleted and a breaking change at once: restoring comes first.
    const both = await answer(writeDefinition(s, urn, definitionOf(qn, { valueType: 'urn:li:dataType:svc.number' })));
    assert.deepEqual([both.status, both.body.reason], [400, 'SoftDeleted']);
    const value = await answer(setValues(s, ds, [{ propertyUrn: urn, values: [{ string: 'x' }] }]));
    assert.equal(value.status, 400);
    assert.match(String(value.body.message), /Cannot apply a soft deleted Structured Property value/);
    assert.equal(value.body.reason, 'SoftDeleted');
    const err = await gqlError(
      s,
      `mutation { upsertStructuredProperties(input: {assetUrn: ${JSON.stringify(datasetUrn('reasons_soft'))}, structuredPropertyInputParams: [{structuredPropertyUrn: ${JSON.stringify(urn)}, values: [{stringValue: "x"}]}]}) { properties { associatedUrn } } }`,
    );
    assert.match(err.message, /Cannot apply a soft deleted Structured Property value/);
    assert.deepEqual(err.extensions, { code: 400, type: 'BAD_REQUEST', reason: 'SoftDeleted' });
  });
});

describe('AspectExists and EntityExists: a CREATE of what is there', () => {
  test('412 over REST, each with its reason; If-None-Match: * drops the write instead', async () => {
    const urn = propertyUrn('test.reasons.exists');
    await createProperty(s, 'test.reasons.exists');
    const aspect = await answer(s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition`, { method: 'POST', body: JSON.stringify({ value: definitionOf('test.reasons.exists') }) }));
    assert.deepEqual([aspect.status, aspect.body], [412, { error: 'Precondition Failed', message: 'Cannot perform CREATE since the aspect already exists.', reason: 'AspectExists' }]);
    const ds = await createDataset(s, 'reasons_exists');
    const entity = await answer(s.request(`/openapi/v3/entity/dataset/${enc(ds)}/subTypes?createIfEntityNotExists=true`, { method: 'POST', body: '{"value":{"typeNames":["x"]}}' }));
    assert.deepEqual([entity.status, entity.body.reason], [412, 'EntityExists']);
    const dropped = await s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition?createIfNotExists=false`, {
      method: 'POST',
      body: JSON.stringify({ value: definitionOf('test.reasons.exists', { description: 'not written' }) }),
      headers: { 'If-None-Match': '*' },
    });
    assert.equal(dropped.status, 200, await dropped.text());
  });
});

/**
 * The Rest.li resources DataHub's clients call, at the HTTP level: `/config`, aspect reads under their
 * Pegasus class (key aspects as existence checks), proposals (UPSERT creating the entity, PATCH in the
 * forms of both SDK lines, DELETE), the hard delete action, DataHub's type namespace, and Rest.li's error
 * shape for what is refused, which changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fingerprint } from '../support/fingerprint.ts';
import { createProperty, datasetUrn, propertyUrn } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
const DATASET = datasetUrn('restli.orders');
const TIER = propertyUrn('restli.tier');
const OWNER = propertyUrn('restli.owner');

before(async () => {
  s = await startTestServer();
  await createProperty(s, 'restli.tier');
  await createProperty(s, 'restli.owner');
});
after(async () => {
  await s.close();
});

const post = (path: string, body: unknown) => s.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'X-RestLi-Protocol-Version': '2.0.0' } });
const proposal = (urn: string, aspectName: string, value: unknown, changeType = 'UPSERT', contentType = 'application/json') => ({
  entityType: urn.split(':')[2],
  entityUrn: urn,
  changeType,
  aspectName,
  aspect: { value: JSON.stringify(value), contentType },
});
const ingest = (p: object) => post('/aspects?action=ingestProposal', { proposal: p });
const aspect = async (urn: string, name: string) => {
  const res = await s.request(`/aspects/${enc(urn)}?aspect=${name}&version=0`);
  return { status: res.status, body: JSON.parse(await res.text()) };
};

/** A Rest.li refusal: its status, the header, `{"message", "status"}`, and nothing stored changed. */
async function refused(send: () => Promise<Response>, status: number, message: RegExp): Promise<void> {
  const before = await fingerprint(s.databaseUrl);
  const res = await send();
  const body = JSON.parse(await res.text());
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(res.headers.get('x-restli-error-response'), 'true');
  assert.equal(body.status, status);
  assert.match(body.message, message);
  assert.equal(await fingerprint(s.databaseUrl), before, 'nothing changed');
}

test('/config answers without a token: noCode "true" and a version on the Rest.li line', async () => {
  const res = await fetch(`${s.url}/config`);
  assert.equal(res.status, 200);
  const config = await res.json();
  assert.equal(config.noCode, 'true');
  assert.equal(config.versions['acryldata/datahub'].version, 'v0.14.1');
});

test('an UPSERT proposal creates its entity; the aspect and the key read back under their Pegasus classes', async () => {
  await text(await ingest(proposal(DATASET, 'datasetProperties', { description: 'orders', customProperties: { team: 'sales' } })), 200);
  assert.deepEqual(await aspect(DATASET, 'datasetProperties'), {
    status: 200,
    body: { urn: DATASET, version: 0, aspect: { 'com.linkedin.dataset.DatasetProperties': { description: 'orders', customProperties: { team: 'sales' } } } },
  });
  const key = await aspect(DATASET, 'datasetKey');
  assert.deepEqual(key.body.aspect, { 'com.linkedin.metadata.key.DatasetKey': { platform: 'urn:li:dataPlatform:hive', name: 'restli.orders', origin: 'PROD' } });
  // Absent: 404 (how the clients tell "not there"), for an aspect, an aspect svc does not keep, and an entity svc does not know.
  assert.equal((await aspect(DATASET, 'subTypes')).status, 404);
  assert.equal((await aspect(DATASET, 'globalTags')).status, 404);
  assert.equal((await aspect('urn:li:telemetry:clientId', 'telemetryClientId')).status, 404);
  assert.equal((await aspect(datasetUrn('restli.none'), 'datasetKey')).status, 404);
});

test('DataHub\'s type namespace is taken as svc\'s and shown back as DataHub\'s', async () => {
  const urn = propertyUrn('restli.days');
  await text(
    await ingest(proposal(urn, 'propertyDefinition', { qualifiedName: 'restli.days', valueType: 'urn:li:dataType:datahub.number', entityTypes: ['urn:li:entityType:datahub.dataset'], cardinality: 'SINGLE' })),
    200,
  );
  const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition`), 200)).propertyDefinition.value;
  assert.deepEqual([stored.valueType, stored.entityTypes], ['urn:li:dataType:svc.number', ['urn:li:entityType:svc.dataset']]);
  const read = (await aspect(urn, 'propertyDefinition')).body.aspect['com.linkedin.structured.StructuredPropertyDefinition'];
  assert.deepEqual([read.valueType, read.entityTypes], ['urn:li:dataType:datahub.number', ['urn:li:entityType:datahub.dataset']]);
  const entityType = await aspect('urn:li:entityType:datahub.dataset', 'entityTypeKey');
  assert.deepEqual(entityType, { status: 200, body: { urn: 'urn:li:entityType:datahub.dataset', version: 0, aspect: { 'com.linkedin.entitytype.EntityTypeKey': { id: 'datahub.dataset' } } } });
});

test('PATCH proposals of structured properties, as the 0.14 SDK (remove then add) and the 1.x SDK (keys with an attribution source) send them', async () => {
  const v014 = [
    { op: 'remove', path: `/properties/${TIER}`, value: {} },
    { op: 'add', path: `/properties/${TIER}`, value: { propertyUrn: TIER, values: [{ string: 'gold' }] } },
  ];
  await text(await ingest(proposal(DATASET, 'structuredProperties', v014, 'PATCH', 'application/json-patch+json')), 200);
  const v1 = {
    arrayPrimaryKeys: { properties: ['propertyUrn', 'attribution\u241fsource'] },
    patch: [{ op: 'add', path: `/properties/${OWNER}/`, value: { propertyUrn: OWNER, values: [{ string: 'ann' }] } }],
  };
  await text(await ingest(proposal(DATASET, 'structuredProperties', v1, 'PATCH', 'application/json-patch+json')), 200);
  // And again with the first SDK's form: the element is replaced, not added twice.
  await text(await ingest(proposal(DATASET, 'structuredProperties', v014.map((op) => (op.op === 'add' ? { ...op, value: { propertyUrn: TIER, values: [{ string: 'silver' }] } } : op)), 'PATCH')), 200);
  const read = (await aspect(DATASET, 'structuredProperties')).body.aspect['com.linkedin.structured.StructuredProperties'];
  assert.deepEqual(read.properties, [
    { propertyUrn: TIER, values: [{ string: 'silver' }] },
    { propertyUrn: OWNER, values: [{ string: 'ann' }] },
  ]);
});

test('a batch is applied whole; a DELETE proposal removes an aspect; the delete action removes the entity and counts its aspects', async () => {
  const other = datasetUrn('restli.batch');
  await text(await post('/aspects?action=ingestProposalBatch', { proposals: [proposal(other, 'status', { removed: false }), proposal(other, 'subTypes', { typeNames: ['Table'] })] }), 200);
  assert.equal((await aspect(other, 'subTypes')).status, 200);
  await text(await ingest(proposal(other, 'subTypes', null, 'DELETE')), 200);
  assert.equal((await aspect(other, 'subTypes')).status, 404);
  const res = JSON.parse(await text(await post('/entities?action=delete', { urn: other }), 200));
  assert.deepEqual(res, { value: { urn: other, rows: 2, timeseriesRows: 0 } });
  assert.equal((await aspect(other, 'datasetKey')).status, 404);
});

test('refusals are Rest.li errors that say what was expected, and change nothing', async () => {
  await refused(() => ingest(proposal(DATASET, 'structuredProperties', { properties: [{ propertyUrn: TIER, values: [{ double: 1 }] }] })), 400, /should be a string/);
  await refused(() => ingest({ ...proposal(DATASET, 'status', { removed: false }), aspect: { value: { removed: false }, contentType: 'application/json' } }), 400, /aspect\.value must be the aspect as a JSON string/);
  await refused(() => ingest({ ...proposal(DATASET, 'status', { removed: false }), changeType: 'RESTATE' }), 400, /changeType RESTATE is not supported; expected UPSERT, CREATE, CREATE_ENTITY, PATCH or DELETE/);
  await refused(() => ingest({ ...proposal(DATASET, 'status', { removed: false }), entityType: 'chart' }), 400, /entityType chart does not match the URN's type dataset/);
  await refused(() => post('/aspects?action=ingestProposalBatch', { proposals: [proposal(datasetUrn('restli.half'), 'status', { removed: false }), proposal(datasetUrn('restli.half'), 'subTypes', { typeNames: 7 })] }), 400, /typeNames/);
  await refused(
    () => post('/aspects?action=ingestProposalBatch', { proposals: [proposal(datasetUrn('restli.run'), 'status', { removed: false }), { ...proposal('urn:li:dataHubExecutionRequest:run-1', 'dataHubExecutionRequestResult', { status: 'SUCCESS' }), entityType: 'dataHubExecutionRequest' }] }),
    400,
    /svc keeps no record of ingestion runs \(dataHubExecutionRequest\); run datahub ingest with --no-default-report/,
  );
  await refused(() => post('/aspects?action=nope', {}), 400, /action/);
  await refused(() => post('/entities?action=search', {}), 400, /query parameter action: expected one of delete, got "search"/);
  await refused(() => s.request(`/aspects/${enc(DATASET)}`), 400, /The query parameter aspect is required/);
  // Calls of DataHub's clients that svc does not serve: a 404 naming the call and what is served.
  await refused(() => s.request(`/entitiesV2/${enc(DATASET)}?aspects=List(status)`), 404, /^svc does not serve the Rest.li call GET \/entitiesV2; it serves GET \/config, GET \/aspects/);
  await refused(() => post('/entities?action=deleteReferences', { urn: DATASET }), 400, /query parameter action: expected one of delete, got "deleteReferences"/);
  await refused(() => post('/relationships', {}), 404, /svc does not serve the Rest.li call POST \/relationships/);
});

/**
 * The Rest.li resources DataHub's clients call, at the HTTP level: `/config`, aspect reads under their
 * Pegasus class (key aspects as existence checks), `entitiesV2` reads (one and a batch), proposals
 * (UPSERT creating the entity, PATCH in the forms of both SDK lines, DELETE, the records of ingestion
 * runs), the hard delete and deleteReferences actions, DataHub's type namespace, and Rest.li's error
 * shape for what is refused, which changes nothing. (getTimeseriesAspectValues is tested with the time
 * series stores, on both search backends.)
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
  // What is no URN at all is refused as everywhere (it was a 404 "svc keeps no entity garbage").
  const garbage = await aspect('garbage', 'status');
  assert.equal(garbage.status, 400);
  assert.match(JSON.stringify(garbage.body), /Invalid urn!: garbage/);
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

test('the records of an ingestion run (datahub ingest\'s default report) are kept and read back', async () => {
  const source = 'urn:li:dataHubIngestionSource:cli-0123abcd';
  const run = 'urn:li:dataHubExecutionRequest:file-2026_11_23-10_00_00-abc';
  const info = { name: '[CLI] file', type: 'file', platform: 'urn:li:dataPlatform:file', config: { recipe: '', version: '0.14.1', executorId: '__datahub_cli_' } };
  const input = { task: 'CLI Ingestion', args: { recipe: '', version: '0.14.1' }, executorId: '__datahub_cli_', requestedAt: 1_700_000_000_000, source: { type: 'CLI_INGESTION_SOURCE', ingestionSource: source } };
  const result = { status: 'SUCCESS', startTimeMs: 1_700_000_000_000, durationMs: 1200, report: 'done', structuredReport: { type: 'CLI_INGEST', serializedValue: '{}', contentType: 'application/json' } };
  await text(await post('/aspects?action=ingestProposalBatch', { proposals: [proposal(source, 'dataHubIngestionSourceInfo', info), proposal(run, 'dataHubExecutionRequestInput', input)] }), 200);
  await text(await ingest(proposal(run, 'dataHubExecutionRequestResult', result)), 200);
  assert.deepEqual((await aspect(source, 'dataHubIngestionSourceInfo')).body.aspect, { 'com.linkedin.ingestion.DataHubIngestionSourceInfo': info });
  assert.deepEqual((await aspect(run, 'dataHubExecutionRequestResult')).body.aspect, { 'com.linkedin.execution.ExecutionRequestResult': result });
  assert.deepEqual((await aspect(run, 'dataHubExecutionRequestKey')).body.aspect, { 'com.linkedin.metadata.key.ExecutionRequestKey': { id: 'file-2026_11_23-10_00_00-abc' } });
  const stored = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataHubExecutionRequest/${enc(run)}`), 200));
  assert.deepEqual(stored.dataHubExecutionRequestInput.value, input);
  // Checked like any aspect: a result without its status is refused.
  await refused(() => ingest(proposal(run, 'dataHubExecutionRequestResult', { report: 'x' })), 400, /status/);
});

test('entitiesV2: an entity with its versioned aspects enveloped, the key always (an absent entity answers its key alone), and a batch', async () => {
  const urn = datasetUrn('restli.v2');
  await text(await post('/aspects?action=ingestProposalBatch', { proposals: [proposal(urn, 'datasetProperties', { description: 'v2' }), proposal(urn, 'status', { removed: false })] }), 200);
  const get = async (path: string) => JSON.parse(await text(await s.request(path), 200));
  const one = await get(`/entitiesV2/${enc(urn)}?aspects=List(datasetProperties,globalTags)`);
  assert.deepEqual(Object.keys(one), ['entityName', 'urn', 'aspects']);
  assert.deepEqual([one.entityName, one.urn], ['dataset', urn]);
  // Asked for: datasetProperties (globalTags is not kept by svc, and left out as an absent aspect), and the key.
  assert.deepEqual(Object.keys(one.aspects).sort(), ['datasetKey', 'datasetProperties']);
  const props = one.aspects.datasetProperties;
  assert.deepEqual([props.name, props.type, props.version, props.value], ['datasetProperties', 'VERSIONED', 0, { description: 'v2' }]);
  assert.equal(props.created.actor, 'urn:li:corpuser:admin');
  assert.equal(typeof props.created.time, 'number');
  assert.equal(typeof props.systemMetadata, 'object');
  assert.deepEqual(one.aspects.datasetKey.value, { platform: 'urn:li:dataPlatform:hive', name: 'restli.v2', origin: 'PROD' });
  // Every versioned aspect when none are named; the key left out when asked.
  assert.deepEqual(Object.keys((await get(`/entitiesV2/${enc(urn)}`)).aspects).sort(), ['datasetKey', 'datasetProperties', 'status']);
  assert.deepEqual(Object.keys((await get(`/entitiesV2/${enc(urn)}?aspects=List(status)&alwaysIncludeKeyAspect=false`)).aspects), ['status']);
  // An entity that does not exist: its key alone, as DataHub answers (the CLI's "not found" test).
  const absent = datasetUrn('restli.v2.absent');
  assert.deepEqual(Object.keys((await get(`/entitiesV2/${enc(absent)}`)).aspects), ['datasetKey']);
  const none = await s.request(`/entitiesV2/${enc(absent)}?alwaysIncludeKeyAspect=false`);
  assert.equal(none.status, 404);
  // A batch (Rest.li 2.0 lists, each URN percent-encoded; its commas and parentheses too).
  const batch = await get(`/entitiesV2?ids=List(${enc(urn)},${enc(DATASET)},${enc(absent)})&aspects=List(status)`);
  assert.deepEqual(Object.keys(batch).sort(), ['errors', 'results', 'statuses']);
  assert.deepEqual(Object.keys(batch.results).sort(), [DATASET, urn, absent].sort());
  assert.deepEqual(batch.results[urn].aspects.status.value, { removed: false });
  assert.deepEqual(Object.keys(batch.results[absent].aspects), ['datasetKey']);
  // Protocol 1.0: the parameter repeated.
  const repeated = await get(`/entitiesV2?ids=${enc(urn)}&ids=${enc(DATASET)}&aspects=status&aspects=datasetProperties`);
  assert.deepEqual(Object.keys(repeated.results).sort(), [DATASET, urn].sort());
  assert.deepEqual(Object.keys(repeated.results[urn].aspects).sort(), ['datasetKey', 'datasetProperties', 'status']);
  // Type URNs in DataHub's namespace, as on aspect reads.
  const prop = await get(`/entitiesV2/${enc(TIER)}?aspects=List(propertyDefinition)`);
  assert.equal(prop.aspects.propertyDefinition.value.valueType, 'urn:li:dataType:datahub.string');
});

test('deleteReferences: a dry run counts what refers to the entity and changes nothing; a real run takes each reference out', async () => {
  const user = 'urn:li:corpuser:restli.leaver';
  const stewards = propertyUrn('restli.stewards');
  const steward = propertyUrn('restli.steward');
  await createProperty(s, 'restli.stewards', { valueType: 'urn:li:dataType:svc.urn', cardinality: 'MULTIPLE' });
  await createProperty(s, 'restli.steward', { valueType: 'urn:li:dataType:svc.urn' });
  const a = datasetUrn('restli.refs.a');
  const b = datasetUrn('restli.refs.b');
  const downstream = datasetUrn('restli.refs.down');
  await text(
    await post('/aspects?action=ingestProposalBatch', {
      proposals: [
        proposal(user, 'status', { removed: false }),
        proposal(a, 'structuredProperties', { properties: [{ propertyUrn: stewards, values: [{ string: user }, { string: 'urn:li:corpuser:stays' }] }, { propertyUrn: TIER, values: [{ string: 'gold' }] }] }),
        proposal(b, 'structuredProperties', { properties: [{ propertyUrn: steward, values: [{ string: user }] }] }),
        proposal(downstream, 'upstreamLineage', { upstreams: [{ dataset: a, type: 'COPY' }, { dataset: b, type: 'TRANSFORMED' }] }),
      ],
    }),
    200,
  );
  const action = async (urn: string, dryRun?: boolean) => JSON.parse(await text(await post('/entities?action=deleteReferences', { urn, ...(dryRun === undefined ? {} : { dryRun }) }), 200)).value;
  const before = await fingerprint(s.databaseUrl);
  const dry = await action(user); // a dry run unless dryRun is false
  assert.equal(dry.dryRun, true);
  assert.equal(dry.total, 2);
  assert.deepEqual(dry.relatedAspects, [
    { relationship: 'StructuredPropertyValue', entity: a, aspect: 'structuredProperties' },
    { relationship: 'StructuredPropertyValue', entity: b, aspect: 'structuredProperties' },
  ]);
  assert.equal(await fingerprint(s.databaseUrl), before, 'a dry run changes nothing');
  const done = await action(user, false);
  assert.deepEqual([done.dryRun, done.total], [false, 2]);
  const read = async (urn: string, name: string) => (await aspect(urn, name)).body.aspect;
  assert.deepEqual((await read(a, 'structuredProperties'))['com.linkedin.structured.StructuredProperties'].properties, [
    { propertyUrn: stewards, values: [{ string: 'urn:li:corpuser:stays' }] },
    { propertyUrn: TIER, values: [{ string: 'gold' }] },
  ]);
  // A single value gone: the assignment goes with it.
  assert.deepEqual((await read(b, 'structuredProperties'))['com.linkedin.structured.StructuredProperties'].properties, []);
  assert.equal((await action(user)).total, 0);
  // A dataset others name as an upstream: that upstream goes, the others stay.
  assert.deepEqual(await action(a, false), { dryRun: false, total: 1, relatedAspects: [{ relationship: 'DownstreamOf', entity: downstream, aspect: 'upstreamLineage' }] });
  assert.deepEqual((await read(downstream, 'upstreamLineage'))['com.linkedin.dataset.UpstreamLineage'].upstreams.map((u: { dataset: string }) => u.dataset), [b]);
  // The user itself is not deleted.
  assert.equal((await aspect(user, 'corpUserKey')).status, 200);
});

test('refusals are Rest.li errors that say what was expected, and change nothing', async () => {
  await refused(() => ingest(proposal(DATASET, 'structuredProperties', { properties: [{ propertyUrn: TIER, values: [{ double: 1 }] }] })), 400, /should be a string/);
  await refused(() => ingest({ ...proposal(DATASET, 'status', { removed: false }), aspect: { value: { removed: false }, contentType: 'application/json' } }), 400, /aspect\.value must be the aspect as a JSON string/);
  await refused(() => ingest({ ...proposal(DATASET, 'status', { removed: false }), changeType: 'RESTATE' }), 400, /changeType RESTATE is not supported; expected UPSERT, CREATE, CREATE_ENTITY, PATCH or DELETE/);
  await refused(() => ingest({ ...proposal(DATASET, 'status', { removed: false }), entityType: 'chart' }), 400, /entityType chart does not match the URN's type dataset/);
  await refused(() => post('/aspects?action=ingestProposalBatch', { proposals: [proposal(datasetUrn('restli.half'), 'status', { removed: false }), proposal(datasetUrn('restli.half'), 'subTypes', { typeNames: 7 })] }), 400, /typeNames/);
  await refused(() => post('/aspects?action=nope', {}), 400, /action/);
  await refused(() => post('/entities?action=browse', {}), 400, /query parameter action: expected one of delete, deleteReferences, search, got "browse"/);
  await refused(() => s.request(`/aspects/${enc(DATASET)}`), 400, /The query parameter aspect is required/);
  // Calls of DataHub's clients that svc does not serve: a 404 naming the call and what is served.
  await refused(() => s.request('/entitiesV2?ids=List()'), 400, /The query parameter ids is required/);
  await refused(() => s.request(`/entitiesV2/${enc(DATASET)}?aspects=List(status,no-such)`), 400, /query parameter aspects: "no-such" is not an aspect name/);
  await refused(() => s.request('/entitiesV2?ids=List(urn%3Ali%3Adataset%3A%ZZ)'), 400, /query parameter ids: .* is not valid percent-encoding/);
  await refused(() => post('/entities?action=deleteReferences', { urn: DATASET, dryRun: 'no' }), 400, /Parameter 'dryRun' must be true or false/);
  // A content type svc does not read is named (it was told "not JSON" of the value, or a missing field).
  await refused(() => ingest({ ...proposal(DATASET, 'status', { removed: false }), aspect: { value: '<status/>', contentType: 'application/xml' } }), 400, /aspect\.contentType must be application\/json .*got "application\/xml"/);
  await refused(() => s.request(`/entitiesVersionedV2/${enc(DATASET)}`), 404, /^svc does not serve the Rest.li call GET \/entitiesVersionedV2; it serves GET \/config, GET \/aspects/);
  await refused(() => post('/relationships', {}), 404, /svc does not serve the Rest.li call POST \/relationships/);
});

test('a batch is read whole before anything is written: a malformed proposal after good ones writes nothing', async () => {
  const first = datasetUrn('restli.allornothing');
  await refused(
    () => post('/aspects?action=ingestProposalBatch', { proposals: [proposal(first, 'status', { removed: false }), { ...proposal(first, 'status', { removed: false }), changeType: 'FOO' }] }),
    400,
    /proposals\[1\]: changeType FOO is not supported/,
  );
  await refused(
    () => post('/aspects?action=ingestProposalBatch', { proposals: [proposal(first, 'datasetProperties', { description: 'd1' }), { ...proposal(first, 'datasetProperties', 'x', 'PATCH'), aspect: { value: '{"nope":1}', contentType: 'application/json' } }] }),
    400,
    /proposals\[1\]: a PATCH aspect.value must be a JSON Patch array/,
  );
  // Nor one whose aspect is unknown or breaks its schema, after a DELETE (which ran first).
  await text(await ingest(proposal(first, 'subTypes', { typeNames: ['Table'] })), 200);
  await refused(
    () => post('/aspects?action=ingestProposalBatch', { proposals: [{ ...proposal(first, 'subTypes', {}, 'DELETE') }, proposal(first, 'datasetProperties', { description: 5 })] }),
    400,
    /proposals\[1\]: datasetProperties\.description: must be string/,
  );
  await refused(() => post('/aspects?action=ingestProposalBatch', { proposals: [proposal(first, 'status', { removed: true }), proposal(first, 'noSuchAspect', {})] }), 400, /noSuchAspect/);
  assert.equal((await aspect(first, 'subTypes')).status, 200, 'the DELETE before the refused proposal did not run');
  assert.equal((await aspect(first, 'datasetProperties')).status, 404);
});

test('the aspect JSON of a proposal is held to the rules of any input (it was stored, or a 500)', async () => {
  const urn = datasetUrn('restli.rules');
  const raw = (value: string) => ({ ...proposal(urn, 'datasetProperties', {}), aspect: { value, contentType: 'application/json' } });
  await refused(() => ingest(raw('{"description":"a\\u0000b"}')), 400, /proposal: aspect.value.description: the string contains the NUL character/);
  await refused(() => ingest(raw('{"description":"a\\ud800b"}')), 400, /proposal: aspect.value.description: the string contains a lone UTF-16 surrogate/);
  await refused(() => ingest(raw(`${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`)), 400, /nest/);
  await refused(() => ingest(raw('{"customProperties":{"n":"x"},"description":"x","name":9007199254740993}')), 400, /9007199254740993/);
  assert.equal((await aspect(urn, 'datasetProperties')).status, 404);
});

test('a version number sent in system metadata is not kept: svc numbers versions (it was served as sent)', async () => {
  const urn = datasetUrn('restli.smversion');
  await text(await ingest({ ...proposal(urn, 'status', { removed: false }), systemMetadata: { runId: 'r1', version: '77' } }), 200);
  const one = JSON.parse(await text(await s.request(`/entitiesV2/${enc(urn)}?aspects=List(status)`), 200));
  const sm = one.aspects.status.systemMetadata as { runId: string; version?: string };
  assert.equal(sm.runId, 'r1');
  assert.notEqual(sm.version, '77');
  const v3 = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status?systemMetadata=true`), 200));
  assert.equal(v3.status.systemMetadata.version, '1');
});

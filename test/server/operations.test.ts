/** Operational surface: readiness, metrics, the generated OpenAPI document and its page, graceful shutdown. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import { enc, startTestServer, type TestServer } from '../support/testServer.ts';
import { registry } from '../../server/src/registry/registry.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

test('/ready reports the database up, the migrations applied, search reachable and its lag', async () => {
  const res = await s.request('/ready', { token: null });
  assert.equal(res.status, 200);
  const { searchDelivery, ...rest } = (await res.json()) as { searchDelivery: { lagSeconds: number; outboxDepth: number; failingEntities: number } };
  assert.deepEqual(rest, { status: 'READY', database: 'UP', migrations: 'DONE', search: 'UP' });
  // The server's first writes may still be on their way to search.
  assert.deepEqual(Object.keys(searchDelivery).sort(), ['failingEntities', 'lagSeconds', 'outboxDepth']);
  assert.equal(searchDelivery.failingEntities, 0);
  assert.ok(searchDelivery.lagSeconds >= 0 && searchDelivery.outboxDepth >= 0, JSON.stringify(searchDelivery));
});

test('/metrics counts requests by route and status and exposes the pool', async () => {
  await s.request('/openapi/v3/entity/dataset/urn%3Ali%3Adataset%3Anope');
  await s.request('/openapi/v3/entity/dataset');
  const text = await (await s.request('/metrics', { token: null })).text();
  assert.match(text, /svc_http_requests_total\{method="GET",route="\/openapi\/v3\/entity\/:entityName",status="200"\} [1-9]/);
  assert.match(text, /svc_http_requests_total\{method="GET",route="\/openapi\/v3\/entity\/:entityName\/:urn",status="400"\} 1/);
  assert.match(text, /svc_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/openapi\/v3\/entity\/:entityName"\}/);
  assert.match(text, /svc_db_pool_connections [1-9]/);
});

test('the OpenAPI document is generated from the registry for both families', async () => {
  const doc = (await (await s.request('/openapi/v3/api-docs', { token: null })).json()) as {
    openapi: string;
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, unknown> };
  };
  assert.equal(doc.openapi, '3.1.0');
  for (const e of registry.entities) {
    for (const v of ['v2', 'v3']) {
      assert.ok(doc.paths[`/openapi/${v}/entity/${e.name}`], `${v} ${e.name}`);
      for (const a of [e.keyAspect, ...e.aspects]) assert.ok(doc.paths[`/openapi/${v}/entity/${e.name}/{urn}/${a}`], `${v} ${e.name} ${a}`);
    }
  }
  assert.ok(doc.paths['/openapi/v3/entity/dataset/{urn}/structuredProperties']!.patch);
  // The aspect's schema as validation uses it, with ajv-errors' keyword published as an extension.
  const published = JSON.parse(JSON.stringify(registry.aspect(registry.entity('structuredProperty'), 'propertyDefinition').schema).replaceAll('"errorMessage":', '"x-errorMessage":'));
  assert.deepEqual(doc.components.schemas.PropertyDefinitionAspect, published);
});

test('the OpenAPI document is strict JSON Schema, and the answers the server gives are the ones it declares', async () => {
  type Op = { responses: Record<string, { content?: Record<string, { schema: unknown }> }>; parameters?: { name: string; in: string; required: boolean; schema: { maxLength?: number } }[] };
  const doc = (await (await s.request('/openapi/v3/api-docs', { token: null })).json()) as { paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, unknown> } };
  // Every schema compiles in ajv's strict mode (an unknown keyword such as errorMessage fails it).
  const ajv = new Ajv2020({ strict: true, allErrors: true, strictTypes: false });
  addFormats.default(ajv);
  ajv.addKeyword({ keyword: 'x-errorMessage' });
  const BASE = 'https://svc.invalid/schemas/';
  const based = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${BASE}`));
  for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema({ ...based(schema), $id: `${BASE}${name}` });
  const check = (schema: unknown) => ajv.compile(based(schema));
  for (const name of Object.keys(doc.components.schemas)) check({ $ref: `${BASE}${name}` });
  /** Asserts that `res` answers a status `op` declares, with a body of its declared schema. */
  const declared = async (res: Response, op: Op, what: string) => {
    const answer = op.responses[String(res.status)];
    assert.ok(answer, `${what}: ${res.status} is not declared (${Object.keys(op.responses).join(', ')})`);
    const schema = answer.content?.['application/json']?.schema;
    const text = await res.text();
    if (schema) {
      const valid = check(schema);
      assert.ok(valid(JSON.parse(text)), `${what}: ${text} ${JSON.stringify(valid.errors)}`);
    }
  };
  const dataset = (name: string) => `/openapi/v3/entity/dataset/${enc(`urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`)}`;
  const aspectPath = '/openapi/v3/entity/dataset/{urn}/structuredProperties';
  const json = { 'content-type': 'application/json' };
  // 202 of an asynchronous single write, and of a batch.
  await declared(await s.request(`${dataset('doc.a')}/status?createIfNotExists=false&async=true`, { method: 'POST', body: '{"value":{"removed":false}}' }), doc.paths['/openapi/v3/entity/dataset/{urn}/status']!.post!, 'async write');
  await declared(await s.request('/openapi/v3/entity/dataset', { method: 'POST', body: JSON.stringify([{ urn: 'urn:li:dataset:(urn:li:dataPlatform:hive,doc.b,PROD)', status: { value: { removed: false } } }]) }), doc.paths['/openapi/v3/entity/dataset']!.post!, 'batch');
  // 412 of a PATCH naming a property that does not exist; a bare JSON Patch array is a body it takes.
  const patch = [{ op: 'add', path: '/properties/-', value: { propertyUrn: 'urn:li:structuredProperty:doc.nope', values: [{ double: 1 }] } }];
  const patched = await s.request(`${dataset('doc.a')}/structuredProperties`, { method: 'PATCH', headers: json, body: JSON.stringify(patch) });
  assert.equal(patched.status, 412);
  await declared(patched, doc.paths[aspectPath]!.patch!, 'PATCH of a missing property');
  // 409 of a definition naming a qualified name another property holds.
  const definition = (urn: string) => s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { qualifiedName: 'doc.held', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] } }) });
  assert.equal((await definition('urn:li:structuredProperty:doc.held')).status, 200);
  const taken = await definition('urn:li:structuredProperty:doc.other');
  assert.equal(taken.status, 409);
  await declared(taken, doc.paths['/openapi/v3/entity/structuredProperty/{urn}/propertyDefinition']!.post!, 'a qualified name held');
  // Rest.li calls: the 401 and 415 in Rest.li's form; a required action is marked required.
  const operations = doc.paths['/gms/operations']!.post!;
  await declared(await s.request('/gms/operations?action=getIndexSizes', { method: 'POST', body: '{}', token: null }), operations, 'operations without a token');
  await declared(await s.request('/gms/operations?action=getIndexSizes', { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } }), operations, 'operations as text/plain');
  assert.equal(operations.parameters!.find((p) => p.name === 'action')!.required, true);
  // A HEAD with a malformed URN is a declared 400; schema fields take longer URNs.
  const head = await s.request('/openapi/v3/entity/dataset/notaurn', { method: 'HEAD' });
  assert.ok(doc.paths['/openapi/v3/entity/dataset/{urn}']!.head!.responses[String(head.status)], `HEAD: ${head.status}`);
  assert.equal(doc.paths['/openapi/v3/entity/schemaField/{urn}']!.get!.parameters!.find((p) => p.name === 'urn')!.schema.maxLength, 2048);
  // A page of time series entries, and a missing aspect's 404 with its declared header.
  assert.equal((await s.request(`${dataset('doc.a')}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: '{"value":{"timestampMillis":1000}}' })).status, 200);
  const entries = await s.request('/openapi/v2/timeseries/dataset/datasetProfile?systemMetadata=true');
  assert.equal(entries.status, 200);
  await declared(entries, doc.paths['/openapi/v2/timeseries/{entityName}/{aspectName}']!.get!, 'time series entries');
  const run = await s.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: '{"entityType":"dataset","aspect":"datasetProfile","endTimeMillis":0,"dryRun":false}' });
  const task = ((await run.json()) as { value: string }).value;
  await declared(await s.request(`/openapi/operations/elasticSearch/getTaskStatus?task=${enc(task)}`), doc.paths['/openapi/operations/elasticSearch/getTaskStatus']!.get!, `status of ${task}`);
  await declared(await s.request('/ready', { token: null }), doc.paths['/ready']!.get!, 'ready');
  await declared(await s.request('/api/search/delivery'), doc.paths['/api/search/delivery']!.get!, 'search delivery');
  await declared(await s.request('/health', { token: null }), doc.paths['/health']!.get!, 'health');
  const missing = await s.request(`${dataset('doc.a')}/datasetProperties`);
  assert.equal(missing.status, 404);
  const headers = (doc.paths['/openapi/v3/entity/dataset/{urn}/datasetProperties']!.get!.responses['404'] as { headers?: Record<string, { schema: { enum: string[] } }> }).headers;
  assert.ok(headers?.['Not-Found-Reason']?.schema.enum.includes(missing.headers.get('not-found-reason')!), `Not-Found-Reason ${missing.headers.get('not-found-reason')}`);

  // The Rest.li calls' answers, in DataHub's shapes.
  const restli = async (path: string, method: 'get' | 'post', res: Response, what: string) => {
    assert.equal(res.status, 200, what);
    await declared(res, doc.paths[path]![method]!, what);
  };
  const urnA = 'urn:li:dataset:(urn:li:dataPlatform:hive,doc.a,PROD)';
  const urnC = 'urn:li:dataset:(urn:li:dataPlatform:hive,doc.c,PROD)';
  await restli('/config', 'get', await s.request('/config', { token: null }), 'config');
  const proposal = { entityType: 'dataset', entityUrn: urnC, changeType: 'UPSERT', aspectName: 'status', aspect: { value: '{"removed":false}', contentType: 'application/json' } };
  await restli('/aspects', 'post', await s.request('/aspects?action=ingestProposal', { method: 'POST', body: JSON.stringify({ proposal }) }), 'ingestProposal');
  await restli('/aspects', 'post', await s.request('/aspects?action=ingestProposalBatch', { method: 'POST', body: JSON.stringify({ proposals: [proposal] }) }), 'ingestProposalBatch');
  const series = await s.request('/aspects?action=getTimeseriesAspectValues', { method: 'POST', body: JSON.stringify({ urn: urnA, entity: 'dataset', aspect: 'datasetProfile', startTimeMillis: 0 }) });
  const seriesText = await series.clone().text();
  assert.match(seriesText, /"timestampMillis\\":1000/);
  await restli('/aspects', 'post', series, 'getTimeseriesAspectValues');
  await restli('/aspects/{urn}', 'get', await s.request(`/aspects/${enc(urnC)}?aspect=status&version=0`), 'an aspect');
  await restli('/entitiesV2/{urn}', 'get', await s.request(`/entitiesV2/${enc(urnC)}`), 'an entity');
  const batch = await s.request(`/entitiesV2?ids=List(${enc(urnA)},${enc(urnC)})`);
  assert.deepEqual(Object.keys(((await batch.clone().json()) as { results: object }).results).sort(), [urnA, urnC]);
  await restli('/entitiesV2', 'get', batch, 'entities');
  await restli('/entities', 'post', await s.request('/entities?action=deleteReferences', { method: 'POST', body: JSON.stringify({ urn: urnC }) }), 'deleteReferences');
  await restli('/entities', 'post', await s.request('/entities?action=delete', { method: 'POST', body: JSON.stringify({ urn: urnC }) }), 'delete');
});

test('every operation of the OpenAPI document has a unique operationId; tokens, tasks, health and readiness are in it', async () => {
  const doc = (await (await s.request('/openapi/v3/api-docs', { token: null })).json()) as { paths: Record<string, Record<string, { operationId?: string }>> };
  const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
  assert.ok(ids.length > 500, `${ids.length} operations`);
  assert.ok(ids.every((id) => typeof id === 'string' && id.length > 0), 'an operation without operationId');
  assert.equal(new Set(ids).size, ids.length, 'operationIds repeat');
  for (const [path, method, id] of [
    ['/api/tokens', 'post', 'createToken'],
    ['/api/tokens', 'get', 'listTokens'],
    ['/api/tokens/{id}', 'delete', 'revokeToken'],
    ['/api/tasks', 'get', 'listTasks'],
    ['/api/tasks/{id}', 'get', 'getTask'],
    ['/api/search/delivery', 'get', 'searchDelivery'],
    ['/health', 'get', 'health'],
    ['/ready', 'get', 'ready'],
    ['/openapi/v3/entity/dataset/{urn}/structuredProperties', 'patch', 'v3PatchDatasetStructuredProperties'],
    ['/config', 'get', 'restliConfig'],
    ['/aspects/{urn}', 'get', 'restliGetAspect'],
    ['/aspects', 'post', 'restliIngestProposal'],
    ['/entitiesV2/{urn}', 'get', 'restliGetEntityV2'],
    ['/entitiesV2', 'get', 'restliBatchGetEntityV2'],
    ['/entities', 'post', 'restliDeleteEntity'],
  ] as const) {
    assert.equal(doc.paths[path]?.[method]?.operationId, id, `${method} ${path}`);
  }
});

test('the query parameters a route documents are the ones it takes', async () => {
  const doc = (await (await s.request('/openapi/v3/api-docs', { token: null })).json()) as {
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
  };
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,documented,PROD)';
  for (const [template, method] of [
    ['/openapi/v3/entity/dataset', 'get'],
    ['/openapi/v2/entity/dataset/{urn}', 'get'],
    ['/openapi/v3/entity/dataset/{urn}/status', 'get'],
    ['/api/tasks', 'get'],
    ['/api/search/delivery', 'get'],
  ] as const) {
    const names = (doc.paths[template]![method]!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    assert.ok(names.length > 0, template);
    const path = template.replace('{urn}', encodeURIComponent(urn));
    // Each documented name is known to the route (an empty value reads as its default)...
    const known = await s.request(`${path}?${names.map((n) => `${n}=`).join('&')}`);
    assert.ok([200, 404].includes(known.status), `${template}: ${known.status} ${await known.text()}`);
    // ...and the route names exactly those when refusing another.
    const unknown = await s.request(`${path}?notAParameter=1`);
    assert.equal(unknown.status, 400);
    const message = ((await unknown.json()) as { message: string }).message;
    assert.ok(message.endsWith(`this route takes: ${names.join(', ')}`), `${template}: ${message}`);
  }
});

test('the browsable API page and its assets are served', async () => {
  const page = await s.request('/openapi/swagger-ui/', { token: null });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /SwaggerUIBundle\(\{ url: '\/openapi\/v3\/api-docs'/);
  const bundle = await s.request('/openapi/swagger-ui/swagger-ui-bundle.js', { token: null });
  assert.equal(bundle.status, 200);
  assert.ok((await bundle.text()).length > 100_000);
});

test('an unknown route is 404', async () => {
  const res = await s.request('/nowhere');
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), { error: 'Not Found', message: 'No route for GET /nowhere: see /openapi/v3/api-docs for the API' });
});

test('closing the server finishes a request already in flight', async () => {
  const other = await startTestServer();
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,in_flight,PROD)';
  const body = '{"value":{"removed":true}}';
  const port = new URL(other.url).port;
  const seen = once(other.svc.http, 'request');
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  let response = '';
  socket.setEncoding('utf8').on('data', (c: string) => (response += c));
  // Send the headers and half the body, start the shutdown, then send the rest.
  socket.write(
    `POST /openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-admin-token\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
  );
  await seen; // the server has the request's headers: it is in flight
  const closed = other.close();
  await new Promise((r) => setTimeout(r, 100));
  socket.write(body.slice(10));
  await new Promise<void>((r) => socket.once('close', () => r()));
  await closed;
  assert.match(response, /^HTTP\/1\.1 200 OK/);
  assert.match(response, /"status":\{"value":\{"removed":true\}\}/);
});

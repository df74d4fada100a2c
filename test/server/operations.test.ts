/** Operational surface: readiness, metrics, the generated OpenAPI document and its page, graceful shutdown. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import { enc, startTestServer, type TestServer } from '../support/testServer.ts';
import { registry } from '../../server/src/registry/registry.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

test('/ready reports the database up, the migrations applied and search reachable', async () => {
  const res = await s.request('/ready', { token: null });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'READY', database: 'UP', migrations: 'DONE', search: 'UP' });
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
  assert.deepEqual(doc.components.schemas.PropertyDefinitionAspect, registry.aspect(registry.entity('structuredProperty'), 'propertyDefinition').schema);
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

/**
 * Requests refused before a route sees them, answered at once and in JSON like every other error: a
 * body announced larger than SVC_MAX_BODY_BYTES (413 without waiting for the body), a body that stalls
 * (408 after SVC_REQUEST_TIMEOUT_MS), headers over Node's limit (431) and bytes that are not HTTP (400);
 * and a stop that a stalled request does not hold beyond SVC_SHUTDOWN_GRACE_MS.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { fingerprint } from '../support/fingerprint.ts';
import { rawRequest } from '../support/rawHttp.ts';
import { ADMIN_TOKEN, enc, startTestServer, type TestServer, expectMissing } from '../support/testServer.ts';

let s: TestServer;
const TIMEOUT_MS = 1_500;
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,slow_requests,PROD)';
const post = (path: string, headers: string[]) =>
  [`POST ${path} HTTP/1.1`, 'Host: svc', `Authorization: Bearer ${ADMIN_TOKEN}`, 'Content-Type: application/json', ...headers].join('\r\n');

before(async () => {
  s = await startTestServer({ SVC_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), SVC_MAX_BODY_BYTES: '65536' });
});
after(async () => {
  await s.close();
});

test('a Content-Length over the limit is 413 at once, without waiting for the body, and the connection closes', async () => {
  const before = await fingerprint(s.databaseUrl);
  const res = await rawRequest(s.url, post('/openapi/v3/entity/dataset', ['Content-Length: 10000000000']), '[{');
  assert.equal(res.status, 413);
  assert.deepEqual(JSON.parse(res.body), { error: 'Payload Too Large', message: 'The request body is larger than the limit of 65536 bytes (SVC_MAX_BODY_BYTES)' });
  assert.ok(res.answeredAfterMs < TIMEOUT_MS, `answered after ${res.answeredAfterMs} ms`);
  assert.equal(res.closed, true);
  assert.equal(await fingerprint(s.databaseUrl), before);
});

test('a chunked body growing past the limit is 413 as soon as it does, and is not read on', async () => {
  const before = await fingerprint(s.databaseUrl);
  const chunk = `${'a'.repeat(16_384)}`;
  const chunks = Array.from({ length: 8 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
  const res = await rawRequest(s.url, post('/openapi/v3/entity/dataset', ['Transfer-Encoding: chunked']), chunks);
  assert.equal(res.status, 413);
  assert.match(JSON.parse(res.body).message, /larger than the limit of 65536 bytes/);
  assert.equal(res.closed, true);
  assert.equal(await fingerprint(s.databaseUrl), before);
});

test('a body that stalls is 408 after SVC_REQUEST_TIMEOUT_MS, in JSON, and writes nothing', async () => {
  const before = await fingerprint(s.databaseUrl);
  const path = `/openapi/v3/entity/dataset/${enc(DATASET)}/status?createIfNotExists=false`;
  const res = await rawRequest(s.url, post(path, ['Content-Length: 100']), '{"value":{"removed":', TIMEOUT_MS * 10);
  assert.equal(res.status, 408);
  assert.deepEqual(JSON.parse(res.body), { error: 'Request Timeout', message: `The request was not received in full within ${TIMEOUT_MS} ms (SVC_REQUEST_TIMEOUT_MS)` });
  assert.ok(res.answeredAfterMs >= TIMEOUT_MS - 100, `answered after ${res.answeredAfterMs} ms`);
  assert.equal(res.closed, true);
  assert.equal(await fingerprint(s.databaseUrl), before);
  // The server goes on serving.
  await expectMissing(s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}`));
});

test('headers over Node\'s limit are 431 in JSON, pointing at the URN length limit', async () => {
  const res = await rawRequest(s.url, [`GET /openapi/v3/entity/dataset/${'a'.repeat(20_000)} HTTP/1.1`, 'Host: svc'].join('\r\n'));
  assert.equal(res.status, 431);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.deepEqual(JSON.parse(res.body), {
    error: 'Request Header Fields Too Large',
    message: 'The request line and headers are larger than 16 KB; a URN in the path is at most 512 bytes when URL-encoded',
  });
});

test('a raw NUL or space in the request line is 400 in JSON, saying to percent-encode', async () => {
  for (const line of ['GET /openapi/v3/entity/dataset/a\u0000b HTTP/1.1', 'GET /openapi/v3/entity/dataset/a b c HTTP/1.1']) {
    const res = await rawRequest(s.url, [line, 'Host: svc'].join('\r\n'));
    assert.equal(res.status, 400);
    const body = JSON.parse(res.body) as { error: string; message: string };
    assert.equal(body.error, 'Validation Error');
    assert.match(body.message, /^Malformed HTTP request \(HPE_[A-Z_]+\): percent-encode control characters and spaces in the path$/);
  }
});

test('a request HTTP does not allow is 400 naming what is wrong with it (both Content-Length and Transfer-Encoding was told to percent-encode the path)', async () => {
  const head = (lines: string[]) => post('/openapi/v3/entity/dataset', lines);
  const cases: [string, string, RegExp][] = [
    [head(['Content-Length: 5', 'Transfer-Encoding: chunked']), '', /Content-Length.*send one of them/],
    [head(['Transfer-Encoding: chunked', 'Content-Length: 5']), '', /Content-Length.*send one of them/],
    [head(['Transfer-Encoding: chunked, gzip']), '', /Transfer-Encoding must end with chunked/],
    [head(['Content-Length: 5x']), '', /Content-Length must be one decimal number/],
    [head(['Bad Header: y']), '', /a header name or value holds a character HTTP does not allow/],
    [head(['Transfer-Encoding: chunked']), 'zz\r\n', /does not start with its size in hexadecimal/],
  ];
  for (const [request, body, message] of cases) {
    const res = await rawRequest(s.url, request, body);
    assert.equal(res.status, 400, `${request}: ${res.status} ${res.body}`);
    assert.match(JSON.parse(res.body).message, message, request);
    assert.doesNotMatch(JSON.parse(res.body).message, /percent-encode/, request);
  }
});

test('a stop is not held by a stalled request: its connection is closed after SVC_SHUTDOWN_GRACE_MS', async () => {
  const own = await startTestServer({ SVC_REQUEST_TIMEOUT_MS: '3600000', SVC_SHUTDOWN_GRACE_MS: '300' });
  const { port } = new URL(own.url);
  const socket = connect(Number(port), '127.0.0.1');
  const socketClosed = once(socket, 'close');
  await once(socket, 'connect');
  const path = `/openapi/v3/entity/dataset/${enc(DATASET)}/status?createIfNotExists=false`;
  // The request is in the server's hands (its body is being read) before the stop begins.
  const received = once(own.svc.http, 'request');
  socket.write(`${post(path, ['Content-Length: 100'])}\r\n\r\n{"value":`);
  await received;
  const closing = own.close().then(() => 'closed' as const);
  const bound = new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), 30_000).unref());
  assert.equal(await Promise.race([closing, bound]), 'closed', 'the stop waited for the stalled request beyond the grace');
  await socketClosed;
});

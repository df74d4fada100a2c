/**
 * Connections as clients and load balancers use them. A body over the limit is answered 413, and the
 * answer reaches clients that read it only once they have sent the whole body (fetch, Python's
 * requests, node:http): svc reads and drops the rest before closing, as nginx lingers (closing with
 * unread bytes sent a reset, which those clients reported instead of the 413). An idle keep-alive
 * connection stays open for SVC_KEEP_ALIVE_TIMEOUT_MS (75 s by default, past a balancer's 60 s; it was
 * Node's 5 s, below every balancer's, which makes intermittent 502s), whatever the request timeout.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { loadConfig } from '../../server/src/config.ts';
import { startChildServer, type ChildServer } from '../support/childServer.ts';
import { fingerprint } from '../support/fingerprint.ts';
import { ADMIN_TOKEN, createTestDatabase, enc, startTestServer, type TestServer } from '../support/testServer.ts';

const LIMIT = 65_536;
const REQUEST_TIMEOUT_MS = 1_000;
const KEEP_ALIVE_MS = 4_000;
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,connections,PROD)';
const PATH = `/openapi/v3/entity/dataset/${enc(DATASET)}/datasetProperties?createIfNotExists=false`;

let s: TestServer;
/** The same server in a process of its own: its event loop is not the clients'. */
let child: ChildServer;
let childDatabase: string;
before(async () => {
  const env = { SVC_MAX_BODY_BYTES: String(LIMIT), SVC_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), SVC_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS) };
  s = await startTestServer(env);
  childDatabase = await createTestDatabase();
  // The body limit's test sends 64 MB bodies: with the default time to receive a request (not the 1 s
  // the keep-alive tests need), a loaded machine's slow send is not taken for a slow client (a 408).
  child = await startChildServer({ SVC_MAX_BODY_BYTES: String(LIMIT), DATABASE_URL: childDatabase });
});
after(async () => {
  await child?.kill();
  await s.close();
});

/** A JSON body of about `bytes`. */
const bodyOf = (bytes: number) => Buffer.from(`{"value":{"description":"${'x'.repeat(bytes)}"}}`);

/** Sends the whole body with node:http (declared length, or chunked), then reads the answer. */
function nodeHttp(body: Buffer, chunked: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(child.url);
    const req = request(
      { host: url.hostname, port: url.port, path: PATH, method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': body.length }) }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    if (chunked) {
      for (let at = 0; at < body.length; at += 1 << 16) req.write(body.subarray(at, at + (1 << 16)));
      req.end();
    } else req.end(body);
  });
}

async function viaFetch(body: Buffer): Promise<{ status: number; body: string }> {
  const res = await fetch(`${child.url}${PATH}`, { method: 'POST', body: new Uint8Array(body), headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' } });
  return { status: res.status, body: await res.text() };
}

describe('a body over the limit', () => {
  test('is answered 413 to clients that send it whole before reading, of every size up to 64 MB, and changes nothing', { timeout: 300_000 }, async () => {
    const before = await fingerprint(childDatabase);
    const clients: [string, (b: Buffer) => Promise<{ status: number; body: string }>][] = [
      ['fetch', viaFetch],
      ['node:http with Content-Length', (b) => nodeHttp(b, false)],
      ['node:http chunked', (b) => nodeHttp(b, true)],
    ];
    for (const size of [LIMIT + 1, 1 << 20, 16 << 20, 64 << 20]) {
      const body = bodyOf(size);
      for (const [name, send] of clients) {
        for (let attempt = 0; attempt < 3; attempt++) {
          const res = await send(body).catch((err: Error & { cause?: { code?: string } }) => assert.fail(`${name}, ${size} bytes: ${err.cause?.code ?? err.message} instead of the 413`));
          assert.equal(res.status, 413, `${name}, ${size} bytes: ${res.body.slice(0, 200)}`);
          assert.deepEqual(JSON.parse(res.body), { error: 'Payload Too Large', message: `The request body is larger than the limit of ${LIMIT} bytes (SVC_MAX_BODY_BYTES)` });
        }
      }
    }
    assert.equal(await fingerprint(childDatabase), before);
    assert.equal((await child.remote.request('/health')).status, 200);
  });
});

describe('keep-alive', () => {
  test('the default keeps an idle connection 75 s, past a load balancer\'s 60 s idle timeout', () => {
    assert.equal(loadConfig({}).keepAliveTimeoutMs, 75_000);
    assert.throws(() => loadConfig({ SVC_KEEP_ALIVE_TIMEOUT_MS: '10' }), /SVC_KEEP_ALIVE_TIMEOUT_MS must be an integer between 1000 and 3600000/);
  });

  test('an idle connection is reused past the request timeout, and closed by svc after SVC_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<Socket>((resolve, reject) => {
        const url = new URL(s.url);
        const req = request({ host: url.hostname, port: url.port, path: '/health', agent }, (res) => {
          res.resume().on('end', () => resolve(req.socket as Socket));
        });
        req.on('error', reject).end();
      });
    try {
      const first = await get();
      let closedAt: number | undefined;
      first.once('close', () => (closedAt = Date.now()));
      const idleFrom = Date.now();
      await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS * 2.5));
      const second = await get();
      assert.equal(second, first, 'the idle connection was reused');
      assert.equal(closedAt, undefined);
      await new Promise((r) => setTimeout(r, KEEP_ALIVE_MS + 2_000));
      assert.ok(closedAt !== undefined, `svc closed the idle connection (idle since ${Date.now() - idleFrom} ms)`);
    } finally {
      agent.destroy();
    }
  });
});

/**
 * Search under faults, on OpenSearch: writes go on while OpenSearch is unreachable and every one is
 * found once it is back; a server killed (SIGKILL) with undelivered changes delivers them after the
 * restart. OpenSearch is made unreachable by cutting a TCP proxy the server talks through (the real
 * OpenSearch behind it is shared by the suite and keeps running).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@opensearch-project/opensearch';
import { createDataset, propertyUrn, setValues, writeDefinition } from '../support/structuredProperties.ts';
import { ADMIN_TOKEN, createTestDatabase, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';

const OPENSEARCH_URL = process.env.OPENSEARCH_URL;
if (!OPENSEARCH_URL) throw new Error('OPENSEARCH_URL is not set: run through `npm test`, which starts OpenSearch');
const ROOT = resolve(import.meta.dirname, '../..');

/** A TCP proxy to OpenSearch that can be cut (connections dropped, nothing accepted) and restored. */
class Proxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: URL) {}

  async up(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    if (!this.server?.listening) return;
    const closed = new Promise<void>((r) => this.server!.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}

const TIER = propertyUrn('faults.tier');

async function waitUntil<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    assert.ok(Date.now() < deadline, `${what}: still ${JSON.stringify(v)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('search faults on opensearch', () => {
  const prefix = `f${randomBytes(4).toString('hex')}`;
  const client = new Client({ node: OPENSEARCH_URL });
  const proxy = new Proxy(new URL(OPENSEARCH_URL!));
  let env: Record<string, string>;

  before(async () => {
    await proxy.up();
    env = { SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: proxy.url, INDEX_PREFIX: prefix, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0' };
  });
  after(async () => {
    await proxy.cut();
    await client.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true });
    await client.close();
  });

  /** The URNs a query finds through the server's REST API. */
  async function found(s: { request: TestServer['request'] }, q: string): Promise<string[]> {
    const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}&count=1000`);
    if (res.status !== 200) return [];
    return ((await res.json()) as { entities: { urn: string }[] }).entities.map((e) => e.urn).sort();
  }

  test('OpenSearch unreachable: writes succeed, /ready says so, and every write is searchable once it is back', async () => {
    const s = await startTestServer({ ...env, DATABASE_URL: await createTestDatabase() });
    try {
      await text(await writeDefinition(s, TIER, { qualifiedName: 'faults.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      const urns: string[] = [];
      const write = async (i: number) => {
        const urn = await createDataset(s, `outage${i}`);
        await text(await setValues(s, urn, [{ propertyUrn: TIER, values: [{ string: 'outage' }] }]), 200);
        urns.push(urn);
      };
      for (let i = 0; i < 5; i++) await write(i);
      await proxy.cut();
      for (let i = 5; i < 25; i++) await write(i);
      const ready = await s.request('/ready', { token: null });
      assert.equal(ready.status, 200, 'the server stays in service');
      assert.equal(((await ready.json()) as { search: string }).search, 'UNREACHABLE');
      const n = (await sql<{ n: number }>(s.databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox'))[0]!.n;
      assert.ok(n > 0, 'changes wait in the outbox');
      assert.match(await (await s.request('/metrics')).text(), /svc_search_outbox_depth [1-9]/);
      await proxy.up();
      await waitUntil('every write searchable', () => found(s, 'structuredProperties.faults_tier:outage'), (got) => got.length === urns.length);
      assert.deepEqual(await found(s, 'structuredProperties.faults_tier:outage'), urns.sort());
    } finally {
      await s.svc.close();
    }
  });

  test('SIGKILL with undelivered changes: they are delivered after the restart', async () => {
    const databaseUrl = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-faults-'));
    await proxy.cut();
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env, DATABASE_URL: databaseUrl, PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      // The server logs its port once it listens.
      const port = await new Promise<number>((done, fail) => {
        let out = '';
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          const m = out.match(/"port":(\d+)/);
          if (m) done(Number(m[1]));
        });
        child.on('exit', (code) => fail(new Error(`the server exited (${code}) before listening: ${out}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      const remote = {
        request: (path: string, init: RequestInit = {}) =>
          fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...(init.headers as object) } }),
      } as unknown as TestServer;
      await text(await writeDefinition(remote, TIER, { qualifiedName: 'faults.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      const urns: string[] = [];
      for (let i = 0; i < 10; i++) {
        const urn = await createDataset(remote, `killed${i}`);
        await text(await setValues(remote, urn, [{ propertyUrn: TIER, values: [{ string: 'killed' }] }]), 200);
        urns.push(urn);
      }
      const n = (await sql<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox'))[0]!.n;
      assert.ok(n >= 10, `changes wait in the outbox (${n})`);
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await proxy.up();
      const s = await startTestServer({ ...env, DATABASE_URL: databaseUrl });
      try {
        await waitUntil('the undelivered changes delivered', () => found(s, 'structuredProperties.faults_tier:killed'), (got) => got.length === urns.length);
        assert.deepEqual(await found(s, 'structuredProperties.faults_tier:killed'), urns.sort());
        assert.deepEqual(await sql(databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox'), [{ n: 0 }]);
      } finally {
        await s.svc.close();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

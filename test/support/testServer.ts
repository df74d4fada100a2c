/**
 * An in-process svc server for a test file, on a database of its own in the cluster the harness
 * started (`DATABASE_URL`), with a known admin token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Client as OpenSearchClient } from '@opensearch-project/opensearch';
import pino from 'pino';
import { loadConfig } from '../../server/src/config.ts';
import { startSvc, type Svc } from '../../server/src/server.ts';

export const ADMIN_TOKEN = 'test-admin-token';

export interface TestServer {
  svc: Svc;
  url: string;
  /** Connection string of this server's own database, for asserting on what was stored. */
  databaseUrl: string;
  /** `fetch` against the server with the admin token (override with `headers.authorization`). */
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The test server's logger: `SVC_TEST_LOG_LEVEL` when set; otherwise only the warnings of a shutdown
 * that waits (to stderr), which say what a hanging `close()` waits on.
 */
function testLogger(): pino.Logger {
  const level = process.env.SVC_TEST_LOG_LEVEL;
  if (level) return pino({ level });
  return pino({ level: 'warn' }, { write: (line: string) => void (line.includes('"msg":"shutdown: ') && process.stderr.write(line)) });
}

/** Creates an empty database on the harness's cluster and returns its URL. */
export async function createTestDatabase(admin = process.env.DATABASE_URL): Promise<string> {
  if (!admin) throw new Error('DATABASE_URL is not set: run the tests through `npm test`, which starts Postgres');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const databaseUrl = env.DATABASE_URL ?? (await createTestDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-data-'));
  // On the shared test OpenSearch: indices of this server's own (removed on close), without replicas.
  const search = env.SEARCH_BACKEND === 'opensearch' ? { INDEX_PREFIX: `t${randomBytes(5).toString('hex')}`, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0' } : {};
  // The suite's write strategy (test/run.ts runs the behaviour tests of writes under each).
  const strategy = Object.fromEntries(['SVC_WRITE_STRATEGY', 'SVC_WRITE_STATE_SOURCES'].filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]!]));
  const config = loadConfig({ PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_DB_POOL_SIZE: '10', ...strategy, ...search, ...env, DATABASE_URL: databaseUrl });
  const svc = await startSvc(config, testLogger());
  return {
    svc,
    url: svc.url,
    databaseUrl,
    request(path, init = {}) {
      const { token = ADMIN_TOKEN, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
      if (rest.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      return fetch(`${svc.url}${path}`, { ...rest, headers });
    },
    async close() {
      await svc.close();
      if (config.searchBackend === 'opensearch') {
        const client = new OpenSearchClient({ node: config.opensearchUrl });
        await client.indices.delete({ index: `${config.indexPrefix}_*`, expand_wildcards: 'all', ignore_unavailable: true });
        await client.close();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The body of a response that must have `status`; the body is the failure message when it has not. */
export async function text(res: Response, status: number): Promise<string> {
  const body = await res.text();
  assert.equal(res.status, status, body);
  return body;
}

/** Percent-encodes a URN for a path segment (colon, parentheses and comma included). */
export function enc(urn: string): string {
  return encodeURIComponent(urn).replace(/\(/g, '%28').replace(/\)/g, '%29');
}

/** Runs one SQL query on a database and returns its rows. */
export async function sql<T extends Record<string, unknown>>(databaseUrl: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

/** Asserts DataHub's answer for a missing entity or aspect: 404, an empty body and `Not-Found-Reason: ENTITY`. */
export async function expectMissing(res: Response | Promise<Response>, what = 'the entity'): Promise<void> {
  const r = await res;
  const body = await r.text();
  assert.equal(r.status, 404, `${what}: ${r.status} ${body}`);
  assert.equal(body, '', `${what}: a missing entity or aspect has an empty body`);
  assert.equal(r.headers.get('not-found-reason'), 'ENTITY', what);
}

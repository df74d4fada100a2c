/** Tokens and roles: admin manages tokens; readers read, writers write, hard delete needs admin. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../server/src/config.ts';
import { startSvc } from '../../server/src/server.ts';
import { createTestDatabase, enc, sql, startTestServer, type TestServer } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,auth_target,PROD)';
const statusPath = `/openapi/v3/entity/dataset/${enc(URN)}/status?createIfNotExists=false`;

async function token(name: string, role: string): Promise<{ id: string; token: string }> {
  const res = await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name, role }) });
  assert.equal(res.status, 201);
  return (await res.json()) as { id: string; token: string };
}

describe('roles', () => {
  test('a reader reads but cannot write', async () => {
    await s.request(statusPath, { method: 'POST', body: '{"value":{"removed":false}}' });
    const { token: t } = await token('reader-1', 'reader');
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(URN)}`, { token: t })).status, 200);
    const denied = await s.request(statusPath, { method: 'POST', body: '{"value":{"removed":true}}', token: t });
    assert.equal(denied.status, 403);
    assert.deepEqual(await denied.json(), {
      error: 'urn:li:corpuser:reader-1 is unauthorized to UPDATE entities.',
      message: `This needs a token with the writer role; the token used has the reader role (${URN})`,
    });
  });

  test('a writer writes and is recorded as the actor, but cannot hard delete or manage tokens', async () => {
    const { token: t } = await token('writer-1', 'writer');
    assert.equal((await s.request(statusPath, { method: 'POST', body: '{"value":{"removed":true}}', token: t })).status, 200);
    const read = await (await s.request(`/openapi/v3/entity/dataset/${enc(URN)}?aspects=status&systemMetadata=true`)).json();
    assert.equal((read as { status: { auditStamp: { actor: string } } }).status.auditStamp.actor, 'urn:li:corpuser:writer-1');
    const del = await s.request(`/openapi/v3/entity/dataset/${enc(URN)}`, { method: 'DELETE', token: t });
    assert.equal(del.status, 403);
    const denied = (await del.json()) as { error: string; message: string };
    assert.match(denied.error, /unauthorized to DELETE entities/);
    assert.match(denied.message, /needs a token with the admin role; the token used has the writer role/);
    const tokensDenied = await s.request('/api/tokens', { token: t });
    assert.equal(tokensDenied.status, 403);
    assert.match(((await tokensDenied.json()) as { error: string }).error, /^urn:li:corpuser:writer-1 is unauthorized to manage tokens\.$/);
    // Deleting one aspect is a write, not a hard delete.
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(URN)}/status`, { method: 'DELETE', token: t })).status, 200);
  });

  test('every way to hard delete needs admin: the key among the listed aspects, a property definition, clear on a property', async () => {
    const { token: t } = await token('writer-2', 'writer');
    const prop = 'urn:li:structuredProperty:auth.guarded';
    const def = { qualifiedName: 'auth.guarded', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] };
    assert.equal((await s.request(`/openapi/v3/entity/structuredProperty/${enc(prop)}/propertyDefinition`, { method: 'POST', body: JSON.stringify({ value: def }) })).status, 200);
    await s.request(statusPath, { method: 'POST', body: '{"value":{"removed":false}}' });
    const attempts = [
      `/openapi/v3/entity/dataset/${enc(URN)}?aspects=datasetKey&aspects=status`,
      `/openapi/v3/entity/dataset/${enc(URN)}/datasetKey`,
      `/openapi/v3/entity/structuredProperty/${enc(prop)}/propertyDefinition`,
      `/openapi/v3/entity/structuredProperty/${enc(prop)}?aspects=propertyDefinition`,
      `/openapi/v3/entity/structuredProperty/${enc(prop)}?clear=true`,
    ];
    for (const path of attempts) {
      const res = await s.request(path, { method: 'DELETE', token: t });
      assert.equal(res.status, 403, path);
      const denied = (await res.json()) as { error: string; message: string };
      assert.match(denied.error, /is unauthorized to DELETE entities\.$/);
      assert.match(denied.message, /needs a token with the admin role/);
    }
    assert.equal((await s.request(`/openapi/v3/entity/structuredProperty/${enc(prop)}/propertyDefinition`)).status, 200, 'the definition is still there');
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(URN)}`)).status, 200, 'the dataset is still there');
  });

  test('tokens are listed without secrets, stored hashed, and revocation is immediate', async () => {
    const created = await token('revoke-me', 'writer');
    const list = (await (await s.request('/api/tokens')).json()) as { tokens: Record<string, unknown>[] };
    const entry = list.tokens.find((t) => t.id === created.id)!;
    assert.deepEqual(Object.keys(entry).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'name', 'revokedAt', 'role']);
    const rows = await sql<{ token_hash: string }>(s.databaseUrl, 'SELECT token_hash FROM api_tokens WHERE id = $1', [created.id]);
    assert.match(rows[0]!.token_hash, /^[0-9a-f]{64}$/);
    assert.notEqual(rows[0]!.token_hash, created.token);
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(URN)}`, { token: created.token })).status, 200);
    const revoked = await s.request(`/api/tokens/${created.id}`, { method: 'DELETE' });
    assert.equal(revoked.status, 200);
    assert.ok(((await revoked.json()) as { revokedAt: string | null }).revokedAt);
    const revokedUse = await s.request(`/openapi/v3/entity/dataset/${enc(URN)}`, { token: created.token });
    assert.equal(revokedUse.status, 401);
    assert.deepEqual(await revokedUse.json(), { error: 'Unauthorized', message: 'The bearer token is not valid (unknown, revoked or expired)' });
  });

  test('a token that expired is refused; one that expires later is taken until then', async () => {
    const expiresAt = Date.now() + 3_600_000;
    const later = (await (await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'expiring', role: 'reader', expiresAt }) })).json()) as { id: string; token: string; expiresAt: string };
    assert.equal(later.expiresAt, new Date(expiresAt).toISOString());
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(URN)}`, { token: later.token })).status, 200);
    const soon = (await (await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'expired', role: 'reader', expiresAt: Date.now() + 60_000 }) })).json()) as { id: string; token: string };
    await sql(s.databaseUrl, "UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [soon.id]);
    const refused = await s.request(`/openapi/v3/entity/dataset/${enc(URN)}`, { token: soon.token });
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { error: 'Unauthorized', message: 'The bearer token is not valid (unknown, revoked or expired)' });
    const past = await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'past', role: 'reader', expiresAt: 1 }) });
    assert.equal(past.status, 400);
    assert.match(((await past.json()) as { message: string }).message, /expiresAt: must be in the future \(got 1970-01-01T00:00:00.001Z\)/);
  });

  test('token creation validates its input', async () => {
    const res = await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'bad name!', role: 'root' }) });
    assert.equal(res.status, 400);
    const { message } = (await res.json()) as { message: string };
    assert.match(message, /name: must be 1-64 characters/);
    assert.match(message, /role: must be one of reader, writer, admin/);
  });

  test('revoking an unknown token is 404', async () => {
    const res = await s.request('/api/tokens/nope', { method: 'DELETE' });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'Not Found', message: 'No token with id nope' });
    assert.equal(res.headers.get('not-found-reason'), null);
  });
});

describe('open routes and switches', () => {
  test('/health, /ready and /metrics need no token', async () => {
    for (const path of ['/health', '/ready', '/metrics']) assert.equal((await s.request(path, { token: null })).status, 200, path);
  });

  test('with SVC_AUTH_ENABLED=false no token is needed', async () => {
    const open = await startTestServer({ SVC_AUTH_ENABLED: 'false' });
    try {
      assert.equal((await open.request('/openapi/v3/entity/dataset', { token: null })).status, 200);
    } finally {
      await open.close();
    }
  });

  test('without SVC_ADMIN_TOKEN a root token is generated once, saved under SVC_DATA_DIR, and reused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-token-'));
    const databaseUrl = await createTestDatabase();
    const config = loadConfig({ PORT: '0', SVC_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, SVC_DB_POOL_SIZE: '2' });
    try {
      const first = await startSvc(config, pino({ level: 'silent' }));
      await first.close();
      assert.equal(first.rootToken.generated, true);
      const saved = join(dataDir, 'admin-token');
      assert.ok(existsSync(saved));
      assert.equal(readFileSync(saved, 'utf8').trim(), first.rootToken.token);
      const second = await startSvc(config, pino({ level: 'silent' }));
      try {
        assert.equal(second.rootToken.generated, false);
        assert.equal(second.rootToken.token, first.rootToken.token);
        const res = await fetch(`${second.url}/openapi/v3/entity/dataset`, { headers: { authorization: `Bearer ${first.rootToken.token}` } });
        assert.equal(res.status, 200);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

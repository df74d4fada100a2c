/**
 * `npm run system-update` as the Helm chart and the operator run it: a process of its own on the
 * catalog's database, twice in a row, twice at once, and `--restore-indices` rebuilding every search
 * document from the primary store (on both backends); with both switches after a hard delete, the
 * index rebuild that drops the property's mapping, through a SIGKILL of the server running it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Client } from '@opensearch-project/opensearch';
import pg from 'pg';
import { targetFields } from '../../server/src/search/indexRebuild.ts';
import { pollUntil } from '../support/poll.ts';
import { builtEntry } from '../support/built.ts';
import { startChildServer, type ChildServer } from '../support/childServer.ts';
import { createDataset, datasetUrn, propertyUrn, setValues, writeDefinition } from '../support/structuredProperties.ts';
import { HARD_DELETE_TASK, waitForTask } from '../support/tasks.ts';
import { createTestDatabase, enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';
import { opensearchUrl } from '../support/searchBackends.ts';

const OPENSEARCH_URL = opensearchUrl();
const ROOT = resolve(import.meta.dirname, '../..');

/** Runs `npm run system-update` (its compiled entry, directly) with `env`; resolves with its exit code and output. */
function runSystemUpdate(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [builtEntry('server/src/systemUpdate.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, SVC_LOG_LEVEL: 'warn', SVC_ADMIN_TOKEN: 'system-update-test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('close', (code) => done({ code, output }));
  });
}

/**
 * For a describe block: servers run as processes of their own on a new database each, with OpenSearch
 * indices of the block's own prefix; killed, and the indices deleted, after the block.
 */
function openSearchDeployment(stem: string) {
  const prefix = `${stem}${randomBytes(4).toString('hex')}`;
  const client = new Client({ node: OPENSEARCH_URL });
  const servers: ChildServer[] = [];
  after(async () => {
    for (const s of servers) await s.kill();
    await client.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true });
    await client.close();
  });
  return {
    prefix,
    client,
    env: async () => ({
      DATABASE_URL: await createTestDatabase(),
      SEARCH_BACKEND: 'opensearch',
      OPENSEARCH_URL: OPENSEARCH_URL,
      INDEX_PREFIX: prefix,
      ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0',
    }),
    start: async (env: Record<string, string>): Promise<ChildServer> => {
      const server = await startChildServer(env);
      servers.push(server);
      return server;
    },
  };
}

describe('system-update on opensearch', () => {
  const prefix = `su${randomBytes(4).toString('hex')}`;
  const client = new Client({ node: OPENSEARCH_URL });
  let env: Record<string, string>;

  before(async () => {
    env = {
      DATABASE_URL: await createTestDatabase(),
      SEARCH_BACKEND: 'opensearch',
      OPENSEARCH_URL: OPENSEARCH_URL,
      INDEX_PREFIX: prefix,
      ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0',
      ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE: 'true',
    };
  });
  after(async () => {
    await client.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true });
    await client.close();
  });

  /** Alias → the concrete indices behind it, for this deployment. */
  async function aliases(): Promise<Map<string, string[]>> {
    const { body } = await client.indices.getAlias({ index: `${prefix}_*` });
    const out = new Map<string, string[]>();
    for (const [index, v] of Object.entries(body as Record<string, { aliases: Record<string, unknown> }>)) {
      for (const alias of Object.keys(v.aliases)) out.set(alias, [...(out.get(alias) ?? []), index].sort());
    }
    return out;
  }

  test('twice at once, then again: every index once, behind its alias; exit 0 each time', async () => {
    const [a, b] = await Promise.all([runSystemUpdate(env), runSystemUpdate(env)]);
    assert.equal(a.code, 0, a.output);
    assert.equal(b.code, 0, b.output);
    const first = await aliases();
    assert.ok(first.has(`${prefix}_datasetindex_v2`), [...first.keys()].join());
    assert.ok(first.has(`${prefix}_structuredpropertyindex_v2`));
    for (const [alias, indices] of first) assert.equal(indices.length, 1, `${alias} → ${indices.join()}`);
    const again = await runSystemUpdate(env);
    assert.equal(again.code, 0, again.output);
    assert.deepEqual(await aliases(), first, 'a second run changes nothing');
  });

  test('with the structured-properties switch, active properties get their mappings; soft-deleted ones do not', async () => {
    const s = await startTestServer({ DATABASE_URL: env.DATABASE_URL! });
    try {
      await text(await writeDefinition(s, propertyUrn('su.kept'), { qualifiedName: 'su.kept', valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataFlow'] }), 200);
      await text(await writeDefinition(s, propertyUrn('su.hidden'), { qualifiedName: 'su.hidden', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.chart'] }), 200);
      await text(
        await s.request(`/openapi/v3/entity/structuredProperty/${encodeURIComponent(propertyUrn('su.hidden'))}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed: true } }) }),
        200,
      );
    } finally {
      await s.close();
    }
    // A new OpenSearch (another prefix: nothing was ever delivered there): the mappings come from the definitions.
    const res = await runSystemUpdate({ ...env, INDEX_PREFIX: `${prefix}_new` });
    assert.equal(res.code, 0, res.output);
    const mapping = async (type: string) => JSON.stringify((await client.indices.getMapping({ index: `${prefix}_new_${type}index_v2` })).body);
    assert.match(await mapping('dataflow'), /"su_kept":\{"type":"double"\}/);
    assert.doesNotMatch(await mapping('chart'), /su_hidden/);
  });
});

describe('system-update with both switches after a hard delete, on opensearch', () => {
  const { prefix, client, env: newEnv, start } = openSearchDeployment('rb');

  test('the deleted property\'s mapping goes, through a rebuild task that survives a SIGKILL; other mappings and documents stay', async () => {
    const env = await newEnv();
    const a = await start(env);
    const s = a.remote as TestServer;
    const KEEP = propertyUrn('rb.keep');
    const GONE = propertyUrn('rb.gone');
    await text(await writeDefinition(s, KEEP, { qualifiedName: 'rb.keep', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
    await text(await writeDefinition(s, GONE, { qualifiedName: 'rb.gone', valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
    const urns: string[] = [];
    for (let i = 0; i < 30; i++) {
      const urn = await createDataset(s, `rb${i}`);
      await text(await setValues(s, urn, [{ propertyUrn: KEEP, values: [{ string: 'gold' }] }, { propertyUrn: GONE, values: [{ double: i }] }]), 200);
      urns.push(urn);
    }
    const outboxEmpty = () => sql<{ n: number }>(env.DATABASE_URL, 'SELECT count(*)::int AS n FROM search_outbox').then((r) => r[0]!.n);
    // The values reach the index (and give it the property's field) before the delete: a slow delivery
    // would otherwise find them already cleaned up, and the field would never be mapped.
    await pollUntil('the values delivered to search', outboxEmpty, (n) => n === 0, 60_000);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(GONE)}`, { method: 'DELETE' }), 200);
    await waitForTask(s, GONE, HARD_DELETE_TASK);
    await pollUntil('the cleanup delivered to search', outboxEmpty, (n) => n === 0, 60_000);
    const alias = `${prefix}_datasetindex_v2`;
    const mapping = async () => JSON.stringify((await client.indices.getMapping({ index: alias })).body);
    assert.match(await mapping(), /rb_gone/, 'the mapping outlives the values until a rebuild');
    const [oldIndex] = Object.keys((await client.indices.getAlias({ name: alias })).body as object);

    // Hold the dispatcher (its advisory lock), so that the rebuild is caught in the middle.
    const lock = new pg.Client({ connectionString: env.DATABASE_URL });
    await lock.connect();
    await lock.query("SELECT pg_advisory_lock(hashtextextended('search:dispatcher', 0))");
    const res = await runSystemUpdate({ ...env, ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE: 'true', ELASTICSEARCH_INDEX_BUILDER_MAPPINGS_REINDEX: 'true' });
    assert.equal(res.code, 0, res.output);
    const task = () =>
      sql<{ id: number; state: string; params: { index: string }; total: number | null; done: number; attempts: number }>(
        env.DATABASE_URL,
        "SELECT id, state, params, total, done, attempts FROM tasks WHERE kind = 'search-index-rebuild'",
      );
    const [running] = await pollUntil('the rebuild running', task, (t) => t.length === 1 && t[0]!.state === 'RUNNING' && t[0]!.total !== null, 60_000);
    assert.equal(running!.total, 30, 'every dataset is queued again');
    assert.equal(running!.done, 0);
    assert.ok((await client.indices.exists({ index: running!.params.index })).body, 'the new index exists');
    // A write during the rebuild reaches the new index too.
    const late = await createDataset(s, 'rb-late');
    await text(await setValues(s, late, [{ propertyUrn: KEEP, values: [{ string: 'gold' }] }]), 200);
    urns.push(late);
    await a.kill();
    await lock.end();

    const b = await start(env);
    const [done] = await pollUntil('the rebuild resumed and done', task, (t) => t[0]!.state === 'SUCCEEDED', 60_000);
    assert.ok(done!.attempts >= 2, `resumed by the new server (attempts ${done!.attempts})`);
    assert.deepEqual(Object.keys((await client.indices.getAlias({ name: alias })).body as object), [done!.params.index], 'the alias is on the new index alone');
    assert.equal((await client.indices.exists({ index: oldIndex! })).body, false, 'the old index is deleted');
    assert.doesNotMatch(await mapping(), /rb_gone/, 'the deleted property\'s mapping is gone');
    assert.match(await mapping(), /"rb_keep":\{"type":"keyword","ignore_above":8191\}/, 'other mappings stay');
    await pollUntil('outbox delivered', outboxEmpty, (n) => n === 0, 60_000);
    const res2 = await (b.remote as TestServer).request(`/openapi/v3/entity/dataset?query=${encodeURIComponent('structuredProperties.rb_keep:gold')}&count=100`);
    const found = ((JSON.parse(await text(res2, 200)) as { entities: { urn: string }[] }).entities.map((e) => e.urn)).sort();
    assert.deepEqual(found, urns.sort(), 'every document is in the new index, the one written during the rebuild too');
    assert.deepEqual(await sql(env.DATABASE_URL, 'SELECT count(*)::int AS n FROM search_rebuilds'), [{ n: 0 }]);
    const again = await runSystemUpdate({ ...env, ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE: 'true', ELASTICSEARCH_INDEX_BUILDER_MAPPINGS_REINDEX: 'true' });
    assert.equal(again.code, 0, again.output);
    assert.equal((await task()).length, 1, 'nothing left to rebuild: no second task');
  });
});

describe('a property created again with another value type, on opensearch', () => {
  const { prefix, client, env: newEnv, start } = openSearchDeployment('rt');

  test('the index is rebuilt by itself (a task), and values of the new type are found', async () => {
    const env = await newEnv();
    const a = await start(env);
    const s = a.remote as TestServer;
    const P = propertyUrn('rt.size');
    const outboxEmpty = () => sql<{ n: number }>(env.DATABASE_URL, 'SELECT count(*)::int AS n FROM search_outbox').then((r) => r[0]!.n);
    await text(await writeDefinition(s, P, { qualifiedName: 'rt.size', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
    const old = await createDataset(s, 'rt-old');
    await text(await setValues(s, old, [{ propertyUrn: P, values: [{ string: 'large' }] }]), 200);
    await pollUntil('the string value delivered to search', outboxEmpty, (n) => n === 0, 60_000);
    const alias = `${prefix}_datasetindex_v2`;
    const fieldType = async () => {
      const { body } = await client.indices.getMapping({ index: alias });
      const index = Object.values(body as Record<string, { mappings: { properties: { structuredProperties?: { properties: Record<string, { type: string }> } } } }>)[0]!;
      return index.mappings.properties.structuredProperties?.properties.rt_size?.type;
    };
    assert.equal(await fieldType(), 'keyword');
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(P)}`, { method: 'DELETE' }), 200);
    await waitForTask(s, P, HARD_DELETE_TASK);
    await pollUntil('the cleanup delivered to search', outboxEmpty, (n) => n === 0, 60_000);

    await text(await writeDefinition(s, P, { qualifiedName: 'rt.size', valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
    const ds = await createDataset(s, 'rt-new');
    await text(await setValues(s, ds, [{ propertyUrn: P, values: [{ double: 9 }] }]), 200);
    // 9 is within 5 to 10 as a number, not as text ("9.0" sorts after "10"): found once the field is a double.
    const found = () =>
      s
        .request(`/openapi/v3/entity/dataset?query=${encodeURIComponent('structuredProperties.rt_size:[5 TO 10]')}`)
        .then(async (r) => (JSON.parse(await text(r, 200)) as { entities: { urn: string }[] }).entities.map((e) => e.urn));
    assert.deepEqual(await pollUntil('the number value found by its range', found, (urns) => urns.length > 0, 90_000), [ds]);
    assert.equal(await fieldType(), 'double');
    // The new index serves reads once the alias moved, which the task does before it records its end.
    const rebuilds = () => sql<{ state: string; subject: string }>(env.DATABASE_URL, "SELECT state, subject FROM tasks WHERE kind = 'search-index-rebuild'");
    const tasks = await pollUntil('the rebuild to end', rebuilds, (rows) => rows.every((r) => r.state === 'SUCCEEDED'), 60_000);
    assert.deepEqual(tasks, [{ state: 'SUCCEEDED', subject: alias }], 'one rebuild, of the dataset index');
    const other = await createDataset(s, 'rt-later');
    await text(await setValues(s, other, [{ propertyUrn: P, values: [{ double: 7 }] }]), 200);
    assert.deepEqual((await pollUntil('a later value found', found, (urns) => urns.length === 2, 60_000)).sort(), [ds, other].sort());
  });
});

describe('system-update --restore-indices on postgres', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  test('rebuilds every search document from the primary store', async () => {
    // The documents and their values, as the postgres backend holds them.
    const INDEXED = `SELECT d.urn, d.removed, array_agg(v.field || '=' || v.str_value ORDER BY v.field, v.str_value) AS v FROM search_documents d LEFT JOIN search_values v USING (entity_type, urn) GROUP BY d.urn, d.removed ORDER BY d.urn`;
    await text(await writeDefinition(s, propertyUrn('su.tier'), { qualifiedName: 'su.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
    for (const n of ['a', 'b', 'c']) {
      await createDataset(s, n);
      await text(await setValues(s, datasetUrn(n), [{ propertyUrn: propertyUrn('su.tier'), values: [{ string: `tier-${n}` }] }]), 200);
    }
    await s.svc.catalog.searchOutbox.deliverAll();
    const before = await sql(s.databaseUrl, INDEXED);
    assert.ok(before.length >= 4, 'the datasets and the property are indexed');
    // Lose the search tables entirely, as after moving to a new backend.
    await sql(s.databaseUrl, 'TRUNCATE search_documents, search_values');
    const res = await runSystemUpdate({ DATABASE_URL: s.databaseUrl, SEARCH_BACKEND: 'postgres' }, ['--restore-indices']);
    assert.equal(res.code, 0, res.output);
    assert.deepEqual(await sql(s.databaseUrl, INDEXED), before);
    assert.deepEqual(await sql(s.databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox'), [{ n: 0 }]);
  });
});

describe('the target mappings of an index rebuild', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  test('a hard-deleted property keeps its field while one value remains, and loses it once the cleanup is done', async () => {
    const P = propertyUrn('tm.gone');
    await text(await writeDefinition(s, P, { qualifiedName: 'tm.gone', valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
    const urn = await createDataset(s, 'tm');
    await text(await setValues(s, urn, [{ propertyUrn: P, values: [{ double: 1 }] }]), 200);
    await s.svc.catalog.searchOutbox.deliverAll();
    const fields = async () => [...(await targetFields(s.svc.catalog.pool, 'dataset')).keys()];
    assert.deepEqual(await fields(), ['structuredProperties.tm_gone']);
    // Hold the entity's row, so that the cleanup cannot remove its value yet.
    const holder = new pg.Client({ connectionString: s.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM aspects WHERE urn = $1 AND aspect = 'structuredProperties' FOR UPDATE", [urn]);
      await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(P)}`, { method: 'DELETE' }), 200);
      await s.svc.catalog.searchOutbox.deliverAll();
      assert.deepEqual(await fields(), ['structuredProperties.tm_gone'], 'one value remains: the field stays');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    await waitForTask(s, P, HARD_DELETE_TASK);
    assert.deepEqual(await fields(), [], 'every value cleaned up: the field goes');
  });
});

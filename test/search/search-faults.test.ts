/**
 * Search under faults, on OpenSearch: writes go on while an OpenSearch process is stopped and started
 * again, and every one is found after; a server killed (SIGKILL) with undelivered changes delivers them
 * after the restart (there OpenSearch is kept out of reach by cutting a TCP proxy the server talks
 * through, the suite's OpenSearch behind it running on).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@opensearch-project/opensearch';
import { createDataset, propertyUrn, setValues, writeDefinition } from '../support/structuredProperties.ts';
import { startOpenSearch } from '../harness/opensearch.ts';
import { pollUntil } from '../support/poll.ts';
import { startChildServer } from '../support/childServer.ts';
import { TcpProxy } from '../support/tcpProxy.ts';
import { createTestDatabase, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';
import { opensearchUrl } from '../support/searchBackends.ts';

const OPENSEARCH_URL = opensearchUrl();

const TIER = propertyUrn('faults.tier');

describe('search faults on opensearch', () => {
  const prefix = `f${randomBytes(4).toString('hex')}`;
  const client = new Client({ node: OPENSEARCH_URL });
  const proxy = new TcpProxy(new URL(OPENSEARCH_URL));
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

  test('OpenSearch stopped while writes go on: writes succeed, /ready says so, and every write is searchable once it is started again', async () => {
    // An OpenSearch of this test's own, whose process is stopped and started again on its data.
    const node = await startOpenSearch();
    // Stopped however the test ends, a server that fails to start included (it was left running then).
    const s = await startTestServer({ SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: node.env.OPENSEARCH_URL!, DATABASE_URL: await createTestDatabase() }).catch(async (err: unknown) => {
      await node.stop();
      throw err;
    });
    try {
      await text(await writeDefinition(s, TIER, { qualifiedName: 'faults.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      const urns: string[] = [];
      const write = async (i: number) => {
        const urn = await createDataset(s, `outage${i}`);
        await text(await setValues(s, urn, [{ propertyUrn: TIER, values: [{ string: 'outage' }] }]), 200);
        urns.push(urn);
      };
      for (let i = 0; i < 5; i++) await write(i);
      await pollUntil('the first writes searchable', () => found(s, 'structuredProperties.faults_tier:outage'), (got) => got.length === 5);
      // Writes go on while OpenSearch stops, is down, and starts again.
      let writing = true;
      let failed: unknown;
      const writer = (async () => {
        for (let i = 5; writing; i++) {
          await write(i);
          await new Promise((r) => setTimeout(r, 100));
        }
      })().catch((err: unknown) => (failed = err));
      await node.halt();
      const down = urns.length;
      await pollUntil('writes while OpenSearch is down', async () => urns.length, (n) => n >= down + 10);
      const ready = await s.request('/ready', { token: null });
      assert.equal(ready.status, 200, 'the server stays in service');
      assert.equal(((await ready.json()) as { search: string }).search, 'UNREACHABLE');
      // A search meanwhile says why it cannot be answered (it was a 500).
      const search = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent('structuredProperties.faults_tier:outage')}`);
      assert.equal(search.status, 503);
      assert.deepEqual(await search.json(), { error: 'Service Unavailable', message: 'The search backend (OpenSearch) is not reachable' });
      const n = (await sql<{ n: number }>(s.databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox'))[0]!.n;
      assert.ok(n > 0, 'changes wait in the outbox');
      assert.match(await (await s.request('/metrics')).text(), /svc_search_outbox_depth [1-9]/);
      await node.resume();
      writing = false;
      await writer;
      assert.equal(failed, undefined, 'no write failed');
      await pollUntil('every write searchable', () => found(s, 'structuredProperties.faults_tier:outage'), (got) => got.length === urns.length, 60_000);
      assert.deepEqual(await found(s, 'structuredProperties.faults_tier:outage'), urns.sort());
      assert.equal(((await (await s.request('/ready', { token: null })).json()) as { search: string }).search, 'UP');
    } finally {
      await s.close().catch(() => undefined);
      await node.stop();
    }
  });

  test('SIGKILL with undelivered changes (entities and time series entries): they are delivered after the restart', async () => {
    const databaseUrl = await createTestDatabase();
    await proxy.cut();
    const server = await startChildServer({ ...env, DATABASE_URL: databaseUrl });
    try {
      const remote = server.remote as TestServer;
      await text(await writeDefinition(remote, TIER, { qualifiedName: 'faults.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
      const urns: string[] = [];
      const entries: [string, number][] = [];
      for (let i = 0; i < 10; i++) {
        const urn = await createDataset(remote, `killed${i}`);
        await text(await setValues(remote, urn, [{ propertyUrn: TIER, values: [{ string: 'killed' }] }]), 200);
        // A time series entry too: it waits in the outbox of the time series store.
        const profile = await remote.request(`/openapi/v3/entity/dataset/${encodeURIComponent(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: 1000 + i, rowCount: i } }) });
        await text(profile, 200);
        entries.push([urn, 1000 + i]);
        urns.push(urn);
      }
      assert.deepEqual(await sql(databaseUrl, 'SELECT count(*)::int AS n FROM timeseries_entries'), [{ n: 10 }]);
      const n = (await sql<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox'))[0]!.n;
      assert.ok(n >= 10, `changes wait in the outbox (${n})`);
      await server.kill();
      await proxy.up();
      const s = await startTestServer({ ...env, DATABASE_URL: databaseUrl });
      try {
        await pollUntil('the undelivered changes delivered', () => found(s, 'structuredProperties.faults_tier:killed'), (got) => got.length === urns.length);
        assert.deepEqual(await found(s, 'structuredProperties.faults_tier:killed'), urns.sort());
        assert.deepEqual(await sql(databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox'), [{ n: 0 }]);
        // The time series entries are in OpenSearch's index, and shipped out of the outbox.
        await s.svc.catalog.searchOutbox.deliverAll();
        assert.deepEqual(await sql(databaseUrl, 'SELECT count(*)::int AS n FROM timeseries_entries'), [{ n: 0 }]);
        const shipped = await client.search({ index: `${prefix}_dataset_datasetprofileaspect_v1`, body: { size: 100, sort: [{ timestampMillis: 'asc' }] } as never });
        assert.deepEqual(
          (shipped.body.hits.hits as unknown as { _source: { urn: string; timestampMillis: number } }[]).map((h) => [h._source.urn, h._source.timestampMillis]),
          entries,
        );
      } finally {
        await s.svc.close();
      }
    } finally {
      await server.kill();
    }
  });
});

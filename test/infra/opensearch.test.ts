/**
 * Smoke test of the real OpenSearch the suite runs against (`OPENSEARCH_URL`): the features svc's
 * search and truncation rely on, including the modules the test distribution is assembled with
 * (reindex, analysis-common, lang-painless).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, type API } from '@opensearch-project/opensearch';

const url = process.env.OPENSEARCH_URL;
if (!url) throw new Error('OPENSEARCH_URL is not set: start OpenSearch with test/harness/opensearch.ts');

const client = new Client({ node: url });
const index = `smoke_${process.pid}_${Date.now()}`;
const copy = `${index}_copy`;
const PLATFORMS = ['Hive', 'Kafka', 'Snowflake', 'Postgres'] as const;
const DOCS = 100;

/** Polls `_tasks/<id>` until the task has completed; returns the task's final response. */
async function completedTask(taskId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { body } = await client.tasks.get({ task_id: taskId });
    if (body.completed) {
      assert.equal(body.error, undefined, `task ${taskId} failed: ${JSON.stringify(body.error)}`);
      return body.response as Record<string, unknown>;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not complete within 30 s`);
}

async function count(target: string, q?: string): Promise<number> {
  const { body } = await client.count({ index: target, ...(q ? { q } : {}) });
  return body.count;
}

describe('OpenSearch', () => {
  before(async () => {
    await client.indices.create({
      index,
      body: {
        settings: {
          number_of_shards: 1,
          number_of_replicas: 0,
          // `lowercase` is a token filter of the analysis-common module.
          analysis: { normalizer: { folded: { type: 'custom', filter: ['lowercase'] } } },
        },
        mappings: {
          properties: {
            urn: { type: 'keyword' },
            timestampMillis: { type: 'long' },
            platform: { type: 'keyword', normalizer: 'folded' },
            retentionDays: { type: 'double' },
          },
        },
      },
    });
    const body = Array.from({ length: DOCS }, (_, i) => [
      { index: { _index: index, _id: String(i) } },
      {
        urn: `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`,
        timestampMillis: 1_000 * i,
        platform: PLATFORMS[i % PLATFORMS.length],
        retentionDays: i / 2,
      },
    ]).flat();
    const { body: res } = await client.bulk({ body, refresh: true });
    assert.equal(res.errors, false, 'bulk indexing reported errors');
  });

  after(async () => {
    await client.indices.delete({ index: `${index}*` }).catch(() => undefined);
    await client.close();
  });

  it('counts documents matching a query_string range', async () => {
    assert.equal(await count(index), DOCS);
    assert.equal(await count(index, 'timestampMillis:[10000 TO 19999]'), 10);
    assert.equal(await count(index, 'retentionDays:>=45'), 10);
    const { body } = await client.search({
      index,
      body: {
        query: { query_string: { query: 'timestampMillis:<=4000 AND platform:kafka' } },
        sort: [{ timestampMillis: 'asc' }],
      },
    });
    assert.deepEqual(
      body.hits.hits.map((h) => h._id),
      ['1'],
    );
  });

  it('aggregates terms with exact counts through a normalizer', async () => {
    // The client's TermsAggregationFields type leaves out `field`; the request is the standard one.
    const request = {
      size: 0,
      aggs: { platforms: { terms: { field: 'platform', size: 10, order: { _key: 'asc' } } } },
    };
    const { body } = await client.search({ index, body: request as API.Search_RequestBody });
    const buckets = (body.aggregations?.platforms as { buckets: { key: string; doc_count: number }[] }).buckets;
    assert.deepEqual(
      buckets.map((b) => [b.key, b.doc_count]),
      [
        ['hive', 25],
        ['kafka', 25],
        ['postgres', 25],
        ['snowflake', 25],
      ],
    );
  });

  it('runs Painless scripts', async () => {
    const res = await client.transport.request({
      method: 'POST',
      path: '/_scripts/painless/_execute',
      body: { script: { source: 'params.a * params.b', params: { a: 6, b: 7 } } },
    });
    assert.equal((res.body as { result: string }).result, '42');
  });

  it('reindexes asynchronously and reports the task through _tasks', async () => {
    const { body } = await client.reindex({
      wait_for_completion: false,
      refresh: true,
      body: { source: { index, query: { range: { timestampMillis: { gt: 59_000 } } } }, dest: { index: copy } },
    });
    const taskId = (body as { task?: string }).task;
    assert.match(String(taskId), /^[\w-]+:\d+$/);
    const response = await completedTask(String(taskId));
    assert.equal(response.created, 40);
    assert.equal(await count(copy), 40);
  });

  it('deletes by query asynchronously with the inclusive boundary and the right deleted count', async () => {
    const { body } = await client.deleteByQuery({
      index,
      wait_for_completion: false,
      refresh: true,
      body: { query: { range: { timestampMillis: { lte: 29_000 } } } },
    });
    const taskId = (body as { task?: string }).task;
    assert.match(String(taskId), /^[\w-]+:\d+$/);
    const response = await completedTask(String(taskId));
    assert.equal(response.deleted, 30);
    assert.equal(response.total, 30);
    assert.equal(await count(index), DOCS - 30);
    assert.equal(await count(index, 'timestampMillis:<=29000'), 0);
  });
});

/**
 * The fields DataHub's maintenance source (`datahub-gc`) searches on, and searches ordered by a date
 * field, on both backends: each field filtered as the source filters it, a list sorted by `created` of
 * runs either way, a job's runs over GraphQL (newest first, soft-deleted ones left out), and a sort on
 * a field the type has not, refused naming the fields it has.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SYSTEM } from '../../server/src/auth/authorize.ts';
import type { Criterion } from '../../server/src/search/expr.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const JOB = 'urn:li:dataJob:(urn:li:dataFlow:(airflow,sorted_flow,PROD),task)';
const RUNS = [
  ['urn:li:dataProcessInstance:b', 3000],
  ['urn:li:dataProcessInstance:a', 1000],
  ['urn:li:dataProcessInstance:c', 2000],
  ['urn:li:dataProcessInstance:gone', 4000],
] as const;

for (const backend of searchBackends()) {
  describe(`searches sorted by a date field (${backend.name})`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(backend.env);
      const post = async (entity: string, urn: string, aspect: string, value: unknown) =>
        text(await s.request(`/openapi/v3/entity/${entity}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      for (const [urn, time] of RUNS) {
        await post('dataProcessInstance', urn, 'dataProcessInstanceProperties', { name: urn, created: { time, actor: 'urn:li:corpuser:a' } });
        await post('dataProcessInstance', urn, 'dataProcessInstanceRelationships', { parentTemplate: JOB, upstreamInstances: [] });
      }
      await post('dataProcessInstance', 'urn:li:dataProcessInstance:gone', 'status', { removed: true });
      await post('dataJob', JOB, 'dataJobInfo', { name: 'task', type: { string: 'COMMAND' } });
      const stamp = (time: number) => ({ time, actor: 'urn:li:corpuser:a' });
      for (const [id, source, time] of [['old', 'SYSTEM', 1000], ['new', 'SYSTEM', 5000], ['manual', 'MANUAL', 1000]] as const) {
        await post('query', `urn:li:query:${id}`, 'queryProperties', { statement: { value: 'SELECT 1', language: 'SQL' }, source, created: stamp(time), lastModified: stamp(time) });
      }
      for (const [id, requestedAt] of [['r1', 1000], ['r2', 2000]] as const) {
        await post('dataHubExecutionRequest', `urn:li:dataHubExecutionRequest:${id}`, 'dataHubExecutionRequestInput', { task: 'RUN_INGEST', args: {}, executorId: 'default', source: { type: 'SCHEDULED_INGESTION_SOURCE', ingestionSource: `urn:li:dataHubIngestionSource:${id}` }, requestedAt });
      }
      await s.svc.catalog.searchOutbox.deliverAll();
    });
    after(() => s?.close());

    const find = async (type: string, criteria: Criterion[]) => (await s.svc.catalog.search.search(SYSTEM, { entityTypes: [type], filters: [{ and: criteria }], count: 100 })).entities.map((e) => e.urn.split(':').pop()).sort();

    test('the fields of runs, queries and execution requests filter as datahub-gc filters them', async () => {
      assert.deepEqual(await find('dataProcessInstance', [{ field: 'parentTemplate', values: [JOB] }]), ['a', 'b', 'c']);
      assert.deepEqual(await find('dataProcessInstance', [{ field: 'created', condition: 'LESS_THAN', values: ['2500'] }, { field: 'removed', values: ['true'] , negated: true }]), ['a', 'c']);
      assert.deepEqual(await find('query', [{ field: 'source', values: ['SYSTEM'] }, { field: 'lastModifiedAt', condition: 'LESS_THAN', values: ['2000'] }]), ['old']);
      assert.deepEqual(await find('dataHubExecutionRequest', [{ field: 'requestTimeMs', condition: 'GREATER_THAN_OR_EQUAL_TO', values: ['2000'] }]), ['r2']);
      assert.deepEqual(await find('dataHubExecutionRequest', [{ field: 'ingestionSource', values: ['urn:li:dataHubIngestionSource:r1'] }]), ['r1']);
    });

    test('a list sorted by created pages through the runs in time order, either way', async () => {
      const page = async (order: string, scrollId?: string) =>
        JSON.parse(await text(await s.request(`/openapi/v2/entity/dataProcessInstance?sort=created&sortOrder=${order}&count=2${scrollId ? `&scrollId=${encodeURIComponent(scrollId)}` : ''}`), 200)) as { scrollId?: string; results: { urn: string }[] };
      const first = await page('DESCENDING');
      const second = await page('DESCENDING', first.scrollId);
      assert.deepEqual([...first.results, ...second.results].map((r) => r.urn.split(':').pop()), ['b', 'c', 'a']);
      assert.equal('scrollId' in second, false);
      assert.deepEqual((await page('ASCENDING')).results.map((r) => r.urn.split(':').pop()), ['a', 'c']);
    });

    test('a job’s runs are the newest first, soft-deleted ones left out', async () => {
      const res = await s.request('/api/graphql', { method: 'POST', body: JSON.stringify({ query: `{ dataJob(urn: "${JOB}") { dataFlow { urn } runs(start: 0, count: 10) { total runs { urn created { time } } } } }` }) });
      const body = JSON.parse(await text(res, 200));
      assert.deepEqual(body, {
        data: {
          dataJob: {
            dataFlow: { urn: 'urn:li:dataFlow:(airflow,sorted_flow,PROD)' },
            runs: { total: 3, runs: [3000, 2000, 1000].map((time) => ({ urn: RUNS.find(([, t]) => t === time)![0], created: { time } })) },
          },
        },
        extensions: {},
      });
    });

    test('a sort on a field the type’s documents have not is refused, naming those they have', async () => {
      const res = await s.request('/openapi/v3/entity/dataProcessInstance?sort=lastModifiedAt');
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { message: string }).message, /sort: results are sorted by urn or by created, not by "lastModifiedAt"/);
    });
  });
}

/**
 * DataHub's maintenance source `datahub-gc` through its own CLI (each pinned version), on both search
 * backends, with the clients' defaults (every cleanup turned on, `dry_run: false`): it revokes the
 * expired access tokens, truncates the usage and operation time series older than 30 days, hard-deletes
 * the entities soft-deleted more than 10 days ago, soft-deletes the runs of a data job beyond its
 * newest 5, and hard-deletes the execution requests of an ingestion source beyond its newest 10 that
 * are older than the retention. The run reports no failure, and what DataHub would leave is left.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions } from '../support/datahubClient.ts';
import { pollUntil } from '../support/poll.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';

const DAY = 86_400_000;

/**
 * Every cleanup with its defaults: 1.x turns them all on by itself; 0.14 runs the data process, soft
 * delete and execution request cleanups only when the recipe has their sections.
 */
const RECIPE = `source:
  type: datahub-gc
  config:
    dry_run: false
    dataprocess_cleanup: {}
    soft_deleted_entities_cleanup: {}
    execution_request_cleanup: {}
sink:
  type: datahub-rest
  config:
    server: \${DATAHUB_GMS_URL}
    token: \${DATAHUB_GMS_TOKEN}
`;

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,gc.usage,PROD)';
const CHART = 'urn:li:chart:(looker,gc_chart)';
const DASHBOARD = 'urn:li:dashboard:(looker,gc_dashboard)';
const QUERY = 'urn:li:query:gc_query';
const GONE_LONG_AGO = 'urn:li:dataset:(urn:li:dataPlatform:hive,gc.gone_long_ago,PROD)';
const GONE_LATELY = 'urn:li:dataset:(urn:li:dataPlatform:hive,gc.gone_lately,PROD)';
const KEPT = 'urn:li:dataset:(urn:li:dataPlatform:hive,gc.kept,PROD)';
const FLOW = 'urn:li:dataFlow:(airflow,gc_flow,PROD)';
const JOB = `urn:li:dataJob:(${FLOW},gc_task)`;
const SOURCE = 'urn:li:dataHubIngestionSource:gc_source';

/** The time series the source truncates, with the client versions that truncate each. */
const SERIES = [
  { entity: 'dataset', urn: DATASET, aspect: 'operation', value: { operationType: 'INSERT', lastUpdatedTimestamp: 1 }, versions: ['0.14', '1.'] },
  { entity: 'dataset', urn: DATASET, aspect: 'datasetUsageStatistics', value: { uniqueUserCount: 1 }, versions: ['0.14', '1.'] },
  { entity: 'chart', urn: CHART, aspect: 'chartUsageStatistics', value: { viewsCount: 1 }, versions: ['0.14', '1.'] },
  { entity: 'dashboard', urn: DASHBOARD, aspect: 'dashboardUsageStatistics', value: { viewsCount: 1 }, versions: ['0.14', '1.'] },
  { entity: 'query', urn: QUERY, aspect: 'queryUsageStatistics', value: { queryCount: 1 }, versions: ['1.'] },
];

for (const backend of searchBackends()) {
  for (const version of datahubClientVersions()) {
    describe(`DataHub ${version.version}'s datahub-gc on svc (${backend.name})`, () => {
      let s: TestServer;
      let client: ReturnType<typeof datahubClient>;
      before(async () => {
        s = await startTestServer(backend.env);
        client = datahubClient(version, s);
      });
      after(async () => {
        await s?.close();
        client?.cleanup();
      });
      const get = async (path: string) => JSON.parse(await text(await s.request(path), 200));
      const post = async (entity: string, urn: string, aspect: string, value: unknown) =>
        text(await s.request(`/openapi/v3/entity/${entity}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      const removed = async (entity: string, urn: string) => {
        const res = await s.request(`/openapi/v3/entity/${entity}/${enc(urn)}/status`);
        if (res.status === 404) return (await s.request(`/openapi/v3/entity/${entity}/${enc(urn)}`)).status === 404 ? 'gone' : false;
        return (JSON.parse(await res.text()) as { status: { value: { removed: boolean } } }).status.value.removed;
      };

      test('a run with the defaults cleans what DataHub cleans and leaves the rest', async () => {
        const now = Date.now();
        // Usage and operations: one entry of 40 days ago and one of yesterday each.
        for (const { entity, urn, aspect, value } of SERIES) {
          for (const t of [now - 40 * DAY, now - DAY]) await post(entity, urn, aspect, { timestampMillis: t, ...value });
        }
        await post('query', QUERY, 'queryProperties', {
          statement: { value: 'SELECT 1', language: 'SQL' },
          source: 'MANUAL',
          created: { time: now, actor: 'urn:li:corpuser:admin' },
          lastModified: { time: now, actor: 'urn:li:corpuser:admin' },
        });

        // Soft-deleted entities: one 20 days ago, one just now; and one that is not.
        for (const [urn, gone] of [[GONE_LONG_AGO, true], [GONE_LATELY, true], [KEPT, false]] as const) await post('dataset', urn, 'status', { removed: gone });
        await sql(s.databaseUrl, `UPDATE aspects SET created_on = now() - interval '20 days' WHERE urn = $1 AND aspect = 'status'`, [GONE_LONG_AGO]);

        // A data job with 7 runs, the 2 oldest of 20 days ago.
        await post('dataFlow', FLOW, 'dataFlowInfo', { name: 'gc_flow' });
        await post('dataJob', JOB, 'dataJobInfo', { name: 'gc_task', type: { string: 'COMMAND' } });
        const runs: string[] = [];
        for (let i = 0; i < 7; i++) {
          const run = `urn:li:dataProcessInstance:gc_run_${i}`;
          runs.push(run);
          const created = i < 5 ? now - (i + 1) * 3_600_000 : now - (15 + i) * DAY;
          await post('dataProcessInstance', run, 'dataProcessInstanceProperties', { name: `run ${i}`, created: { time: created, actor: 'urn:li:corpuser:admin' } });
          await post('dataProcessInstance', run, 'dataProcessInstanceRelationships', { parentTemplate: JOB, upstreamInstances: [] });
        }

        // Execution requests of one ingestion source: 10 of the last hours, 2 of 100 days ago.
        const requests: string[] = [];
        for (let i = 0; i < 12; i++) {
          const request = `urn:li:dataHubExecutionRequest:gc_request_${String(i).padStart(2, '0')}`;
          requests.push(request);
          const requestedAt = i < 10 ? now - (i + 1) * 3_600_000 : now - 100 * DAY - i;
          await post('dataHubExecutionRequest', request, 'dataHubExecutionRequestInput', { task: 'RUN_INGEST', args: {}, executorId: 'default', source: { type: 'SCHEDULED_INGESTION_SOURCE', ingestionSource: SOURCE }, requestedAt });
          await post('dataHubExecutionRequest', request, 'dataHubExecutionRequestResult', { status: 'SUCCESS', startTimeMs: requestedAt, durationMs: 1000 });
        }

        // An access token that expired, and one that has not.
        const token = async (name: string, expiresAt: number) =>
          (JSON.parse(await text(await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name, role: 'reader', expiresAt }) }), 201)) as { id: string }).id;
        const expired = await token('gc-expired', now + 60_000);
        const valid = await token('gc-valid', now + 30 * DAY);
        await sql(s.databaseUrl, `UPDATE api_tokens SET expires_at = now() - interval '1 day' WHERE id = $1`, [expired]);
        await s.svc.catalog.searchOutbox.deliverAll();

        writeFileSync(join(client.dir, 'gc.yaml'), RECIPE);
        const run = await client.datahub(['ingest', '-c', 'gc.yaml']);
        assert.equal(run.code, 0, run.out.slice(-6_000));
        assert.doesNotMatch(run.out, /failures': \[\{|'failures': \{'|Traceback/, run.out.slice(-6_000));

        // Time series: the old entries go (the truncation is a task: wait for it), the new stay.
        for (const { entity, urn, aspect, versions } of SERIES) {
          const truncated = versions.some((v) => version.version.startsWith(v));
          const times = async () => {
            const page = await get(`/openapi/v2/timeseries/${entity}/${aspect}?count=100`);
            return (page.results as { urn: string; event: { timestampMillis: number } }[]).filter((e) => e.urn === urn).map((e) => e.event.timestampMillis).sort();
          };
          const want = truncated ? [now - DAY] : [now - 40 * DAY, now - DAY];
          await pollUntil(`${aspect} of ${urn}`, times, (t) => JSON.stringify(t) === JSON.stringify(want));
        }

        // Soft-deleted entities: only the one deleted long ago is gone.
        assert.equal(await removed('dataset', GONE_LONG_AGO), 'gone');
        assert.equal(await removed('dataset', GONE_LATELY), true);
        assert.equal(await removed('dataset', KEPT), false);

        // The job's runs: the newest 5 stay, the 2 older are soft-deleted.
        for (const [i, r] of runs.entries()) assert.equal(await removed('dataProcessInstance', r), i < 5 ? false : true, r);
        assert.equal(await removed('dataJob', JOB), false);

        // Execution requests: the newest 10 of the source stay, the 2 of 100 days ago are gone.
        const listed = new Set(((await get('/openapi/v3/entity/dataHubExecutionRequest?count=100')).entities as { urn: string }[]).map((e) => e.urn));
        for (const [i, r] of requests.entries()) assert.equal(listed.has(r), i < 10, r);

        // Tokens: the expired one is revoked, the other is not.
        const tokens = (await get('/api/tokens')).tokens as { id: string; revokedAt: string | null }[];
        assert.notEqual(tokens.find((t) => t.id === expired)?.revokedAt, null);
        assert.equal(tokens.find((t) => t.id === valid)?.revokedAt, null);
      });
    });
  }
}

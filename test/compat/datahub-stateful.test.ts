/**
 * Stateful ingestion through DataHub's own CLI (each pinned version), on both search backends: a
 * json-schema recipe with `stateful_ingestion` (fixtures/stateful) runs, its checkpoint is stored as a
 * time series entry of the pipeline's dataJob; a second run, after one schema went away, finds that
 * checkpoint (getTimeseriesAspectValues with a filter on the pipeline's name) and soft-deletes the
 * dataset that is gone, and only that one.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions, FIXTURES } from '../support/datahubClient.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const PIPELINE = 'svc_stateful_json_schema';
const STATEFUL = join(FIXTURES, 'stateful');

for (const backend of searchBackends()) {
  for (const version of datahubClientVersions()) {
    describe(`DataHub ${version.version}'s stateful ingestion on svc (${backend.name})`, () => {
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

      test('a second run of a stateful recipe soft-deletes what disappeared from the source since the first', async () => {
        const config = (await (await s.request('/config', { token: null })).json()) as { statefulIngestionCapable: boolean };
        assert.equal(config.statefulIngestionCapable, true);
        const schemas = join(client.dir, 'schemas');
        mkdirSync(schemas);
        copyFileSync(join(STATEFUL, 'recipe.yaml'), join(client.dir, 'recipe.yaml'));
        for (const f of ['orders.json', 'customers.json']) copyFileSync(join(STATEFUL, f), join(schemas, f));

        const first = await client.datahub(['ingest', '-c', 'recipe.yaml']);
        assert.equal(first.code, 0, first.out.slice(-4_000));
        assert.doesNotMatch(first.out, /failures': \[\{|Failed to/, first.out.slice(-4_000));
        const datasets = (await get('/openapi/v3/entity/dataset?count=100&aspects=status')).entities as { urn: string; status?: { value: { removed: boolean } } }[];
        const customers = datasets.find((d) => d.urn.includes('customers'))?.urn;
        const orders = datasets.find((d) => d.urn.includes('orders'))?.urn;
        assert.ok(customers && orders, JSON.stringify(datasets));
        // The run's checkpoint: an entry of the pipeline's dataJob.
        const checkpoints = await get('/openapi/v2/timeseries/dataJob/datahubIngestionCheckpoint?count=10');
        assert.ok(checkpoints.results.some((e: { event: { pipelineName: string } }) => e.event.pipelineName === PIPELINE), JSON.stringify(checkpoints));

        rmSync(join(schemas, 'customers.json'));
        const second = await client.datahub(['ingest', '-c', 'recipe.yaml']);
        assert.equal(second.code, 0, second.out.slice(-4_000));
        const removed = async (urn: string) => (await get(`/openapi/v3/entity/dataset/${enc(urn)}/status`)).status.value.removed;
        assert.equal(await removed(customers), true);
        const ordersStatus = await s.request(`/openapi/v3/entity/dataset/${enc(orders)}/status`);
        assert.ok(ordersStatus.status === 404 || JSON.parse(await ordersStatus.text()).status.value.removed === false, 'orders stays');
      });
    });
  }
}

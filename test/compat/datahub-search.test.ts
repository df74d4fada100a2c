/**
 * The searches DataHub's bulk tools run, through DataHub's own SDK and CLI (each pinned version), on
 * both search backends: `DataHubGraph.get_urns_by_filter` by platform (`platform.keyword`, as both
 * client lines send it), by entity type, by a structured property's value and for soft-deleted
 * entities only (fixtures/get_urns.py; 1.x asks for `extraProperties` of each result), and
 * `datahub delete --platform`, which soft-deletes what such a search finds.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions, FIXTURES } from '../support/datahubClient.ts';
import { pollUntil } from '../support/poll.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const TIER = 'io.svc.search.tier';
const HIVE_A = 'urn:li:dataset:(urn:li:dataPlatform:hive,search.a,PROD)';
const HIVE_GONE = 'urn:li:dataset:(urn:li:dataPlatform:hive,search.gone,PROD)';
const MYSQL_C = 'urn:li:dataset:(urn:li:dataPlatform:mysql,search.c,PROD)';
const CHART = 'urn:li:chart:(looker,search.chart)';

for (const backend of searchBackends()) {
  for (const version of datahubClientVersions()) {
    describe(`DataHub ${version.version}'s searches on svc (${backend.name})`, () => {
      let s: TestServer;
      let client: ReturnType<typeof datahubClient>;
      const post = async (path: string, value: unknown) =>
        text(await s.request(`${path}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      const aspect = (type: string, urn: string, name: string) => `/openapi/v3/entity/${type}/${enc(urn)}/${name}`;

      before(async () => {
        s = await startTestServer(backend.env);
        client = datahubClient(version, s);
        await post(aspect('structuredProperty', `urn:li:structuredProperty:${TIER}`, 'propertyDefinition'), {
          qualifiedName: TIER,
          valueType: 'urn:li:dataType:datahub.string',
          entityTypes: ['urn:li:entityType:datahub.dataset'],
          cardinality: 'SINGLE',
        });
        for (const urn of [HIVE_A, HIVE_GONE, MYSQL_C]) await post(aspect('dataset', urn, 'datasetProperties'), { description: urn });
        await post(aspect('dataset', HIVE_A, 'structuredProperties'), { properties: [{ propertyUrn: `urn:li:structuredProperty:${TIER}`, values: [{ string: 'gold' }] }] });
        await post(aspect('dataset', HIVE_GONE, 'status'), { removed: true });
        await post(aspect('chart', CHART, 'status'), { removed: false });
        // Search follows writes through the outbox.
        await pollUntil('search delivery', async () => (await (await s.request('/ready', { token: null })).json()) as { searchDelivery: { outboxDepth: number } }, (r) => r.searchDelivery.outboxDepth === 0);
      });
      after(async () => {
        await s?.close();
        client?.cleanup();
      });

      test('get_urns_by_filter: by platform, entity type, structured property value, and soft-deleted only', async () => {
        const run = await client.python([join(FIXTURES, 'get_urns.py'), 'hive', TIER, 'gold']);
        assert.equal(run.code, 0, run.out.slice(-3_000));
        assert.deepEqual(JSON.parse(run.out.trim().split('\n').pop()!), {
          platform: [HIVE_A],
          platformDatasets: [HIVE_A],
          charts: [CHART],
          property: [HIVE_A],
          softDeleted: [HIVE_GONE],
        });
      });

      test('datahub delete --platform soft-deletes the platform\'s entities, and only those', async () => {
        const del = await client.datahub(['delete', '--platform', 'hive', '-f']);
        assert.equal(del.code, 0, del.out.slice(-3_000));
        assert.match(del.out, /Soft deleted 1 entit/, del.out.slice(-2_000));
        const removed = async (type: string, urn: string) => (await s.request(aspect(type, urn, 'status'))).status === 200 && JSON.parse(await text(await s.request(aspect(type, urn, 'status')), 200)).status.value.removed;
        assert.equal(await removed('dataset', HIVE_A), true);
        assert.equal(await removed('dataset', MYSQL_C), false);
        assert.equal(await removed('chart', CHART), false);
      });
    });
  }
}

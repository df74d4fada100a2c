/**
 * The searches DataHub's bulk tools run, through DataHub's own SDK and CLI (each pinned version), on
 * both search backends: `DataHubGraph.get_urns_by_filter` by platform (`platform.keyword`, as both
 * client lines send it), by entity type, by a structured property's value and for soft-deleted
 * entities only, by env, container, platform instance, tags and owners (fixtures/get_urns.py; 1.x asks
 * for `extraProperties` of each result), the 1.x SDK v2's `client.search.get_urns` with its tag, owner,
 * domain, container, env, entity type (`_entityType`, also negated) and platform filters, and
 * `datahub delete --platform`, which soft-deletes what such a search finds; and the SDK v2's lineage,
 * written with `add_lineage` and read back with `get_lineage` (fixtures/lineage.py).
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
const CONTAINER = 'urn:li:container:search-db';
/** What HIVE_A holds of DataHub's common fields (MYSQL_C has the owner alone). */
const COMMON = { tag: 'urn:li:tag:pii', owner: 'urn:li:corpuser:alice', domain: 'urn:li:domain:sales', container: CONTAINER, instance: 'warehouse' };

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
        const owners = { owners: [{ owner: COMMON.owner, type: 'DATAOWNER' }] };
        await post(aspect('dataset', HIVE_A, 'globalTags'), { tags: [{ tag: COMMON.tag }] });
        await post(aspect('dataset', HIVE_A, 'ownership'), owners);
        await post(aspect('dataset', MYSQL_C, 'ownership'), owners);
        await post(aspect('dataset', HIVE_A, 'domains'), { domains: [COMMON.domain] });
        await post(aspect('dataset', HIVE_A, 'container'), { container: CONTAINER });
        await post(aspect('dataset', HIVE_A, 'browsePathsV2'), { path: [{ id: CONTAINER, urn: CONTAINER }] });
        await post(aspect('dataset', HIVE_A, 'dataPlatformInstance'), { platform: 'urn:li:dataPlatform:hive', instance: `urn:li:dataPlatformInstance:(urn:li:dataPlatform:hive,${COMMON.instance})` });
        await post(aspect('container', CONTAINER, 'containerProperties'), { name: 'search-db', env: 'PROD' });
        // Search follows writes through the outbox.
        await pollUntil('search delivery', async () => (await (await s.request('/ready', { token: null })).json()) as { searchDelivery: { outboxDepth: number } }, (r) => r.searchDelivery.outboxDepth === 0);
      });
      after(async () => {
        await s?.close();
        client?.cleanup();
      });

      test('get_urns_by_filter: by platform, entity type, structured property value, soft-deleted only, env, container, platform instance, tags and owners; SDK v2 filters', async () => {
        const run = await client.python([join(FIXTURES, 'get_urns.py'), 'hive', TIER, 'gold', JSON.stringify(COMMON)]);
        assert.equal(run.code, 0, run.out.slice(-3_000));
        const prod = [HIVE_A, MYSQL_C, CONTAINER].sort();
        const sdkV2 = version.version.startsWith('0.') ? {} : { sdkTagAndOwner: [HIVE_A], sdkDomain: [HIVE_A], sdkContainer: [HIVE_A], sdkEnv: prod, sdkEntityType: [CHART], sdkPlatform: [HIVE_A], sdkNotDataset: [CONTAINER] };
        // The output's line of results (1.x warns on stderr, after it, that the SDK v2 is experimental).
        assert.deepEqual(JSON.parse(run.out.split('\n').findLast((l) => l.startsWith('{"platform"'))!), {
          platform: [HIVE_A],
          platformDatasets: [HIVE_A],
          charts: [CHART],
          property: [HIVE_A],
          softDeleted: [HIVE_GONE],
          env: prod,
          container: [HIVE_A],
          platformInstance: [HIVE_A],
          tagsAndOwners: [HIVE_A],
          ...sdkV2,
        });
      });

      // 0.14 has no SDK v2.
      if (!version.version.startsWith('0.')) test('SDK v2: lineage written with add_lineage is read back with get_lineage, one hop and two', async () => {
        const run = await client.python([join(FIXTURES, 'lineage.py'), 'postgres']);
        assert.equal(run.code, 0, run.out.slice(-3_000));
        const lineage = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:postgres,lineage.${name},PROD)`;
        assert.deepEqual(JSON.parse(run.out.split('\n').findLast((l) => l.startsWith('{"downstreamOfUp"'))!), {
          downstreamOfUp: [[lineage('mid'), 1]],
          upstreamOfDown: [[lineage('mid'), 1], [lineage('up'), 2]],
          // The SDK, outside an ingestion, writes descriptions into editableDatasetProperties; its lineage
          // read shows `properties.description` (datasetProperties'), as DataHub's GraphQL answers it.
          shown: [[lineage('mid'), 'postgres', null], [lineage('up'), 'postgres', null]],
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

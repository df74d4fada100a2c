/**
 * DataHub's own CLI (`acryl-datahub` from PyPI, each pinned version provision.sh installs) against svc,
 * unchanged but for the server URL and token, on both search backends: `datahub properties upsert -f` and
 * `get` with the seed's property file, `datahub dataset upsert -f` and `get` with dataset- and field-level
 * structured properties and a downstream, `datahub delete` soft and `--hard -f`, and a script on the Python
 * SDK (fixtures/sdk_patch_read_search.py: a patch, a read, a GraphQL search), `datahub ingest` of a
 * file source through the `datahub-rest` sink (the run recorded too, as by default), `datahub get`, and
 * the hard delete of a user, which removes the references to it first; run twice, the ingest leaves one
 * entry of the file's profile. What each wrote is read back
 * through svc's own REST API.
 *
 * The clients run as support/datahubClient.ts runs them, off the internet.
 */
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions, FIXTURES } from '../support/datahubClient.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const SDK_SCRIPT = join(FIXTURES, 'sdk_patch_read_search.py');
const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const STEWARD = 'urn:li:structuredProperty:io.acryl.dataManagement.steward';
const CLICKS = 'urn:li:dataset:(urn:li:dataPlatform:hive,user.clicks,PROD)';
const CLICKS_AGG = 'urn:li:dataset:(urn:li:dataPlatform:hive,user.clicks_agg,PROD)';
const ORDERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,ingested.orders,PROD)';

/** The seed's property file; allowed values as strings, which both client lines take (0.14 takes nothing else). */
const PROPERTIES = `- id: io.acryl.privacy.retentionTime
  qualified_name: io.acryl.privacy.retentionTime
  type: number
  cardinality: MULTIPLE
  display_name: Retention Time
  entity_types:
    - dataset
    - dataFlow
  description: "Retention Time is used to figure out how long to retain records in a dataset"
  allowed_values:
    - value: "30"
      description: 30 days, usually reserved for datasets that are ephemeral and contain pii
    - value: "60"
      description: Use this for datasets that drive monthly reporting but contain pii
    - value: "365"
      description: Use this for non-sensitive data that can be retained for longer
- id: io.acryl.dataManagement.steward
  type: urn
  type_qualifier:
    allowed_types:
      - corpuser
      - corpGroup
  display_name: Steward
  entity_types:
    - dataset
    - schemaField
  cardinality: SINGLE
`;

/** A dataset with dataset- and field-level values (retention values as strings, to match the allowed values). */
const DATASET = `- id: user.clicks
  platform: hive
  description: a dataset of user clicks
  properties:
    team: analytics
  subtype: View
  schema:
    fields:
      - id: ip
        type: string
        structured_properties:
          io.acryl.dataManagement.steward: urn:li:corpuser:jdoe
      - id: user_id
        type: string
  structured_properties:
    io.acryl.privacy.retentionTime:
      - "30"
      - "365"
    io.acryl.dataManagement.steward: urn:li:corpuser:jdoe
  downstreams:
    - ${CLICKS_AGG}
`;

for (const backend of searchBackends()) {
  for (const client of datahubClientVersions()) {
    describe(`datahub ${client.version} against svc on ${backend.name}`, () => {
      let s: TestServer;
      let dir: string;
      let clientRun: ReturnType<typeof datahubClient>;
      before(async () => {
        s = await startTestServer(backend.env);
        clientRun = datahubClient(client, s);
        dir = clientRun.dir;
        writeFileSync(join(dir, 'properties.yaml'), PROPERTIES);
        writeFileSync(join(dir, 'dataset.yaml'), DATASET);
      });
      after(async () => {
        await s?.close();
        clientRun?.cleanup();
      });

      const datahub = (args: string[]) => clientRun.datahub(args);
      const python = (args: string[]) => clientRun.python(args);
      const rest = async (path: string) => JSON.parse(await text(await s.request(path), 200));
      /** The JSON document a command printed (after its log lines). */
      const printed = (out: string) => JSON.parse(out.slice(out.indexOf('\n{') + 1, out.lastIndexOf('}') + 1));

      test('properties upsert -f and get: the definitions are svc\'s, shown back in DataHub\'s namespace', async () => {
        const up = await datahub(['properties', 'upsert', '-f', 'properties.yaml']);
        assert.equal(up.code, 0, up.out);
        assert.match(up.out, new RegExp(`Created structured property ${RETENTION.replace(/\./g, '\\.')}`));
        const stored = (await rest(`/openapi/v3/entity/structuredProperty/${enc(RETENTION)}/propertyDefinition`)).propertyDefinition.value;
        assert.equal(stored.valueType, 'urn:li:dataType:svc.number');
        assert.deepEqual(stored.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow']);
        assert.equal(stored.cardinality, 'MULTIPLE');
        assert.deepEqual(stored.allowedValues.map((v: { value: unknown }) => v.value), [{ string: '30' }, { string: '60' }, { string: '365' }]);
        const steward = (await rest(`/openapi/v3/entity/structuredProperty/${enc(STEWARD)}/propertyDefinition`)).propertyDefinition.value;
        assert.deepEqual(steward.typeQualifier, { allowedTypes: ['urn:li:entityType:svc.corpuser', 'urn:li:entityType:svc.corpGroup'] });

        const got = await datahub(['properties', 'get', '--urn', RETENTION]);
        assert.equal(got.code, 0, got.out);
        const shown = printed(got.out);
        assert.equal(shown.urn, RETENTION);
        assert.equal(shown.type, 'urn:li:dataType:datahub.number');
        assert.deepEqual(shown.entity_types, ['urn:li:entityType:datahub.dataset', 'urn:li:entityType:datahub.dataFlow']);
        assert.deepEqual(shown.allowed_values.map((v: { value: unknown }) => String(v.value)), ['30', '60', '365']);
        const missing = await datahub(['properties', 'get', '--urn', 'urn:li:structuredProperty:io.acryl.nothing']);
        assert.match(missing.out, /Structured property urn:li:structuredProperty:io\.acryl\.nothing does not exist/);
      });

      test('dataset upsert -f and get: dataset and field values, subtype, properties and the downstream\'s lineage', async () => {
        const up = await datahub(['dataset', 'upsert', '-f', 'dataset.yaml']);
        assert.equal(up.code, 0, up.out);
        assert.doesNotMatch(up.out, /Update failed|Failed to sync/, up.out);
        const entity = await rest(`/openapi/v3/entity/dataset/${enc(CLICKS)}`);
        assert.deepEqual(entity.structuredProperties.value.properties, [
          { propertyUrn: RETENTION, values: [{ string: '30' }, { string: '365' }] },
          { propertyUrn: STEWARD, values: [{ string: 'urn:li:corpuser:jdoe' }] },
        ]);
        assert.equal(entity.datasetProperties.value.description, 'a dataset of user clicks');
        assert.deepEqual(entity.datasetProperties.value.customProperties, { team: 'analytics' });
        assert.deepEqual(entity.subTypes.value.typeNames, ['View']);
        const field = await rest(`/openapi/v3/entity/schemaField/${enc(`urn:li:schemaField:(${CLICKS},ip)`)}/structuredProperties`);
        assert.deepEqual(field.structuredProperties.value.properties, [{ propertyUrn: STEWARD, values: [{ string: 'urn:li:corpuser:jdoe' }] }]);
        const lineage = await rest(`/openapi/v3/entity/dataset/${enc(CLICKS_AGG)}/upstreamLineage`);
        assert.deepEqual(lineage.upstreamLineage.value.upstreams.map((u: { dataset: string; type: string }) => [u.dataset, u.type]), [[CLICKS, 'COPY']]);

        const got = await datahub(['dataset', 'get', '--urn', CLICKS]);
        assert.equal(got.code, 0, got.out);
        const shown = printed(got.out);
        assert.equal(shown.urn, CLICKS);
        assert.equal(shown.description, 'a dataset of user clicks');
        assert.deepEqual(shown.properties, { team: 'analytics' });
        assert.ok(JSON.stringify(shown.structured_properties).includes('urn:li:corpuser:jdoe'), JSON.stringify(shown));
      });

      test('the Python SDK: an MCP, a structured-property patch from DatasetPatchBuilder, the aspect read back, a GraphQL search on the value', async () => {
        const dataset = 'urn:li:dataset:(urn:li:dataPlatform:hive,sdk.orders,PROD)';
        const run = await python([SDK_SCRIPT, dataset, STEWARD, 'urn:li:corpuser:alice']);
        assert.equal(run.code, 0, run.out);
        const result = JSON.parse(run.out.trim().split('\n').pop()!);
        assert.deepEqual(result.values, { [STEWARD]: ['urn:li:corpuser:alice'] });
        assert.deepEqual(result.found, [dataset]);
        const stored = await rest(`/openapi/v3/entity/dataset/${enc(dataset)}/structuredProperties`);
        assert.deepEqual(stored.structuredProperties.value.properties, [{ propertyUrn: STEWARD, values: [{ string: 'urn:li:corpuser:alice' }] }]);
      });

      test('datahub ingest: a file source through the datahub-rest sink, with the run recorded as DataHub records it', async () => {
        for (const f of ['recipe.yaml', 'metadata.json']) copyFileSync(join(FIXTURES, f), join(dir, f));
        const run = await datahub(['ingest', '-c', 'recipe.yaml']);
        assert.equal(run.code, 0, run.out);
        // The file's 4 records, and the run's own (3 from 0.14, 2 written by then from 1.x).
        assert.ok(Number(/'total_records_written': (\d+)/.exec(run.out)?.[1]) >= 4, run.out);
        assert.doesNotMatch(run.out, /failures': \[\{|Failed to/, run.out);
        const orders = await rest(`/openapi/v3/entity/dataset/${enc(ORDERS)}`);
        assert.equal(orders.datasetProperties.value.description, 'ingested from a file');
        assert.deepEqual(orders.structuredProperties.value.properties, [{ propertyUrn: STEWARD, values: [{ string: 'urn:li:corpuser:bob' }] }]);
        assert.equal(orders.datasetProfile.value.rowCount, 42);
        const events = await rest(`/openapi/v3/entity/dataset/${enc('urn:li:dataset:(urn:li:dataPlatform:hive,ingested.events,PROD)')}/status`);
        assert.deepEqual(events.status.value, { removed: false });
        // The run's records (the default report): its source, and the run with its input and result.
        const runs = await rest('/openapi/v3/entity/dataHubExecutionRequest?count=10&aspects=dataHubExecutionRequestInput&aspects=dataHubExecutionRequestResult');
        const ours = runs.entities.filter((e: any) => e.dataHubExecutionRequestResult?.value.status === 'SUCCESS');
        assert.equal(ours.length, 1, JSON.stringify(runs));
        const sourceUrn = ours[0].dataHubExecutionRequestInput.value.source.ingestionSource;
        const source = await rest(`/openapi/v3/entity/dataHubIngestionSource/${enc(sourceUrn)}/dataHubIngestionSourceInfo`);
        assert.equal(source.dataHubIngestionSourceInfo.value.type, 'file');
        // Run again: a second run, under the same source.
        const again = await datahub(['ingest', '-c', 'recipe.yaml']);
        assert.equal(again.code, 0, again.out);
        const after = await rest('/openapi/v3/entity/dataHubExecutionRequest?count=10&aspects=dataHubExecutionRequestInput');
        assert.equal(after.entities.length, 2);
        assert.deepEqual(new Set(after.entities.map((e: any) => e.dataHubExecutionRequestInput.value.source.ingestionSource)), new Set([sourceUrn]));
        // The file's profile, sent again with the same time, replaced the first: one entry, not two.
        const profiles = JSON.parse(await text(await s.request('/aspects?action=getTimeseriesAspectValues', { method: 'POST', body: JSON.stringify({ urn: ORDERS, entity: 'dataset', aspect: 'datasetProfile', limit: 10 }) }), 200));
        assert.deepEqual(profiles.value.values.map((v: { aspect: { value: string } }) => JSON.parse(v.aspect.value).rowCount), [42]);
      });

      test('datahub get: versioned aspects through entitiesV2, a time series aspect through getTimeseriesAspectValues, and an absent entity', async () => {
        const got = await datahub(['get', '--urn', ORDERS, '--aspect', 'datasetProperties', '--aspect', 'datasetProfile']);
        assert.equal(got.code, 0, got.out);
        const shown = printed(got.out);
        assert.equal(shown.datasetProperties.description, 'ingested from a file');
        assert.equal(shown.datasetProfile.rowCount, 42);
        const whole = await datahub(['get', '--urn', ORDERS]);
        assert.equal(whole.code, 0, whole.out);
        assert.deepEqual(Object.keys(printed(whole.out)).sort(), ['datasetKey', 'datasetProperties', 'structuredProperties']);
        const missing = await datahub(['get', '--urn', 'urn:li:dataset:(urn:li:dataPlatform:hive,nothing.here,PROD)']);
        assert.notEqual(missing.code, 0);
        assert.match(missing.out, /not found/);
      });

      test('delete -a <time series aspect> --hard with a time range: only those entries go; the dataset and its other aspects stay (it deleted the whole dataset)', async () => {
        const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,profiled.orders,PROD)';
        const T0 = 1_700_000_000_000;
        const HOUR = 3_600_000;
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: '{"value":{"description":"profiled"}}' }), 200);
        for (let i = 0; i < 4; i++) {
          await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: T0 + i * HOUR, rowCount: i } }) }), 200);
        }
        // Hours 1 and 2, as epoch seconds (the CLI's --start-time and --end-time take them).
        const del = await datahub(['delete', '--urn', urn, '-a', 'datasetProfile', '--hard', '-f', '--start-time', String((T0 + HOUR) / 1000), '--end-time', String((T0 + 2 * HOUR) / 1000)]);
        assert.equal(del.code, 0, del.out);
        assert.match(del.out, /2 timeseries aspect rows/, del.out);
        const left = JSON.parse(await text(await s.request('/aspects?action=getTimeseriesAspectValues', { method: 'POST', body: JSON.stringify({ urn, entity: 'dataset', aspect: 'datasetProfile', limit: 10 }) }), 200));
        assert.deepEqual(left.value.values.map((v: { aspect: { value: string } }) => JSON.parse(v.aspect.value).rowCount), [3, 0]);
        assert.equal((await rest(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties`)).datasetProperties.value.description, 'profiled');
      });

      test('delete --hard of a user: the references to it go first (deleteReferences), the values naming it with them', async () => {
        const user = 'urn:li:corpuser:jdoe';
        const del = await datahub(['delete', '--urn', user, '--hard', '-f']);
        assert.equal(del.code, 0, del.out);
        const entity = await rest(`/openapi/v3/entity/dataset/${enc(CLICKS)}`);
        assert.deepEqual(entity.structuredProperties.value.properties, [{ propertyUrn: RETENTION, values: [{ string: '30' }, { string: '365' }] }]);
        const field = await rest(`/openapi/v3/entity/schemaField/${enc(`urn:li:schemaField:(${CLICKS},ip)`)}/structuredProperties`);
        assert.deepEqual(field.structuredProperties.value.properties, []);
      });

      test('delete: soft by default (status removed), then --hard -f (gone)', async () => {
        const soft = await datahub(['delete', '--urn', CLICKS]);
        assert.equal(soft.code, 0, soft.out);
        assert.match(soft.out, /Soft deleted 1 entities/);
        assert.deepEqual((await rest(`/openapi/v3/entity/dataset/${enc(CLICKS)}/status`)).status.value, { removed: true });
        const hard = await datahub(['delete', '--urn', CLICKS, '--hard', '-f']);
        assert.equal(hard.code, 0, hard.out);
        assert.match(hard.out, /Hard deleted 1 entities \(impacts [1-9]\d* versioned rows/);
        assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(CLICKS)}`)).status, 404);
        const after = await datahub(['dataset', 'get', '--urn', CLICKS]);
        assert.match(after.out, new RegExp(`Dataset ${CLICKS.replace(/[().]/g, '\\$&')} does not exist`));
      });
    });
  }
}

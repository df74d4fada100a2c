/**
 * DataHub's SQLAlchemy-based ingestion, run unchanged through DataHub's own `datahub ingest` (each pinned
 * version, with the `sqlalchemy` extra provision.sh installs) with the `datahub-rest` sink pointed at
 * svc, on both search backends: the generic `sqlalchemy` source on a SQLite database the test makes
 * (fixtures/recipes/sqlite.sql and sqlite.yaml). What the run wrote is read back through svc's REST
 * API: the database's and schema's containers, a dataset per table and view with its schema (field
 * names, native and DataHub types, keys, the foreign key), properties, sub type, container, browse
 * path and status, and the run itself. A second run, after a table was dropped, soft-deletes that
 * table's dataset (stateful ingestion); it reads the state the first test's run left.
 */
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions, FIXTURES, type ClientRun } from '../support/datahubClient.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const RECIPES = join(FIXTURES, 'recipes');
const sqlite = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:sqlite,${name},PROD)`;
const CUSTOMERS = sqlite('main.customers');
const ORDERS = sqlite('main.orders');
const RETURNS = sqlite('main.returns');
const BIG_ORDERS = sqlite('main.big_orders');
const field = (dataset: string, path: string) => `urn:li:schemaField:(${dataset},${path})`;

/**
 * A schema's fields as [path, native type, DataHub type, nullable, part of the key], by path: the
 * clients list them in different orders (0.14, on SQLAlchemy 1.4, the primary key last).
 */
const fields = (schema: { fields: { fieldPath: string; nativeDataType: string; type: { type: Record<string, unknown> }; nullable: boolean; isPartOfKey?: boolean }[] }) =>
  schema.fields
    .map((f) => [f.fieldPath, f.nativeDataType, Object.keys(f.type.type).join(), f.nullable, f.isPartOfKey ?? false])
    .sort(([a], [b]) => String(a).localeCompare(String(b)));

for (const backend of searchBackends()) {
  for (const version of datahubClientVersions()) {
    describe(`DataHub ${version.version}'s SQLAlchemy source on SQLite on svc (${backend.name})`, () => {
      let s: TestServer;
      let client: ReturnType<typeof datahubClient>;
      before(async () => {
        s = await startTestServer(backend.env);
        client = datahubClient(version, s);
        for (const f of ['sqlite.sql', 'sqlite.yaml']) copyFileSync(join(RECIPES, f), join(client.dir, f));
      });
      after(async () => {
        await s?.close();
        client?.cleanup();
      });
      /** An entity's aspects (latest values), by name. */
      const entity = async (type: string, urn: string) => {
        const body = JSON.parse(await text(await s.request(`/openapi/v3/entity/${type}/${enc(urn)}`), 200));
        return Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'urn').map(([k, v]) => [k, (v as { value: unknown }).value])) as Record<string, any>;
      };
      const list = async (type: string, aspects: string[]) => {
        await s.svc.catalog.searchOutbox.deliverAll();
        const query = aspects.map((a) => `&aspects=${a}`).join('');
        return JSON.parse(await text(await s.request(`/openapi/v3/entity/${type}?count=100${query}`), 200)).entities as Record<string, any>[];
      };
      /** Runs Python's sqlite3 on the run folder's database. */
      const sqliteScript = async (script: string) => {
        const run = await client.python(['-c', `import sqlite3\nc = sqlite3.connect("shop.sqlite")\n${script}\nc.commit()`]);
        assert.equal(run.code, 0, run.out);
      };
      const ingest = async (): Promise<ClientRun> => {
        const run = await client.datahub(['ingest', '-c', 'sqlite.yaml']);
        assert.equal(run.code, 0, run.out.slice(-6_000));
        // 1.x warns that it could not find the view's default database and schema (it names the
        // view's upstream without them): a warning of the client's, nothing refused.
        assert.match(run.out, /Pipeline finished (successfully|with at least \d+ warnings?)/, run.out.slice(-6_000));
        assert.doesNotMatch(run.out, /failures': \[\{/, run.out.slice(-6_000));
        return run;
      };

      test('sqlalchemy source: containers for the database and schema, a dataset per table and view with its schema, the run recorded', async () => {
        await sqliteScript('c.executescript(open("sqlite.sql").read())');
        await ingest();

        // The database's container and the schema's within it.
        const containers = await list('container', ['containerProperties']);
        const byName = new Map(containers.map((c) => [c.containerProperties.value.name, c.urn as string]));
        assert.deepEqual([...byName.keys()].sort(), ['main', 'shop.sqlite']);
        const dbUrn = byName.get('shop.sqlite')!;
        const schemaUrn = byName.get('main')!;
        const db = await entity('container', dbUrn);
        assert.deepEqual(db.containerProperties, { name: 'shop.sqlite', env: 'PROD', customProperties: { platform: 'sqlite', env: 'PROD', database: 'shop.sqlite' } });
        assert.deepEqual(db.subTypes, { typeNames: ['Database'] });
        assert.deepEqual(db.dataPlatformInstance, { platform: 'urn:li:dataPlatform:sqlite' });
        assert.deepEqual(db.browsePathsV2, { path: [] });
        assert.deepEqual(db.status, { removed: false });
        assert.equal(db.container, undefined);
        const schema = await entity('container', schemaUrn);
        assert.deepEqual(schema.containerProperties, { name: 'main', env: 'PROD', customProperties: { platform: 'sqlite', env: 'PROD', database: 'shop.sqlite', schema: 'main' } });
        assert.deepEqual(schema.subTypes, { typeNames: ['Schema'] });
        assert.deepEqual(schema.container, { container: dbUrn });
        assert.deepEqual(schema.dataPlatformInstance, { platform: 'urn:li:dataPlatform:sqlite' });
        assert.deepEqual(schema.browsePathsV2, { path: [{ id: dbUrn, urn: dbUrn }] });

        // A dataset per table and view, each in the schema's container.
        const datasets = await list('dataset', ['status']);
        assert.deepEqual(datasets.map((d) => d.urn).sort(), [BIG_ORDERS, CUSTOMERS, ORDERS, RETURNS]);
        for (const urn of [CUSTOMERS, ORDERS, RETURNS, BIG_ORDERS]) {
          const d = await entity('dataset', urn);
          assert.deepEqual(d.status, { removed: false }, urn);
          assert.deepEqual(d.container, { container: schemaUrn }, urn);
          assert.deepEqual(d.browsePathsV2, { path: [{ id: dbUrn, urn: dbUrn }, { id: schemaUrn, urn: schemaUrn }] }, urn);
          assert.equal(d.schemaMetadata.platform, 'urn:li:dataPlatform:sqlite', urn);
          assert.equal(d.schemaMetadata.schemaName, urn.replace(/^.*sqlite,(.*),PROD\)$/, '$1'));
        }

        const customers = await entity('dataset', CUSTOMERS);
        assert.deepEqual(customers.subTypes, { typeNames: ['Table'] });
        assert.deepEqual(customers.datasetProperties, { name: 'customers', customProperties: {}, tags: [] });
        assert.deepEqual(fields(customers.schemaMetadata), [
          ['created_at', 'TIMESTAMP', 'com.linkedin.schema.TimeType', true, false],
          ['email', 'VARCHAR(200)', 'com.linkedin.schema.StringType', true, false],
          ['id', 'INTEGER', 'com.linkedin.schema.NumberType', true, true],
          ['name', 'TEXT', 'com.linkedin.schema.StringType', false, false],
          ['vip', 'BOOLEAN', 'com.linkedin.schema.BooleanType', true, false],
        ]);
        const orders = await entity('dataset', ORDERS);
        assert.deepEqual(fields(orders.schemaMetadata), [
          ['amount', 'NUMERIC(10, 2)', 'com.linkedin.schema.NumberType', true, false],
          ['customer_id', 'INTEGER', 'com.linkedin.schema.NumberType', false, false],
          ['id', 'INTEGER', 'com.linkedin.schema.NumberType', true, true],
          ['note', 'BLOB', 'com.linkedin.schema.BytesType', true, false],
          ['placed_on', 'DATE', 'com.linkedin.schema.DateType', true, false],
          ['weight', 'REAL', 'com.linkedin.schema.NumberType', true, false],
        ]);
        assert.deepEqual(orders.schemaMetadata.foreignKeys, [
          { name: 'orders_customer', foreignDataset: CUSTOMERS, foreignFields: [field(CUSTOMERS, 'id')], sourceFields: [field(ORDERS, 'customer_id')] },
        ]);

        const view = await entity('dataset', BIG_ORDERS);
        assert.deepEqual(view.subTypes, { typeNames: ['View'] });
        const definition = 'CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 100';
        assert.deepEqual(view.datasetProperties, { name: 'big_orders', customProperties: { is_view: 'True', view_definition: definition }, tags: [] });
        assert.deepEqual(view.viewProperties, { materialized: false, viewLogic: definition, viewLanguage: 'SQL' });
        assert.deepEqual(fields(view.schemaMetadata), [
          ['amount', 'NUMERIC(10, 2)', 'com.linkedin.schema.NumberType', true, false],
          ['id', 'INTEGER', 'com.linkedin.schema.NumberType', true, false],
        ]);

        // The run, recorded as DataHub records it: its source (the recipe's type) and its result.
        const runs = await list('dataHubExecutionRequest', ['dataHubExecutionRequestInput', 'dataHubExecutionRequestResult']);
        assert.deepEqual(runs.map((r) => r.dataHubExecutionRequestResult?.value.status), ['SUCCESS']);
        const sourceUrn = runs[0]!.dataHubExecutionRequestInput.value.source.ingestionSource;
        assert.equal((await entity('dataHubIngestionSource', sourceUrn)).dataHubIngestionSourceInfo.type, 'sqlalchemy');
      });

      // 1.x parses the view's definition: its lineage, and the view's query as an entity of its own.
      if (!version.version.startsWith('0.')) test('sqlalchemy source (1.x): the view\'s upstream and its query, from its parsed definition', async () => {
        const view = await entity('dataset', BIG_ORDERS);
        // The upstream lacks the schema (`orders`, not `main.orders`): the client could not find the
        // view's default schema and says so in a warning.
        const upstream = sqlite('orders');
        assert.deepEqual(view.upstreamLineage.upstreams.map((u: { dataset: string; type: string }) => [u.dataset, u.type]), [[upstream, 'VIEW']]);
        const queryUrn = view.upstreamLineage.upstreams[0].query;
        assert.match(queryUrn, /^urn:li:query:/);
        const query = await entity('query', queryUrn);
        assert.equal(query.queryProperties.source, 'SYSTEM');
        assert.equal(query.queryProperties.statement.language, 'SQL');
        assert.match(query.queryProperties.statement.value, /^CREATE VIEW big_orders AS/);
        assert.ok(query.querySubjects.subjects.some((s: { entity: string }) => s.entity === BIG_ORDERS), JSON.stringify(query.querySubjects));
      });

      test('sqlalchemy source with stateful ingestion: a second run after a table was dropped soft-deletes its dataset, and only it', async () => {
        await sqliteScript('c.execute("DROP TABLE returns")');
        await ingest();
        const removed = async (urn: string) => (await entity('dataset', urn)).status.removed;
        assert.equal(await removed(RETURNS), true);
        for (const urn of [CUSTOMERS, ORDERS, BIG_ORDERS]) assert.equal(await removed(urn), false, urn);
        const runs = await list('dataHubExecutionRequest', ['dataHubExecutionRequestResult']);
        assert.deepEqual(runs.map((r) => r.dataHubExecutionRequestResult?.value.status), ['SUCCESS', 'SUCCESS']);
      });
    });
  }
}

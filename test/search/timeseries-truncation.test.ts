/**
 * Time series on both stores (the postgres tables, and OpenSearch's indices fed through the outbox)
 * and T1 with the operations actions (`/gms/operations?action=…`): the dry-run message for 0, 1,
 * exactly half and more than half of the entries and for none at all, the inclusive boundary, the
 * flag check, parameters and their errors in Rest.li's shape, real runs (a rebuild and a delete by
 * query) followed to `completed` through getEsTaskStatus, the OpenAPI status route and `/api/tasks`,
 * the listing, latest entries on reads and their deletes, an entry written again (DataHub's identity:
 * one entry on every read), index sizes, and 401/403; `svc timeseries truncate --execute` following
 * the task to its end on each store. What the stores hold is read from them directly (SQL, or
 * OpenSearch's own search).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as OpenSearchClient } from '@opensearch-project/opensearch';
import pg from 'pg';
import { runSvc } from '../support/cli.ts';
import { datasetUrn } from '../support/structuredProperties.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';
import { pollUntil } from '../support/poll.ts';

const T0 = 1_700_000_000_000;

/** What `svc timeseries truncate --json` reports of a run's counts. */
const pick = ({ total, deleted, kept }: { total: number; deleted: number; kept?: number }) => ({ total, deleted, ...(kept !== undefined ? { kept } : {}) });
const FAR = 7_000_000_000_000;

for (const backend of searchBackends()) {
  describe(`time series on ${backend.name}`, () => {
    let s: TestServer;
    let os: OpenSearchClient | undefined;
    const prefix = `ts${randomBytes(4).toString('hex')}`;
    const opensearch = backend.name === 'opensearch';
    before(async () => {
      s = await startTestServer({ ...backend.env, INDEX_PREFIX: prefix });
      if (opensearch) os = new OpenSearchClient({ node: backend.env.OPENSEARCH_URL });
    });
    after(async () => {
      await os?.close();
      await s.close();
    });

    /** Ships what waits in the outbox (the opensearch store) and makes it searchable. */
    const settle = () => s.svc.catalog.searchOutbox.deliverAll();

    /**
     * Writes `n` entries of a time series aspect of one dataset, `step` ms apart from `start` (the first
     * through the API, which makes its partition; the rest in one statement, after making theirs, each
     * with a key of its own rather than the write path's). In
     * `opensearch` mode they are then shipped to OpenSearch.
     */
    async function profiles(name: string, n: number, aspect = 'datasetProfile', start = T0, step = 1): Promise<void> {
      const urn = datasetUrn(name);
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: start } }) }), 200);
      if (n > 1) {
        const index = `dataset_${aspect.toLowerCase()}aspect_v1`;
        await sql(s.databaseUrl, `SELECT svc_timeseries_partition($1, m) FROM (SELECT DISTINCT ON (date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) t AS m FROM (SELECT $2::bigint + i * $3::bigint AS t FROM generate_series(1, $4::int) AS i) x ORDER BY date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) months`, [index, start, step, n - 1]);
        await sql(
          s.databaseUrl,
          `INSERT INTO timeseries_entries (index_name, entity_type, aspect, urn, timestamp_millis, metadata, created_by, entry_key)
           SELECT $5, 'dataset', $1, $2, $3::bigint + i * $6::bigint, json_build_object('timestampMillis', $3::bigint + i * $6::bigint), 'urn:li:corpuser:test', gen_random_uuid() FROM generate_series(1, $4::int) AS i`,
          [aspect, urn, start, n - 1, index, step],
        );
      }
      await settle();
    }

    /** The times of an aspect's entries where the store keeps them (Postgres, or OpenSearch's index, read directly), ascending. */
    async function stored(aspect = 'datasetProfile'): Promise<number[]> {
      if (!os) return (await sql<{ t: string }>(s.databaseUrl, 'SELECT timestamp_millis AS t FROM timeseries_entries WHERE aspect = $1 ORDER BY 1', [aspect])).map((r) => Number(r.t));
      await settle();
      const staged = await sql<{ n: number }>(s.databaseUrl, 'SELECT count(*)::int AS n FROM timeseries_entries', []);
      assert.equal(staged[0]!.n, 0, 'the outbox is shipped');
      const res = await os.search({ index: `${prefix}_dataset_${aspect.toLowerCase()}aspect_v1`, body: { size: 10_000, sort: [{ timestampMillis: 'asc' }], query: { match_all: {} } } as never }, { ignore: [404] });
      if (res.statusCode === 404) return [];
      return (res.body.hits.hits as unknown as { _source: { timestampMillis: number } }[]).map((h) => h._source.timestampMillis);
    }

    async function operation(action: string, body: unknown, token?: string | null): Promise<{ status: number; body: any; restli: string | null }> {
      const res = await s.request(`/gms/operations?action=${action}`, { method: 'POST', body: JSON.stringify(body), ...(token !== undefined ? { token } : {}) });
      return { status: res.status, body: JSON.parse(await res.text()), restli: res.headers.get('x-restli-error-response') };
    }

    const truncate = (body: Record<string, unknown>) => operation('truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'datasetProfile', ...body });
    const count = async (aspect = 'datasetProfile') => (await stored(aspect)).length;
    const completed = (task: string) => pollUntil('the truncation task completes', async () => JSON.parse((await operation('getEsTaskStatus', { task })).body.value), (st) => st.completed === true);
    /** The svc task of a truncation, once it has seen its work done. */
    const svcTask = (subject: string) =>
      pollUntil(
        'the svc task of the truncation succeeds',
        async () => (JSON.parse(await text(await s.request(`/api/tasks?kind=timeseries-truncate&subject=${subject}`), 200)).tasks as any[]).sort((a, b) => b.id - a.id)[0],
        (t) => t?.state === 'SUCCEEDED',
      );

    describe('truncateTimeseriesAspect', () => {
      test('no entries: NaN%, a delete by query, a dry run by default', async () => {
        const r = await truncate({ endTimeMillis: T0 });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, { value: 'Delete 0 out of 0 rows (NaN%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.' });
      });

      test('dry runs over 201 entries: 0, 1, exactly half (integer division) and more than half; the boundary is inclusive', async () => {
        await profiles('ts.dry', 201);
        const dry = async (end: number) => (await truncate({ endTimeMillis: end, dryRun: true })).body.value;
        assert.equal(await dry(T0 - 1), 'Delete 0 out of 201 rows (0.00%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.');
        assert.equal(await dry(T0), 'Delete 1 out of 201 rows (0.50%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.');
        assert.equal(await dry(T0 + 99), 'Delete 100 out of 201 rows (49.75%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.');
        assert.equal(await dry(T0 + 100), 'Delete 101 out of 201 rows (50.25%). Reindexing the aspect without the deleted records. This was a dry run. Run with dryRun = false to execute.');
        assert.equal(
          (await truncate({ endTimeMillis: T0 + 100, forceDeleteByQuery: true })).body.value,
          'Delete 101 out of 201 rows (50.25%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.',
        );
        assert.equal(
          (await truncate({ endTimeMillis: T0, forceReindex: true })).body.value,
          'Delete 1 out of 201 rows (0.50%). Reindexing the aspect without the deleted records. This was a dry run. Run with dryRun = false to execute.',
        );
        // The aspect name is taken in any case, as DataHub's index names lowercase it.
        assert.equal((await truncate({ aspect: 'datasetprofile', endTimeMillis: T0 })).body.value.slice(0, 27), 'Delete 1 out of 201 rows (0');
        assert.equal(await count(), 201, 'a dry run deletes nothing');
      });

      test('both flags alike: DataHub’s line, HTTP 200, nothing done', async () => {
        for (const flags of [{ forceDeleteByQuery: true, forceReindex: true }, { forceDeleteByQuery: false, forceReindex: false }]) {
          const r = await truncate({ endTimeMillis: T0 + 500, dryRun: false, ...flags });
          assert.deepEqual([r.status, r.body], [200, { value: 'please only set forceReindex OR forceDeleteByQuery flags' }]);
        }
        assert.equal(await count(), 201);
      });

      test('a real run returns a node:number task id, followed to completed; exactly the entries at or before the boundary go (most of them: the rest is copied anew)', async () => {
        const r = await truncate({ endTimeMillis: T0 + 149, dryRun: false, batchSize: 20 });
        assert.equal(r.status, 200);
        const task = r.body.value as string;
        // svc's own task in postgres mode; OpenSearch's reindex task in opensearch mode.
        assert.match(task, opensearch ? /^(?!svc:)[a-zA-Z0-9-_]+:[1-9][0-9]*$/ : /^svc:[1-9][0-9]*$/);
        const status = await completed(task);
        assert.equal(status.taskId, task);
        if (opensearch) {
          // A reindex of the 51 entries kept into a new index behind the alias.
          assert.deepEqual([status.status.total, status.status.created], [51, 51]);
        } else {
          assert.deepEqual([status.status.total, status.status.deleted, status.status.batches], [150, 150, 8]);
        }
        assert.equal(status.status.version_conflicts, 0);
        assert.equal(typeof status.runTimeNanos, 'number');
        const left = await stored();
        assert.deepEqual([left[0], left.length], [T0 + 150, 51]);

        // The same task as node + number, and through the OpenAPI route.
        const [node, number] = task.split(':');
        const split = JSON.parse((await operation('getEsTaskStatus', { nodeId: node, taskId: Number(number) })).body.value);
        assert.equal(split.completed, true);
        const openapi = (await (await s.request(`/openapi/operations/elasticSearch/getTaskStatus?task=${encodeURIComponent(task)}`)).json()) as { completed: boolean; taskId: string };
        assert.deepEqual([openapi.completed, openapi.taskId], [true, task]);
        // The task resource in /api/tasks counts the entries removed, in both modes.
        const resource = await svcTask('dataset_datasetprofileaspect_v1');
        assert.deepEqual([resource.kind, resource.total, resource.done], ['timeseries-truncate', 150, 150]);
        if (!opensearch) assert.equal(`svc:${resource.id}`, task);
        if (opensearch) {
          // The old index is gone once the reindex is done: one index behind the alias.
          await pollUntil('the old index is deleted', async () => Object.keys((await os!.indices.getAlias({ name: `${prefix}_dataset_datasetprofileaspect_v1` })).body as object).length + Object.keys((await os!.cat.indices({ index: `${prefix}_dataset_datasetprofileaspect_v1_*`, format: 'json' } as never)).body as object).length, (n) => n === 2);
        }
      });

      test('fewer than half: a delete by query in batches', async () => {
        // 10 of the 51 left go, and two entries of another dataset written just now (shipped or not yet).
        const urn = datasetUrn('ts.dry.more');
        for (const t of [T0 + 152, T0 + 153]) {
          await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t, rowCount: 1 } }) }), 200);
        }
        const r = await truncate({ endTimeMillis: T0 + 159, dryRun: false, batchSize: 3 });
        const status = await completed(r.body.value);
        // The entries still in the outbox are deleted there and counted too: 12 whether shipped or not.
        assert.deepEqual([status.status.total, status.status.deleted, status.status.batches >= 4], [12, 12, true], JSON.stringify(status));
        const left = await stored();
        assert.deepEqual([left[0], left.length], [T0 + 160, 41]);
        const resource = await svcTask('dataset_datasetprofileaspect_v1');
        assert.deepEqual([resource.total, resource.done], [12, 12]);
      });

      // Partitions are the postgres store's.
      if (!opensearch) test('months wholly before the boundary are dropped with their partitions; the boundary month is deleted from', async () => {
        const DAY = 86_400_000;
        const start = Date.UTC(2024, 0, 1);
        await profiles('ts.months', 91, 'datasetUsageStatistics', start, DAY); // 2024-01-01 … 2024-03-31, one a day
        const partitions = async () =>
          (await sql<{ name: string }>(s.databaseUrl, "SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relname LIKE 'ts_dataset_datasetusagestatisticsaspect_v1_%' ORDER BY relname")).map((r) => r.name);
        // One entry before 1970: in the default partition, not a month's.
        await text(
          await s.request(`/openapi/v3/entity/dataset/${enc(datasetUrn('ts.months'))}/datasetUsageStatistics?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: -DAY } }) }),
          200,
        );
        assert.deepEqual(await partitions(), ['ts_dataset_datasetusagestatisticsaspect_v1_202401', 'ts_dataset_datasetusagestatisticsaspect_v1_202402', 'ts_dataset_datasetusagestatisticsaspect_v1_202403', 'ts_dataset_datasetusagestatisticsaspect_v1_other']);
        const end = Date.UTC(2024, 2, 10); // 2024-03-10 00:00, inclusive
        const r = await operation('truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'datasetUsageStatistics', endTimeMillis: end, dryRun: false, batchSize: 3 });
        const task = r.body.value as string;
        const status = await pollUntil('the truncation completes', async () => JSON.parse((await operation('getEsTaskStatus', { task })).body.value), (st) => st.completed === true);
        assert.deepEqual([status.status.total, status.status.deleted], [1 + 31 + 29 + 10, 71]);
        assert.deepEqual(await partitions(), ['ts_dataset_datasetusagestatisticsaspect_v1_202403', 'ts_dataset_datasetusagestatisticsaspect_v1_other']);
        const left = await sql<{ min: string; n: string }>(s.databaseUrl, "SELECT min(timestamp_millis) AS min, count(*) AS n FROM timeseries_entries WHERE aspect = 'datasetUsageStatistics'");
        assert.deepEqual([Number(left[0]!.min), Number(left[0]!.n)], [end + DAY, 21]);
        // A write into a dropped month makes its partition again.
        await text(
          await s.request(`/openapi/v3/entity/dataset/${enc(datasetUrn('ts.months'))}/datasetUsageStatistics?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: start + 5 * DAY } }) }),
          200,
        );
        assert.equal((await partitions()).length, 3);
        await sql(s.databaseUrl, "DELETE FROM timeseries_entries WHERE aspect = 'datasetUsageStatistics'");
      });

      test('svc timeseries truncate --execute follows the task to its end: a delete by query, a rebuild, the rest', async () => {
        const cli = (end: number) => runSvc(s.url, ['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetUsageStatistics', '--end-time-millis', String(end), '--execute', '--json']);
        const run = async (end: number) => {
          const r = await cli(end);
          assert.equal(r.code, 0, r.stderr);
          const out = JSON.parse(r.stdout) as { task: string; total: number; deleted: number; kept?: number };
          // It returned once the task had completed.
          assert.equal(JSON.parse((await operation('getEsTaskStatus', { task: out.task })).body.value).completed, true);
          return out;
        };
        await profiles('ts.cli', 10, 'datasetUsageStatistics', T0, 1);
        // 2 of 10: a delete by query, on both stores.
        assert.deepEqual(pick(await run(T0 + 1)), { total: 2, deleted: 2 });
        assert.deepEqual(await stored('datasetUsageStatistics'), [2, 3, 4, 5, 6, 7, 8, 9].map((k) => T0 + k));
        // 5 of the 8 left: OpenSearch rebuilds the index with the 3 kept; the postgres store deletes.
        assert.deepEqual(pick(await run(T0 + 6)), opensearch ? { total: 3, deleted: 0, kept: 3 } : { total: 5, deleted: 5 });
        assert.deepEqual(await stored('datasetUsageStatistics'), [7, 8, 9].map((k) => T0 + k));
        // The rest: a rebuild that keeps nothing reports nothing left, with no counts of its own.
        assert.deepEqual(pick(await run(FAR)), opensearch ? { total: 0, deleted: 0 } : { total: 3, deleted: 3 });
        assert.deepEqual(await stored('datasetUsageStatistics'), []);
      });

      if (opensearch) test('a truncation by reindex whose transaction does not commit is undone: the alias is back on the old index, every entry readable (it was left on an empty index)', async () => {
        await profiles('ts.guard', 30, 'datasetUsageStatistics', T0 + 50_000);
        const before = await stored('datasetUsageStatistics');
        const alias = `${prefix}_dataset_datasetusagestatisticsaspect_v1`;
        const behind = async () => Object.keys((await os!.indices.getAlias({ name: alias })).body as object).sort();
        const oldIndices = await behind();
        // The task that records the truncation cannot be written: its transaction rolls back after the
        // alias has moved to the new index.
        const failing = async () => {
          await sql(s.databaseUrl, "CREATE FUNCTION test_refuse_truncation() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
          await sql(s.databaseUrl, "CREATE TRIGGER test_refuse_truncation BEFORE INSERT ON tasks FOR EACH ROW WHEN (NEW.kind = 'timeseries-truncate') EXECUTE FUNCTION test_refuse_truncation()");
          try {
            const r = await truncate({ aspect: 'datasetUsageStatistics', endTimeMillis: T0 + 50_010, dryRun: false, forceReindex: true });
            assert.equal(r.status, 500);
          } finally {
            await sql(s.databaseUrl, 'DROP TRIGGER test_refuse_truncation ON tasks');
            await sql(s.databaseUrl, 'DROP FUNCTION test_refuse_truncation()');
          }
        };
        await failing();
        await settle();
        assert.deepEqual(await behind(), oldIndices, 'the alias is back on the old index alone');
        assert.deepEqual(await stored('datasetUsageStatistics'), before, 'every entry is readable');
        assert.deepEqual(await sql(s.databaseUrl, 'SELECT count(*)::int AS n FROM timeseries_truncation_guards'), [{ n: 0 }]);
        // Failed again, and at once truncated again (before the dispatcher has undone it): the new
        // truncation undoes the failed one first, so it copies from the old index, not a half-filled one.
        await failing();
        // The same truncation, committed: its guard is dropped, its copy followed to the end.
        const ok = await truncate({ aspect: 'datasetUsageStatistics', endTimeMillis: T0 + 50_010, dryRun: false, forceReindex: true });
        assert.equal(ok.status, 200);
        await completed(ok.body.value as string);
        await svcTask('dataset_datasetusagestatisticsaspect_v1');
        await settle();
        assert.deepEqual(await stored('datasetUsageStatistics'), before.filter((t) => t > T0 + 50_010));
        assert.deepEqual(await sql(s.databaseUrl, 'SELECT count(*)::int AS n FROM timeseries_truncation_guards'), [{ n: 0 }]);
      });

      if (opensearch) test('while a reindex copies an index: a hard delete waits for the copy (which does not bring the entries back); a delete of the latest entry is a 409', async () => {
        const [a, b] = [datasetUrn('ts.hold.a'), datasetUrn('ts.hold.b')];
        const write = async (urn: string, t: number) =>
          text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/operation?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t, operationType: 'INSERT', lastUpdatedTimestamp: t } }) }), 200);
        const deleteLatest = () => s.request(`/openapi/v3/entity/dataset/${enc(a)}/operation`, { method: 'DELETE' });
        for (const t of [1000, 2000, 3000, 4000]) await write(a, T0 + t);
        await write(b, T0 + 5000);
        await settle();
        const r = await operation('truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'operation', endTimeMillis: T0 + 1000, dryRun: false, forceReindex: true, batchSize: 1 });
        const task = r.body.value as string;
        assert.match(task, /^(?!svc:).+:\d+$/);
        // The svc task that follows the reindex is held (its row locked), so the reindex counts as running.
        const hold = new pg.Client({ connectionString: s.databaseUrl });
        await hold.connect();
        try {
          await hold.query('BEGIN');
          const held = await hold.query("SELECT id FROM tasks WHERE kind = 'timeseries-truncate' AND params->>'opensearchTask' = $1 FOR UPDATE", [task]);
          assert.equal(held.rowCount, 1);
          const refused = await deleteLatest();
          assert.equal(refused.status, 409);
          assert.match(await refused.text(), new RegExp(`dataset_operationaspect_v1 is being rebuilt by a truncation \\(task ${held.rows[0].id},`));
          // A second truncation of the index waits for the copy (it would copy a half-filled index, and both would delete their sources).
          const again = await operation('truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'operation', endTimeMillis: T0 + 2000, dryRun: false, forceReindex: true });
          assert.equal(again.status, 409);
          assert.match(again.body.message, new RegExp(`is being rebuilt by a truncation \\(task ${held.rows[0].id}, GET /api/tasks/${held.rows[0].id}\\); it can be truncated again once that task has succeeded`));
          await text(await s.request(`/openapi/v3/entity/dataset/${enc(b)}`, { method: 'DELETE' }), 200);
          await settle();
          const waiting = await sql<{ kind: string }>(s.databaseUrl, 'SELECT kind FROM timeseries_deletes WHERE urn = ANY($1)', [[a, b]]);
          assert.deepEqual(waiting.map((w) => w.kind), ['entity'], 'the hard delete waits in the outbox; the refused delete left nothing');
          // The copy, done meanwhile, holds the hard-deleted dataset's entry again.
          await completed(task);
          const alias = `${prefix}_dataset_operationaspect_v1`;
          await os!.indices.refresh({ index: alias });
          const copied = await os!.search({ index: alias, body: { size: 100, query: { term: { timestampMillis: T0 + 5000 } } } as never });
          assert.equal((copied.body.hits.hits as unknown[]).length, 1, 'the copy read it before it was deleted');
        } finally {
          await hold.query('ROLLBACK').catch(() => undefined);
          await hold.end();
        }
        await svcTask('dataset_operationaspect_v1');
        await settle();
        assert.deepEqual(await stored('operation'), [T0 + 2000, T0 + 3000, T0 + 4000], 'the hard delete applied to the new index');
        await text(await deleteLatest(), 200);
        assert.deepEqual(await stored('operation'), [T0 + 2000, T0 + 3000], 'the latest entry can be deleted once the copy is done');
      });

      test('an entity type or aspect that is not a time series is a 400 in Rest.li’s shape', async () => {
        const notSeries = await truncate({ aspect: 'status', endTimeMillis: T0 });
        assert.equal(notSeries.status, 400);
        assert.equal(notSeries.restli, 'true');
        assert.deepEqual(notSeries.body, { message: 'status is not a time series aspect of dataset; its time series aspects are ' + notSeries.body.message.split('are ')[1], status: 400 });
        assert.match(notSeries.body.message, /datasetProfile/);
        const unknown = await truncate({ entityType: 'nothing', endTimeMillis: T0 });
        assert.equal(unknown.status, 400);
        assert.match(unknown.body.message, /Unknown entity type "nothing"/);
      });

      test('missing and mistyped parameters are named, 400', async () => {
        const r = await operation('truncateTimeseriesAspect', { entityType: 'dataset', dryRun: 'no' });
        assert.equal(r.status, 400);
        assert.equal(r.restli, 'true');
        assert.equal(r.body.message, "Parameter 'aspect' is required; Parameter 'endTimeMillis' is required; Parameter 'dryRun' must be true or false, got \"no\"");
        for (const timeoutSeconds of [0, -1]) {
          const timeout = await operation('truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 4000, dryRun: false, timeoutSeconds });
          assert.equal(timeout.status, 400, `timeoutSeconds ${timeoutSeconds}`);
          assert.equal(timeout.body.message, `Parameter 'timeoutSeconds' must be an integer of at least 1, got ${timeoutSeconds}`);
        }
        // A batch size beyond a Java int was queued, and its task failed at every try.
        const truncations = async () => ((await (await s.request('/api/tasks?kind=timeseries-truncate')).json()) as { tasks: unknown[] }).tasks.length;
        const queued = await truncations();
        const big = await operation('truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 4000, dryRun: false, batchSize: 2 ** 31 });
        assert.equal(big.status, 400);
        assert.equal(big.body.message, "Parameter 'batchSize' must be an integer from -2147483648 to 2147483647, got 2147483648");
        assert.equal(await truncations(), queued, 'no task queued');
        // Refused before the action runs (a body that is not JSON, another media type, no token): Rest.li's form too.
        const raw = async (body: string, headers: Record<string, string>, token?: null) => {
          const res = await s.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body, headers, ...(token === null ? { token } : {}) });
          return { status: res.status, restli: res.headers.get('x-restli-error-response'), body: JSON.parse(await res.text()) as { message: string; status: number } };
        };
        const malformed = await raw('xx', {});
        assert.deepEqual([malformed.status, malformed.restli, malformed.body.status], [400, 'true', 400]);
        assert.match(malformed.body.message, /^Malformed JSON in the request body/);
        const plain = await raw('{}', { 'content-type': 'text/plain' });
        assert.deepEqual([plain.status, plain.restli, plain.body.status], [415, 'true', 415]);
        assert.match(plain.body.message, /Content-Type application\/json/);
        const anonymous = await raw('{}', {}, null);
        assert.deepEqual([anonymous.status, anonymous.restli, anonymous.body.status], [401, 'true', 401]);
        assert.equal(await truncations(), queued, 'no task queued');
        const noAction = await s.request('/gms/operations', { method: 'POST', body: '{}' });
        assert.equal(noAction.status, 400);
        const badAction = await s.request('/gms/operations?action=restoreIndices', { method: 'POST', body: '{}' });
        assert.equal(badAction.status, 400);
      });

      test('endTimeMillis is a Java long: Long.MAX_VALUE, written as a decimal as the JSON body takes it, is every entry', async () => {
        const res = await s.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: '{"entityType":"dataset","aspect":"datasetProfile","endTimeMillis":9.223372036854776e18}' });
        const body = JSON.parse(await text(res, 200)) as { value: string };
        assert.match(body.value, /^Delete (\d+) out of \1 rows \(100\.00%\)\. Reindexing/);
        assert.notEqual(body.value, 'Delete 0 out of 0 rows (NaN%). ', 'some entries are there');
      });

      test('the same action at /operations and /api/gms/operations', async () => {
        for (const path of ['/operations', '/api/gms/operations']) {
          const res = await s.request(`${path}?action=truncateTimeseriesAspect`, { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 0 }) });
          assert.equal(res.status, 200, path);
          assert.match(((await res.json()) as { value: string }).value, /^Delete 0 out of 41 rows/);
        }
      });
    });

    describe('GET /openapi/v2/timeseries/{entity}/{aspect}', () => {
      test('lists entries newest first between inclusive bounds, page by page with the scrollId', async () => {
        const urn = datasetUrn('ts.listed');
        for (const t of [1000, 2000, 3000, 4000, 5000]) {
          // The first three shipped (opensearch), the last two perhaps not yet: the listing merges both.
          if (t === 4000) await settle();
          await text(
            await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/operation?createIfNotExists=false`, {
              method: 'POST',
              body: JSON.stringify({ value: { timestampMillis: t, operationType: 'INSERT', lastUpdatedTimestamp: t, messageId: `m${t}` } }),
            }),
            200,
          );
        }
        const seen: number[] = [];
        let scrollId: string | null = null;
        let first: any;
        do {
          const page: any = JSON.parse(
            await text(await s.request(`/openapi/v2/timeseries/dataset/operation?count=2&startTimeMillis=2000&endTimeMillis=5000${scrollId ? `&scrollId=${encodeURIComponent(scrollId)}` : ''}`), 200),
          );
          first ??= page.results[0];
          seen.push(...page.results.map((r: { timestampMillis: number }) => r.timestampMillis));
          scrollId = page.scrollId;
        } while (scrollId);
        assert.deepEqual(seen, [5000, 4000, 3000, 2000]);
        assert.deepEqual(first, { urn, messageId: 'm5000', timestampMillis: 5000, event: { timestampMillis: 5000, operationType: 'INSERT', lastUpdatedTimestamp: 5000, messageId: 'm5000' } });
        const withMeta: any = JSON.parse(await text(await s.request('/openapi/v2/timeseries/dataset/operation?count=1&systemMetadata=true'), 200));
        assert.equal(typeof withMeta.results[0].systemMetadata, 'object');
      });

      test('an aspect that is not a time series, or a bad scroll id, is a 400', async () => {
        const res = await s.request('/openapi/v2/timeseries/dataset/status');
        assert.equal(res.status, 400);
        assert.match(((await res.json()) as { message: string }).message, /status is not a time series aspect of dataset/);
        const bad = await s.request('/openapi/v2/timeseries/dataset/operation?scrollId=nonsense');
        assert.equal(bad.status, 400);
        // A urn that is none, or of another entity type, is refused (both listed nothing); a time before 1970 is taken.
        const garbage = await s.request('/openapi/v2/timeseries/dataset/operation?urn=garbage');
        assert.deepEqual([garbage.status, await garbage.json()], [400, { error: 'Invalid urn!: garbage' }]);
        const flow = await s.request(`/openapi/v2/timeseries/dataset/operation?urn=${enc('urn:li:dataFlow:(airflow,f,PROD)')}`);
        assert.deepEqual([flow.status, ((await flow.json()) as { message: string }).message], [400, 'query parameter urn: urn:li:dataFlow:(airflow,f,PROD) is a dataFlow, and these are entries of dataset entities']);
        await text(await s.request('/openapi/v2/timeseries/dataset/operation?startTimeMillis=-5'), 200);
      });
    });

    describe('POST /aspects?action=getTimeseriesAspectValues (DataHub\'s clients)', () => {
      test('the entries of one entity, newest first, shipped or not; latestValue, bounds and limit; values as JSON strings', async () => {
        const urn = datasetUrn('ts.values');
        const other = datasetUrn('ts.values.other');
        // Times of their own (year 2190), apart from the other tests' entries of the aspect.
        const write = (u: string, t: number) =>
          s.request(`/openapi/v3/entity/dataset/${enc(u)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: FAR + t, rowCount: t } }) }).then((r) => text(r, 200));
        await write(urn, 1000);
        await write(other, 2500);
        await write(urn, 2000);
        await settle();
        await write(urn, 3000); // perhaps not shipped yet (opensearch)
        await write(other, 3500);
        const values = async (body: Record<string, unknown>) => {
          const res = await s.request('/aspects?action=getTimeseriesAspectValues', { method: 'POST', body: JSON.stringify({ urn, entity: 'dataset', aspect: 'datasetProfile', ...body }) });
          return JSON.parse(await text(res, 200)).value;
        };
        const all = await values({});
        assert.deepEqual([all.entityName, all.aspectName], ['dataset', 'datasetProfile']);
        assert.deepEqual(all.values.map((v: { aspect: { value: string; contentType: string } }) => [JSON.parse(v.aspect.value).timestampMillis - FAR, v.aspect.contentType]), [
          [3000, 'application/json'],
          [2000, 'application/json'],
          [1000, 'application/json'],
        ]);
        assert.deepEqual(JSON.parse((await values({ latestValue: true })).values[0].aspect.value), { timestampMillis: FAR + 3000, rowCount: 3000 });
        assert.equal((await values({ latestValue: true })).values.length, 1);
        assert.deepEqual((await values({ startTimeMillis: FAR + 1500, endTimeMillis: FAR + 2500 })).values.map((v: any) => JSON.parse(v.aspect.value).rowCount), [2000]);
        assert.deepEqual((await values({ limit: 2 })).values.map((v: any) => JSON.parse(v.aspect.value).rowCount), [3000, 2000]);
        const refused = async (body: Record<string, unknown>, message: RegExp) => {
          const res = await s.request('/aspects?action=getTimeseriesAspectValues', { method: 'POST', body: JSON.stringify(body) });
          assert.equal(res.status, 400);
          assert.equal(res.headers.get('x-restli-error-response'), 'true');
          assert.match(((await res.json()) as { message: string }).message, message);
        };
        await refused({ urn, entity: 'dataset', aspect: 'status' }, /status is not a time series aspect of dataset/);
        await refused({ urn, aspect: 'datasetProfile', limit: -1 }, /entity is required: a string.*limit must be a positive integer/s);
        await refused({ urn, entity: 'chart', aspect: 'datasetProfile' }, /entity chart does not match the URN's type dataset/);
      });
    });

    describe('time series entries on entity reads and deletes', () => {
      test('the latest entry shows on reads, shipped or not; DELETE of the aspect removes the latest entry; a hard delete removes them all', async () => {
        const urn = datasetUrn('ts.read');
        const write = (t: number) =>
          s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t, rowCount: t } }) }).then((r) => text(r, 200));
        const latest = async () => {
          const res = await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile`);
          return res.status === 404 ? undefined : JSON.parse(await text(res, 200)).datasetProfile.value.timestampMillis;
        };
        await write(1000);
        await write(3000);
        await settle();
        await write(2000); // older than the latest, perhaps not shipped yet
        assert.equal(await latest(), 3000);
        const entity = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}?aspects=datasetProfile`), 200));
        assert.equal(entity.datasetProfile.value.timestampMillis, 3000);
        // DataHub's DELETE of a time series aspect: the latest entry goes, the one before shows.
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile`, { method: 'DELETE' }), 200);
        assert.equal(await latest(), 2000);
        await settle();
        assert.equal(await latest(), 2000);
        assert.deepEqual((await stored()).filter((t) => t <= 3000), [1000, 2000]);
        // A hard delete of the entity: none of its entries remain, wherever they were.
        await write(4000);
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'DELETE' }), 200);
        assert.equal(await latest(), undefined);
        assert.deepEqual((await stored()).filter((t) => t <= 4000), []);
        // Entries written after the delete are kept.
        await write(5000);
        assert.equal(await latest(), 5000);
        assert.deepEqual((await stored()).filter((t) => t <= 5000), [5000]);
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'DELETE' }), 200);
      });
    });

    describe('an entry written again (the same entity, time, partition, granularity and message id)', () => {
      const restli = (path: string, body: unknown) => s.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'X-RestLi-Protocol-Version': '2.0.0' } });
      const proposal = (urn: string, value: Record<string, unknown>) => ({ entityType: 'dataset', entityUrn: urn, changeType: 'UPSERT', aspectName: 'datasetProfile', aspect: { value: JSON.stringify(value), contentType: 'application/json' } });
      /** Writes a profile as DataHub's clients do (Rest.li's ingestProposal). */
      const ingest = async (urn: string, value: Record<string, unknown>) => text(await restli('/aspects?action=ingestProposal', { proposal: proposal(urn, value) }), 200);
      /** The rowCounts of a dataset's profiles from FAR on, newest first, on each read route. */
      async function reads(urn: string): Promise<{ v2: number[]; restli: number[] }> {
        const v2 = JSON.parse(await text(await s.request(`/openapi/v2/timeseries/dataset/datasetProfile?count=100&urn=${enc(urn)}&startTimeMillis=${FAR}`), 200));
        const values = JSON.parse(await text(await restli('/aspects?action=getTimeseriesAspectValues', { urn, entity: 'dataset', aspect: 'datasetProfile', startTimeMillis: FAR, limit: 100 }), 200));
        return { v2: v2.results.map((r: any) => r.event.rowCount), restli: values.value.values.map((v: any) => JSON.parse(v.aspect.value).rowCount) };
      }
      const latest = async (urn: string) => JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile`), 200)).datasetProfile.value.rowCount;
      /** The counts of a dry-run truncation of the profiles up to `end`. */
      const counts = async (end: number): Promise<[number, number]> => {
        const m = /^Delete (\d+) out of (\d+) rows/.exec((await truncate({ endTimeMillis: end })).body.value)!;
        return [Number(m[1]), Number(m[2])];
      };
      const granularity = { unit: 'DAY', multiple: 1 };
      const partitionSpec = { partition: 'FULL_TABLE_SNAPSHOT', type: 'FULL_TABLE' };

      test('replaces it: one entry on every read and in the counts, with the latest value, shipped or not', async () => {
        const urn = datasetUrn('ts.again');
        const t = FAR + 10_000;
        const [toDelete, total] = await counts(t);
        await ingest(urn, { timestampMillis: t - 1, rowCount: 0 });
        await ingest(urn, { timestampMillis: t, eventGranularity: granularity, partitionSpec, rowCount: 1 });
        await settle(); // in OpenSearch (opensearch store)
        // Again, through Rest.li and through REST v3 (its keys in another order): answered as any write.
        await ingest(urn, { timestampMillis: t, eventGranularity: granularity, partitionSpec, rowCount: 2 });
        const v3 = await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, {
          method: 'POST',
          body: JSON.stringify({ value: { rowCount: 3, partitionSpec: { type: 'FULL_TABLE', partition: 'FULL_TABLE_SNAPSHOT' }, eventGranularity: { multiple: 1, unit: 'DAY' }, timestampMillis: t } }),
        });
        assert.equal(JSON.parse(await text(v3, 200)).datasetProfile.value.rowCount, 3);
        // Not shipped yet (opensearch): the outbox's value replaces OpenSearch's document on reads.
        assert.deepEqual(await reads(urn), { v2: [3, 0], restli: [3, 0] });
        assert.equal(await latest(urn), 3);
        assert.deepEqual(await counts(t), [toDelete + 2, total + 2]);
        await settle();
        assert.deepEqual(await reads(urn), { v2: [3, 0], restli: [3, 0] });
        assert.deepEqual(await counts(t), [toDelete + 2, total + 2]);
        assert.deepEqual((await stored()).filter((x) => x === t), [t]);
        // The same entry again in a page of one: the next page is the entry before it, once.
        const page = JSON.parse(await text(await s.request(`/openapi/v2/timeseries/dataset/datasetProfile?count=1&urn=${enc(urn)}&startTimeMillis=${FAR}`), 200));
        assert.equal(page.results.length, 1);
        await ingest(urn, { timestampMillis: t, eventGranularity: granularity, partitionSpec, rowCount: 4 });
        const next = JSON.parse(await text(await s.request(`/openapi/v2/timeseries/dataset/datasetProfile?count=1&urn=${enc(urn)}&startTimeMillis=${FAR}&scrollId=${encodeURIComponent(page.scrollId)}`), 200));
        assert.deepEqual(next.results.map((r: any) => r.event.rowCount), [0]);
        // DataHub's DELETE of the aspect takes the latest entry, both its values (written since it was
        // shipped, or not): the one before shows, and stays once the deletion reached the store.
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile`, { method: 'DELETE' }), 200);
        assert.deepEqual(await reads(urn), { v2: [0], restli: [0] });
        await settle();
        assert.deepEqual(await reads(urn), { v2: [0], restli: [0] });
        assert.equal(await latest(urn), 0);
        // Written once more after the deletion: there again.
        await ingest(urn, { timestampMillis: t, eventGranularity: granularity, partitionSpec, rowCount: 5 });
        await settle();
        assert.deepEqual(await reads(urn), { v2: [5, 0], restli: [5, 0] });
      });

      test('another partition, time partition, granularity or message id is another entry; the partition type is not part of it', async () => {
        const urn = datasetUrn('ts.again.parts');
        const t = FAR + 20_000;
        const base = { timestampMillis: t, eventGranularity: granularity, partitionSpec };
        await ingest(urn, { ...base, rowCount: 1 });
        await ingest(urn, { ...base, partitionSpec: { partition: 'p=2', type: 'PARTITION' }, rowCount: 2 });
        await ingest(urn, { ...base, eventGranularity: { unit: 'HOUR', multiple: 1 }, rowCount: 3 });
        await ingest(urn, { ...base, messageId: 'm1', rowCount: 5 });
        await ingest(urn, { ...base, partitionSpec: { timePartition: { startTimeMillis: t, durationMillis: 3_600_000 } }, rowCount: 6 });
        await ingest(urn, { timestampMillis: t, rowCount: 7 });
        await settle();
        // The same as the first but for the partition's type: it replaces the first.
        await ingest(urn, { ...base, partitionSpec: { partition: 'FULL_TABLE_SNAPSHOT', type: 'QUERY' }, rowCount: 8 });
        const { v2, restli: values } = await reads(urn);
        assert.deepEqual([[...v2].sort(), [...values].sort()], [[2, 3, 5, 6, 7, 8], [2, 3, 5, 6, 7, 8]]);
        assert.equal((await stored()).filter((x) => x === t).length, 6);
      });

      test('an entry of another aspect at the same time is another entry: deleting one leaves the other', async () => {
        const urn = datasetUrn('ts.again.aspects');
        const t = FAR + 40_000;
        await ingest(urn, { timestampMillis: t, rowCount: 1 });
        const usage = () => s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetUsageStatistics`);
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetUsageStatistics?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t, uniqueUserCount: 7 } }) }), 200);
        await settle();
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile`, { method: 'DELETE' }), 200);
        // While the deletion waits for the dispatcher (opensearch), and once it is applied.
        assert.equal(JSON.parse(await text(await usage(), 200)).datasetUsageStatistics.value.uniqueUserCount, 7);
        await settle();
        assert.equal(JSON.parse(await text(await usage(), 200)).datasetUsageStatistics.value.uniqueUserCount, 7);
        assert.deepEqual(await reads(urn), { v2: [], restli: [] });
      });

      test('a batch with the same entry twice ends with one entry, of the later value', async () => {
        const urn = datasetUrn('ts.again.batch');
        const t = FAR + 30_000;
        const value = (rowCount: number) => proposal(urn, { timestampMillis: t, partitionSpec, rowCount });
        await text(await restli('/aspects?action=ingestProposalBatch', { proposals: [value(1), value(2)] }), 200);
        assert.deepEqual(await reads(urn), { v2: [2], restli: [2] });
        await settle();
        // Once more, in OpenSearch already (opensearch store), and through REST v3's batch.
        await text(await restli('/aspects?action=ingestProposalBatch', { proposals: [value(3), value(4), value(5)] }), 200);
        assert.deepEqual(await reads(urn), { v2: [5], restli: [5] });
        const batch = [6, 7].map((rowCount) => ({ urn, datasetProfile: { value: { timestampMillis: t, partitionSpec, rowCount } } }));
        await text(await s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify(batch) }), 200);
        assert.deepEqual(await reads(urn), { v2: [7], restli: [7] });
        await settle();
        assert.deepEqual(await reads(urn), { v2: [7], restli: [7] });
        assert.deepEqual((await stored()).filter((x) => x === t), [t]);
      });
    });

    describe('getEsTaskStatus', () => {
      test('DataHub’s rules and messages for the parameters', async () => {
        const msg = async (body: unknown) => {
          const r = await operation('getEsTaskStatus', body);
          assert.equal(r.status, 400, JSON.stringify(r.body));
          return r.body.message;
        };
        assert.equal(await msg({}), 'Please specify either Node ID + task ID OR composite task parameters');
        assert.equal(await msg({ nodeId: 'svc' }), 'Please specify either Node ID + task ID OR composite task parameters');
        assert.equal(await msg({ task: 'svc:1', nodeId: 'svc', taskId: 2 }), 'Please specify only one of Node ID + task ID OR composite task parameters');
        // A mistyped or unknown parameter is named rather than read as absent.
        assert.equal(await msg({ nodeId: 'svc', taskId: '3' }), "Parameter 'taskId' must be an integer, got \"3\"");
        assert.equal(await msg({ task: 123 }), "Parameter 'task' must be a string (not empty), got 123");
        assert.equal(await msg({ nodeId: 5, taskId: 3 }), "Parameter 'nodeId' must be a string (not empty), got 5");
        assert.equal(await msg({ task: 'svc:3', foo: 1 }), "Parameter 'foo' is not a parameter of getEsTaskStatus (they are nodeId, taskId, task)");
        for (const bad of ['hello', '123456:aB1', ':123', 'svc:0']) {
          assert.equal(await msg({ task: bad }), `Task should be in the form nodeId:taskId e.g. aB1cdEf2GHIJKLMnoPQr3S:123456 (got ${bad})`);
        }
      });

      test('a task that does not exist: HTTP 200 with an error inside the value; 404 on the OpenAPI route', async () => {
        for (const task of ['qhxGdzytQS-pQek8CwBCZg:54654', 'svc:999999']) {
          const r = await operation('getEsTaskStatus', { task });
          assert.equal(r.status, 200);
          assert.deepEqual(JSON.parse(r.body.value), { error: `Could not get task status for ${task}` });
        }
        const res = await s.request('/openapi/operations/elasticSearch/getTaskStatus?task=svc%3A999999');
        assert.equal(res.status, 404);
        const bad = await s.request('/openapi/operations/elasticSearch/getTaskStatus?task=hello');
        assert.equal(bad.status, 400);
        assert.match(((await bad.json()) as { message: string }).message, /^Task ID should be in the form nodeId:taskId e.g. aB1cdEf2GHI-JKLMnoPQr3:123456 \(got hello\)$/);
      });
    });

    describe('getIndexSizes and authorization', () => {
      test('index sizes per aspect, named as DataHub names the indices', async () => {
        await profiles('ts.usage', 10, 'datasetUsageStatistics');
        const r = await operation('getIndexSizes', {});
        assert.equal(r.status, 200);
        const sizes = r.body.value.indexSizes as { indexName: string; entityName: string; aspectName: string; sizeMb: number }[];
        const byName = new Map(sizes.map((x) => [x.indexName, x]));
        // In opensearch mode the names carry the index prefix, as DataHub's do.
        const name = (index: string) => (opensearch ? `${prefix}_${index}` : index);
        const profile = byName.get(name('dataset_datasetprofileaspect_v1'))!;
        const usage = byName.get(name('dataset_datasetusagestatisticsaspect_v1'))!;
        assert.deepEqual([profile.entityName, profile.aspectName, usage.aspectName], ['dataset', 'datasetprofile', 'datasetusagestatistics'], JSON.stringify(sizes));
        // Sizes on disk in kilobytes: tables and their indexes in pages of 8 KB, or the indices' primary store.
        assert.ok(profile.sizeMb >= (opensearch ? 1 : 8.192) && usage.sizeMb >= (opensearch ? 1 : 8.192), JSON.stringify(sizes));
        // It takes no parameters, and says so of one given, as the other actions name theirs (it was ignored).
        const unknown = await operation('getIndexSizes', { foo: 1 });
        assert.equal(unknown.status, 400);
        assert.equal(unknown.body.message, "Parameter 'foo' is not a parameter of getIndexSizes (it takes none)");
      });

      test('the actions need the admin role (DataHub’s lines) and a token', async () => {
        const created = await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'ts-writer', role: 'writer' }) });
        const writer = ((await created.json()) as { token: string }).token;
        const cases: [string, unknown, string][] = [
          ['truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 0 }, 'User is unauthorized to truncate timeseries index'],
          ['getEsTaskStatus', { task: 'svc:1' }, 'User is unauthorized to get ES task status'],
          ['getIndexSizes', {}, 'User is unauthorized to get index sizes.'],
        ];
        for (const [action, body, message] of cases) {
          const r = await operation(action, body, writer);
          assert.deepEqual([r.status, r.body, r.restli], [403, { message, status: 403 }, 'true'], action);
          const anonymous = await operation(action, body, null);
          assert.equal(anonymous.status, 401, action);
        }
        const openapi = await s.request('/openapi/operations/elasticSearch/getTaskStatus?task=svc%3A1', { token: writer });
        assert.equal(openapi.status, 403);
        assert.equal(((await openapi.json()) as { error: string }).error, 'urn:li:corpuser:ts-writer is not authorized to get ElasticSearch task status');
      });
    });
  });
}

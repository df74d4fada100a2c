/**
 * Durability of a truncation: the server is killed (SIGKILL) in the middle of truncating 1,000,000
 * time series entries; the next server resumes the task, which completes with exactly the entries at
 * or before the boundary gone and every later one kept.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startChildServer, type ChildServer } from '../support/childServer.ts';
import { pollUntil } from '../support/poll.ts';
import { createTestDatabase, enc, sql, text } from '../support/testServer.ts';

const N = 1_000_000;
const INDEX = 'dataset_datasetprofileaspect_v1';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,crash.profiled,PROD)';
const START = Date.UTC(2024, 0, 1);
/** One entry every 10 s from 2024-01-01: 1,000,000 entries reach into April. */
const STEP = 10_000;
/** Inclusive: January and February are dropped whole, March (less than half of it goes) is deleted from in batches. */
const BOUNDARY = Date.UTC(2024, 2, 10);
const EXPECTED_GONE = Math.floor((BOUNDARY - START) / STEP) + 1;

let databaseUrl: string;
let server: ChildServer | undefined;

before(async () => {
  databaseUrl = await createTestDatabase();
});
after(async () => {
  await server?.kill();
});

test('a truncation killed mid-way resumes after a restart and removes exactly the entries at or before the boundary', { timeout: 600_000 }, async () => {
  server = await startChildServer({ DATABASE_URL: databaseUrl });
  // The first entry through the API (the dataset, its key, its partition), the rest in one statement.
  await text(
    await server.remote.request(`/openapi/v3/entity/dataset/${enc(URN)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: START } }) }),
    200,
  );
  await sql(databaseUrl, `SELECT svc_timeseries_partition($1, m) FROM (SELECT DISTINCT ON (date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) t AS m FROM (SELECT $2::bigint + i * $3::bigint AS t FROM generate_series(1, $4::int) AS i) x ORDER BY date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) months`, [INDEX, START, STEP, N - 1]);
  await sql(
    databaseUrl,
    `INSERT INTO timeseries_entries (index_name, entity_type, aspect, urn, timestamp_millis, metadata, created_by, entry_key)
     SELECT $1, 'dataset', 'datasetProfile', $2, $3::bigint + i * $4::bigint, json_build_object('timestampMillis', $3::bigint + i * $4::bigint, 'rowCount', i), 'urn:li:corpuser:test', gen_random_uuid()
       FROM generate_series(1, $5::int) AS i`,
    [INDEX, URN, START, STEP, N - 1],
  );
  await sql(databaseUrl, 'ANALYZE timeseries_entries');

  const res = await server.remote.request('/gms/operations?action=truncateTimeseriesAspect', {
    method: 'POST',
    // Small batches: the batch phase (about 78,000 entries) lasts long enough for the 200 ms poll below to see it under way.
    body: JSON.stringify({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: BOUNDARY, dryRun: false, batchSize: 500 }),
  });
  const task = ((await res.json()) as { value: string }).value;
  assert.match(task, /^svc:\d+$/);
  const id = task.split(':')[1];
  const read = async () => JSON.parse(await text(await server!.remote.request(`/api/tasks/${id}`), 200)) as { state: string; total: number | null; done: number; attempts: number };

  // Killed once the whole months are gone and the batches of the boundary month have begun.
  const dropped = Math.round((Date.UTC(2024, 2, 1) - START) / STEP);
  const before = await pollUntil('the truncation is deleting in batches', read, (t) => t.done > dropped, 120_000);
  assert.equal(before.state, 'RUNNING');
  assert.equal(before.total, EXPECTED_GONE);
  await server.kill();

  server = await startChildServer({ DATABASE_URL: databaseUrl });
  const finished = await pollUntil('the truncation completes after the restart', read, (t) => t.state === 'SUCCEEDED', 120_000);
  assert.ok(finished.attempts >= 2, `resumed (attempts ${finished.attempts})`);
  assert.equal(finished.done, EXPECTED_GONE);

  const [left] = await sql<{ n: string; min: string; max: string }>(databaseUrl, 'SELECT count(*) AS n, min(timestamp_millis) AS min, max(timestamp_millis) AS max FROM timeseries_entries WHERE index_name = $1', [INDEX]);
  assert.equal(Number(left!.n), N - EXPECTED_GONE);
  assert.ok(Number(left!.min) > BOUNDARY, 'nothing at or before the boundary is left');
  assert.equal(Number(left!.max), START + (N - 1) * STEP, 'the latest entry is kept');
  const status = JSON.parse(
    ((await (await server.remote.request('/gms/operations?action=getEsTaskStatus', { method: 'POST', body: JSON.stringify({ task }) })).json()) as { value: string }).value,
  );
  assert.deepEqual([status.completed, status.status.deleted, status.status.total], [true, EXPECTED_GONE, EXPECTED_GONE]);
});

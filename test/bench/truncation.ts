/**
 * Time series truncation on Postgres: svc's truncateTimeseriesAspect over 1,000,000 entries (half of
 * them at or before the boundary) against a raw SQL `DELETE` of the same entries from a plain table
 * of the same rows and indexes (svc's former, unpartitioned layout) on the same Postgres, in one run;
 * and the dry run's latency against the raw count it stands for.
 *
 *   npm run bench:truncation -- [--entries 1000000] [--batch-size 10000] [--iterations 20]
 *
 * svc's side: the entries are written into its partitions (one month each), the truncation queued
 * with dryRun=false and timed until its task completes (polled every 20 ms). The OpenSearch side
 * (svc's delete-by-query against a raw one) waits for the time series store in OpenSearch.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { benchPostgres, call, createDb, startBenchServer } from './benchSupport.ts';

const { values: args } = parseArgs({
  options: { entries: { type: 'string', default: '1000000' }, 'batch-size': { type: 'string', default: '10000' }, iterations: { type: 'string', default: '20' } },
});
const N = Number(args.entries);
const BATCH = Number(args['batch-size']);
const ITERATIONS = Number(args.iterations);
const INDEX = 'dataset_datasetprofileaspect_v1';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:bench,db.profiled,PROD)';
const START = Date.UTC(2024, 0, 1);
const STEP = 10_000;
/** Inclusive: exactly half of the entries are at or before it. */
const BOUNDARY = START + (N / 2 - 1) * STEP;

const rows = (table: string, indexColumn: boolean) => `
  INSERT INTO ${table} (${indexColumn ? 'index_name, ' : ''}entity_type, aspect, urn, timestamp_millis, metadata, created_by)
  SELECT ${indexColumn ? `'${INDEX}', ` : ''}'dataset', 'datasetProfile', $1, $2::bigint + i * $3::bigint,
         json_build_object('timestampMillis', $2::bigint + i * $3::bigint, 'rowCount', i, 'columnCount', 12), 'urn:li:corpuser:bench'
    FROM generate_series(0, $4::int - 1) AS i`;

async function time<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await f();
  return [performance.now() - t, r];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const pgc = await benchPostgres();
const svcDb = await createDb(pgc.adminUrl);
const rawDb = await createDb(pgc.adminUrl);
const server = await startBenchServer(svcDb, 8);
const svcSql = new pg.Client({ connectionString: svcDb });
const raw = new pg.Client({ connectionString: rawDb });
await svcSql.connect();
await raw.connect();
try {
  // svc: the dataset through the API, then the entries into their monthly partitions.
  await call(server.base, 'POST', `/openapi/v3/entity/dataset/${encodeURIComponent(URN)}/status?createIfNotExists=false`, { value: { removed: false } });
  await svcSql.query(
    `SELECT svc_timeseries_partition($1, m) FROM (SELECT DISTINCT ON (date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) t AS m
       FROM (SELECT $2::bigint + i * $3::bigint AS t FROM generate_series(0, $4::int - 1) AS i) x ORDER BY date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) months`,
    [INDEX, START, STEP, N],
  );
  await svcSql.query(rows('timeseries_entries', true), [URN, START, STEP, N]);
  // Raw: the same rows in one plain table with the same indexes.
  await raw.query(`CREATE TABLE timeseries_raw (
      id bigserial PRIMARY KEY, entity_type text NOT NULL, aspect text NOT NULL, urn text COLLATE "C" NOT NULL, timestamp_millis bigint NOT NULL,
      metadata json NOT NULL, system_metadata jsonb NOT NULL DEFAULT '{}', created_on timestamptz NOT NULL DEFAULT now(), created_by text NOT NULL)`);
  await raw.query('CREATE INDEX ON timeseries_raw (entity_type, aspect, timestamp_millis)');
  await raw.query('CREATE INDEX ON timeseries_raw (urn, aspect, timestamp_millis DESC)');
  await raw.query(rows('timeseries_raw', false), [URN, START, STEP, N]);
  for (const c of [svcSql, raw]) {
    await c.query('VACUUM ANALYZE');
    await c.query('CHECKPOINT');
  }

  // Dry runs against the raw count they stand for, alternating.
  const dry: number[] = [];
  const rawCount: number[] = [];
  let message = '';
  for (let k = 0; k < ITERATIONS; k++) {
    const [d, r] = await time(() => call(server.base, 'POST', '/gms/operations?action=truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: BOUNDARY }));
    dry.push(d);
    message = (r as { value: string }).value;
    const [c] = await time(() =>
      raw.query(`SELECT count(*) FILTER (WHERE timestamp_millis <= $3) AS n, count(*) AS total FROM timeseries_raw WHERE entity_type = $1 AND aspect = $2`, ['dataset', 'datasetProfile', BOUNDARY]),
    );
    rawCount.push(c);
  }

  // The truncation itself: svc until its task completes, then the raw DELETE.
  const [svcMs, task] = await time(async () => {
    const r = (await call(server.base, 'POST', '/gms/operations?action=truncateTimeseriesAspect', {
      entityType: 'dataset',
      aspect: 'datasetProfile',
      endTimeMillis: BOUNDARY,
      dryRun: false,
      batchSize: BATCH,
    })) as { value: string };
    for (;;) {
      const status = JSON.parse(((await call(server.base, 'POST', '/gms/operations?action=getEsTaskStatus', { task: r.value })) as { value: string }).value);
      if (status.completed) return status as { status: { deleted: number } };
      await new Promise((res) => setTimeout(res, 20));
    }
  });
  const [rawMs, rawResult] = await time(() => raw.query('DELETE FROM timeseries_raw WHERE entity_type = $1 AND aspect = $2 AND timestamp_millis <= $3', ['dataset', 'datasetProfile', BOUNDARY]));
  const [left] = (await svcSql.query('SELECT count(*)::int AS n FROM timeseries_entries WHERE index_name = $1', [INDEX])).rows as { n: number }[];
  if (task.status.deleted !== N / 2 || rawResult.rowCount !== N / 2 || left!.n !== N / 2) {
    throw new Error(`not the same work: svc deleted ${task.status.deleted} (left ${left!.n}), raw ${rawResult.rowCount}`);
  }

  console.log(`\nTruncation on Postgres (${pgc.label}): ${N} entries of one aspect, ${N / 2} at or before the boundary, batches of ${BATCH}`);
  console.log(`dry-run message: ${message}`);
  console.log('| pass | svc | raw SQL | svc / raw |');
  console.log('|---|---|---|---|');
  console.log(`| dry run (${ITERATIONS} alternating calls, medians; raw: the count) | ${median(dry).toFixed(1)} ms | ${median(rawCount).toFixed(1)} ms | ${(median(dry) / median(rawCount)).toFixed(2)} |`);
  console.log(`| truncation (svc: queued → task completed; raw: one DELETE) | ${(svcMs / 1000).toFixed(2)} s | ${(rawMs / 1000).toFixed(2)} s | ${(svcMs / rawMs).toFixed(2)} |`);
} finally {
  await svcSql.end();
  await raw.end();
  await server.stop();
  await pgc.stop();
}

/**
 * Time series truncation, svc against the raw engine underneath, in one run:
 *
 * - Postgres: svc's truncateTimeseriesAspect over 1,000,000 entries (half of them at or before the
 *   boundary) against a raw SQL `DELETE` of the same entries from a plain table of the same rows and
 *   indexes (svc's former, unpartitioned layout) on the same Postgres; the dry run against the raw count.
 * - OpenSearch: the same entries shipped by svc's outbox into its index (against a raw `_bulk` load of
 *   the same documents into a plain index), then svc's truncation (a delete-by-query task) against a
 *   raw `_delete_by_query` of the same entries on the same node; the dry run against the raw counts.
 *
 *   npm run bench:truncation -- [--entries 1000000] [--batch-size 10000] [--iterations 20] [--only postgres|opensearch] [--rounds 2]
 *                               [--against <a checkout of another commit, installed>]
 *
 * On OpenSearch the second of the two deletes on a node runs faster, whichever it is (about 8 s against
 * 10-12 s for the first on 2 cores): the OpenSearch half runs `--rounds` rounds, each on a fresh load,
 * svc's delete first in odd rounds and the raw one first in even rounds, and reports each round and
 * the sum of all.
 *
 * svc's side: the truncation is queued with dryRun=false and timed until its task completes (polled
 * every 20 ms on Postgres, 100 ms on OpenSearch).
 *
 * With `--against`, that checkout's server (the baseline, run from its TypeScript) is measured beside
 * this tree's, over HTTP as this tree's is, on a database (and index prefix) of its own loaded with the
 * same entries: on Postgres, the dry runs alternate this tree's call, the baseline's and the raw count,
 * and the truncations run once each, this tree's, the raw DELETE, then the baseline's; on OpenSearch,
 * each round runs this tree's round (load, svc's and the raw delete), then the baseline's. A last table
 * compares the two trees' times.
 *
 * OpenSearch is OPENSEARCH_URL, or one the harness provisions and starts with a heap of 2 GB.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Client } from '@opensearch-project/opensearch';
import {
  alternateTrees,
  benchOpenSearch,
  benchPostgres,
  benchTrees,
  call,
  createDb,
  printAbTable,
  startBenchServer,
  startTreeServers,
  stopTreeServers,
  type AbRow,
  type BenchPostgres,
  type BenchTree,
} from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000000' },
    'batch-size': { type: 'string', default: '10000' },
    iterations: { type: 'string', default: '20' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    against: { type: 'string' },
  },
});
const N = Number(args.entries);
const BATCH = Number(args['batch-size']);
const ITERATIONS = Number(args.iterations);
const ROUNDS = Number(args.rounds);
/** The JVM heap of the OpenSearch the harness starts (not used with OPENSEARCH_URL). */
const OPENSEARCH_HEAP = '2g';
const INDEX = 'dataset_datasetprofileaspect_v1';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:bench,db.profiled,PROD)';
const START = Date.UTC(2024, 0, 1);
const STEP = 10_000;
/** Inclusive: exactly half of the entries are at or before it. */
const BOUNDARY = START + (N / 2 - 1) * STEP;

const rows = (table: string, indexColumn: boolean, keyed = false) => `
  INSERT INTO ${table} (${indexColumn ? 'index_name, ' : ''}entity_type, aspect, urn, timestamp_millis, metadata, created_by${keyed ? ', entry_key' : ''})
  SELECT ${indexColumn ? `'${INDEX}', ` : ''}'dataset', 'datasetProfile', $1, $2::bigint + i * $3::bigint,
         json_build_object('timestampMillis', $2::bigint + i * $3::bigint, 'rowCount', i, 'columnCount', 12), 'urn:li:corpuser:bench'${keyed ? ', gen_random_uuid()' : ''}
    FROM generate_series(0, $4::int - 1) AS i`;

/**
 * svc's INSERT of the entries, each with a key of its own (entries of distinct times) where the tree's
 * table has entry keys: a tree compared against may have none.
 */
async function svcRows(db: pg.Client): Promise<string> {
  const [row] = (await db.query("SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'timeseries_entries'::regclass AND attname = 'entry_key') AS keyed")).rows as { keyed: boolean }[];
  return rows('timeseries_entries', true, row!.keyed);
}

async function time<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await f();
  return [performance.now() - t, r];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The entries a truncation at BOUNDARY deletes, as an OpenSearch query. */
const OLDER = { range: { timestampMillis: { lte: BOUNDARY } } };

const dryRun = (base: string) => call(base, 'POST', '/gms/operations?action=truncateTimeseriesAspect', { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: BOUNDARY });

/**
 * svc's truncation, from the request to its task's `completed`, polled every `pollMs` (20 ms for a
 * sub-second run; 100 ms for OpenSearch's runs of seconds; whether that polling takes CPU the node
 * would delete with is not settled, see docs/decisions/0029-opensearch-truncation-heap.md).
 */
async function truncateAndWait(base: string, pollMs: number): Promise<{ status: { deleted: number }; runTimeNanos?: number }> {
  const r = (await call(base, 'POST', '/gms/operations?action=truncateTimeseriesAspect', {
    entityType: 'dataset',
    aspect: 'datasetProfile',
    endTimeMillis: BOUNDARY,
    dryRun: false,
    batchSize: BATCH,
  })) as { value: string };
  for (;;) {
    const status = JSON.parse(((await call(base, 'POST', '/gms/operations?action=getEsTaskStatus', { task: r.value })) as { value: string }).value);
    if (status.completed) return status;
    await new Promise((res) => setTimeout(res, pollMs));
  }
}

interface DryRuns {
  /** Times in ms of each server's dry runs (one list per server), and of the raw count. */
  dry: number[][];
  rawCount: number[];
  /** The first server's answer. */
  message: string;
}

/** Dry runs of svc (of each server in turn) against the raw count they stand for, alternating. */
async function dryRuns(bases: string[], rawCount: () => Promise<unknown>): Promise<DryRuns> {
  const out: DryRuns = { dry: bases.map(() => []), rawCount: [], message: '' };
  for (let k = 0; k < ITERATIONS; k++) {
    for (const [i, base] of bases.entries()) {
      const [d, r] = await time(() => dryRun(base));
      out.dry[i]!.push(d);
      if (i === 0) out.message = (r as { value: string }).value;
    }
    out.rawCount.push((await time(rawCount))[0]);
  }
  return out;
}

/** The monthly partitions of svc's entries (made before they are written, as the write path does). */
async function makePartitions(svcSql: pg.Client): Promise<void> {
  await svcSql.query(
    `SELECT svc_timeseries_partition($1, m) FROM (SELECT DISTINCT ON (date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) t AS m
       FROM (SELECT $2::bigint + i * $3::bigint AS t FROM generate_series(0, $4::int - 1) AS i) x ORDER BY date_trunc('month', to_timestamp(t / 1000.0), 'UTC')) months`,
    [INDEX, START, STEP, N],
  );
}

async function onPostgres(pgc: BenchPostgres, trees: BenchTree[]): Promise<void> {
  const servers = await startTreeServers(pgc.adminUrl, 8, trees);
  const svcSql = servers.map((t) => new pg.Client({ connectionString: t.svcDb }));
  // The raw side: one plain table, on this tree's raw database.
  const raw = new pg.Client({ connectionString: servers[0]!.rawDb });
  try {
    for (const c of [...svcSql, raw]) await c.connect();
    // svc: the dataset through the API, then the entries into their monthly partitions (each tree's).
    for (const [i, t] of servers.entries()) {
      await call(t.server.base, 'POST', `/openapi/v3/entity/dataset/${encodeURIComponent(URN)}/status?createIfNotExists=false`, { value: { removed: false } });
      await makePartitions(svcSql[i]!);
      await svcSql[i]!.query(await svcRows(svcSql[i]!), [URN, START, STEP, N]);
    }
    // Raw: the same rows in one plain table with the same indexes.
    await raw.query(`CREATE TABLE timeseries_raw (
        id bigserial PRIMARY KEY, entity_type text NOT NULL, aspect text NOT NULL, urn text COLLATE "C" NOT NULL, timestamp_millis bigint NOT NULL,
        metadata json NOT NULL, system_metadata jsonb NOT NULL DEFAULT '{}', created_on timestamptz NOT NULL DEFAULT now(), created_by text NOT NULL)`);
    await raw.query('CREATE INDEX ON timeseries_raw (entity_type, aspect, timestamp_millis)');
    await raw.query('CREATE INDEX ON timeseries_raw (urn, aspect, timestamp_millis DESC)');
    await raw.query(rows('timeseries_raw', false), [URN, START, STEP, N]);
    for (const c of [...svcSql, raw]) {
      await c.query('VACUUM ANALYZE');
      await c.query('CHECKPOINT');
    }

    const dry = await dryRuns(
      servers.map((t) => t.server.base),
      () => raw.query(`SELECT count(*) FILTER (WHERE timestamp_millis <= $3) AS n, count(*) AS total FROM timeseries_raw WHERE entity_type = $1 AND aspect = $2`, ['dataset', 'datasetProfile', BOUNDARY]),
    );

    // The truncation itself: svc until its task completes, then the raw DELETE (then the baseline's truncation).
    const svcMs: number[] = [];
    const [ms, task] = await time(() => truncateAndWait(servers[0]!.server.base, 20));
    svcMs.push(ms);
    const [rawMs, rawResult] = await time(() => raw.query('DELETE FROM timeseries_raw WHERE entity_type = $1 AND aspect = $2 AND timestamp_millis <= $3', ['dataset', 'datasetProfile', BOUNDARY]));
    const tasks = [task];
    for (const t of servers.slice(1)) {
      const [ms, task] = await time(() => truncateAndWait(t.server.base, 20));
      svcMs.push(ms);
      tasks.push(task);
    }
    for (const [i, task] of tasks.entries()) {
      const [left] = (await svcSql[i]!.query('SELECT count(*)::int AS n FROM timeseries_entries WHERE index_name = $1', [INDEX])).rows as { n: number }[];
      if (task.status.deleted !== N / 2 || rawResult.rowCount !== N / 2 || left!.n !== N / 2) {
        throw new Error(`not the same work: svc (${servers[i]!.label}) deleted ${task.status.deleted} (left ${left!.n}), raw ${rawResult.rowCount}`);
      }
    }

    const title = `Truncation on Postgres (${pgc.label}): ${N} entries of one aspect, ${N / 2} at or before the boundary, batches of ${BATCH}`;
    for (const [i, t] of servers.entries()) {
      console.log(`\n${title}${servers.length > 1 ? `; ${t.label} (${t.root})` : ''}`);
      if (i === 0) console.log(`dry-run message: ${dry.message}`);
      console.log('| pass | svc | raw SQL | svc / raw |');
      console.log('|---|---|---|---|');
      console.log(`| dry run (${ITERATIONS} alternating calls, medians; raw: the count) | ${median(dry.dry[i]!).toFixed(1)} ms | ${median(dry.rawCount).toFixed(1)} ms | ${(median(dry.dry[i]!) / median(dry.rawCount)).toFixed(2)} |`);
      console.log(`| truncation (svc: queued → task completed; raw: one DELETE) | ${(svcMs[i]! / 1000).toFixed(2)} s | ${(rawMs / 1000).toFixed(2)} s | ${(svcMs[i]! / rawMs).toFixed(2)} |`);
      console.log(`| the task's own time (created → finished; raw: the DELETE) | ${((tasks[i]!.runTimeNanos ?? NaN) / 1e9).toFixed(3)} s | ${(rawMs / 1000).toFixed(3)} s | ${((tasks[i]!.runTimeNanos ?? NaN) / 1e6 / rawMs).toFixed(2)} |`);
    }
    if (servers.length > 1) {
      printAbTable(title, [
        { pass: `dry run (${ITERATIONS} alternating calls, medians)`, unit: 'ms', today: median(dry.dry[0]!), baseline: median(dry.dry[1]!) },
        { pass: "truncation (once each: this tree's, the raw DELETE, the baseline's)", unit: 's', today: svcMs[0]! / 1000, baseline: svcMs[1]! / 1000 },
        // Without the request and the polling (which adds up to 20 ms): the task's own created → finished.
        { pass: "the same, the task's own time (its status's runTimeNanos: created → finished)", unit: 's', today: (tasks[0]!.runTimeNanos ?? NaN) / 1e9, baseline: (tasks[1]!.runTimeNanos ?? NaN) / 1e9 },
      ]);
    }
  } finally {
    for (const c of [...svcSql, raw]) await c.end().catch(() => undefined);
    await stopTreeServers(servers);
  }
}

interface OpenSearchRound {
  svcFirst: boolean;
  shipMs: number;
  bulkMs: number;
  svcMs: number;
  rawMs: number;
  /** OpenSearch's own time of each delete: the task's running time (svc's) and the response's `took` (raw). */
  svcEngineMs: number;
  rawEngineMs: number;
  dry?: DryRuns;
}

/**
 * One round on OpenSearch, on a fresh load: svc's entries shipped through its outbox into its index
 * (a new server, database and index prefix), the same documents bulk-loaded raw into a plain index,
 * then both deletes, svc's first or the raw one first; svc is `tree`'s server.
 */
async function openSearchRound(pgc: BenchPostgres, os: { url: string }, client: Client, tree: BenchTree, svcFirst: boolean, withDryRuns: boolean): Promise<OpenSearchRound> {
  const prefix = `bench${Date.now()}`;
  const svcDb = await createDb(pgc.adminUrl);
  const server = await startBenchServer(svcDb, 8, { SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: os.url, INDEX_PREFIX: prefix, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0' }, tree.root);
  const svcSql = new pg.Client({ connectionString: svcDb });
  await svcSql.connect();
  const alias = `${prefix}_${INDEX}`;
  const rawIndex = `${prefix}_raw_timeseries`;
  try {
    // svc: the entries committed to its outbox, timed until shipped to OpenSearch.
    await call(server.base, 'POST', `/openapi/v3/entity/dataset/${encodeURIComponent(URN)}/status?createIfNotExists=false`, { value: { removed: false } });
    await makePartitions(svcSql);
    const insert = await svcRows(svcSql);
    const [shipMs] = await time(async () => {
      await svcSql.query(insert, [URN, START, STEP, N]);
      for (;;) {
        const [r] = (await svcSql.query('SELECT count(*)::int AS n FROM timeseries_entries')).rows as { n: number }[];
        if (r!.n === 0) return;
        await new Promise((res) => setTimeout(res, 100));
      }
    });
    await svcSql.query('VACUUM ANALYZE timeseries_entries');
    // Raw: the same documents, bulk-loaded in batches of the outbox's size into an index of the same mappings.
    const mappings = Object.values((await client.indices.getMapping({ index: alias })).body as Record<string, { mappings: unknown }>)[0]!.mappings;
    await client.indices.create({ index: rawIndex, body: { settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '500ms' }, mappings } as never });
    const [bulkMs] = await time(() => bulkLoad(client, rawIndex, N));
    await client.indices.refresh({ index: `${alias},${rawIndex}` });
    await client.indices.forcemerge({ index: `${alias},${rawIndex}`, max_num_segments: 1 });
    // Measure the steady state, not the checkpoint and flushes that follow a load.
    await svcSql.query('CHECKPOINT');
    await client.indices.flush({ index: `${alias},${rawIndex}` });
    await new Promise((res) => setTimeout(res, 5000));

    const dry = withDryRuns
      ? await dryRuns([server.base], () => client.search({ index: rawIndex, body: { size: 0, track_total_hits: true, aggs: { old: { filter: OLDER } } } as never }))
      : undefined;

    const rawDelete = () =>
      time(() => client.deleteByQuery({ index: rawIndex, conflicts: 'proceed', refresh: true, scroll_size: BATCH, body: { query: OLDER } as never }));
    const early = svcFirst ? undefined : await rawDelete();
    const [svcMs, task] = await time(() => truncateAndWait(server.base, 100));
    const [rawMs, rawResult] = early ?? (await rawDelete());
    const left = (await client.count({ index: alias })).body.count;
    const rawDeleted = (rawResult.body as { deleted?: number }).deleted;
    if (task.status.deleted !== N / 2 || rawDeleted !== N / 2 || left !== N / 2) {
      throw new Error(`not the same work: svc deleted ${task.status.deleted} (left ${left}), raw ${rawDeleted}`);
    }
    return { svcFirst, shipMs, bulkMs, svcMs, rawMs, svcEngineMs: (task.runTimeNanos ?? NaN) / 1e6, rawEngineMs: Number((rawResult.body as { took?: number }).took), dry };
  } finally {
    await svcSql.end();
    await server.stop();
    await client.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true }).catch(() => undefined);
  }
}

/** The entries svc holds (the same documents as its outbox ships), bulk-loaded 5,000 at a time (the outbox's batch) into a plain index. */
async function bulkLoad(client: Client, index: string, n: number): Promise<void> {
  for (let from = 0; from < n; from += 5000) {
    const body: unknown[] = [];
    for (let i = from; i < Math.min(n, from + 5000); i++) {
      const t = START + i * STEP;
      body.push(
        { index: { _index: index, _id: String(i + 1) } },
        { urn: URN, timestampMillis: t, '@timestamp': t, event: { timestampMillis: t, rowCount: i, columnCount: 12 }, systemMetadata: {}, entryId: i + 1, createdOn: t, createdBy: 'urn:li:corpuser:bench' },
      );
    }
    const res = await client.bulk({ body: body as never, refresh: true });
    if (res.body.errors) throw new Error('raw bulk load failed');
  }
}

async function onOpenSearch(pgc: BenchPostgres, trees: BenchTree[]): Promise<void> {
  // A node of 2 GB of heap: on the test nodes' 512 MB, a delete-by-query of half a million documents
  // runs against the parent circuit breaker (a task-status request was refused with "Data too large")
  // and the node's garbage collection is what the runs measure, whoever sends the delete.
  const os = await benchOpenSearch(OPENSEARCH_HEAP);
  const client = new Client({ node: os.url });
  try {
    // Warm-up: a node's first delete-by-query of this size runs slower than the next ones (about 10 s
    // against 7 s for half of 1,000,000 on 2 cores, whoever sends it: its code paths are still being
    // compiled), and its first task run in the background (as svc's are) creates the `.tasks` index its
    // result is stored in. One of each on a scratch index of the same size first, so that no timed run
    // pays for them.
    const warmIndex = `bench${Date.now()}_warmup`;
    await client.indices.create({ index: warmIndex, body: { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: { properties: { timestampMillis: { type: 'long' }, urn: { type: 'keyword' } } } } as never });
    await bulkLoad(client, warmIndex, N);
    await client.deleteByQuery({ index: warmIndex, conflicts: 'proceed', refresh: true, scroll_size: BATCH, body: { query: OLDER } as never });
    const background = await client.deleteByQuery({ index: warmIndex, wait_for_completion: false, conflicts: 'proceed', refresh: true, body: { query: { match_all: {} } } as never });
    for (;;) {
      const t = await client.tasks.get({ task_id: String((background.body as { task?: unknown }).task) });
      if ((t.body as { completed?: boolean }).completed) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    await client.indices.delete({ index: warmIndex });

    // The second of two deletes on a node runs faster, whichever it is: the rounds alternate which goes
    // first. With a baseline, each round runs this tree's, then the baseline's.
    const byTree = await alternateTrees(trees, ROUNDS, (tree, k) => openSearchRound(pgc, os, client, tree, k % 2 === 0, k === 0));
    const title = `Truncation on OpenSearch (${os.url.includes('127.0.0.1') ? 'one local node' : 'OPENSEARCH_URL'}): ${N} entries of one aspect, ${N / 2} at or before the boundary, batches of ${BATCH}, ${ROUNDS} rounds on fresh loads`;
    for (const [i, rounds] of byTree.entries()) {
      const dry = rounds[0]!.dry!;
      const sum = (f: (r: OpenSearchRound) => number) => rounds.reduce((a, r) => a + f(r), 0);
      console.log(`\n${title}${trees.length > 1 ? `; ${trees[i]!.label} (${trees[i]!.root})` : ''}`);
      console.log(`dry-run message: ${dry.message}`);
      console.log('| pass | svc | raw OpenSearch | svc / raw | OpenSearch\'s own time of the delete: svc\'s task / raw `took` |');
      console.log('|---|---|---|---|---|');
      console.log(`| loading (svc: committed to the outbox → shipped; raw: _bulk of 5,000; all rounds) | ${(sum((r) => r.shipMs) / 1000).toFixed(1)} s | ${(sum((r) => r.bulkMs) / 1000).toFixed(1)} s | ${(sum((r) => r.shipMs) / sum((r) => r.bulkMs)).toFixed(2)} |`);
      console.log(`| dry run (${ITERATIONS} alternating calls, medians; raw: the two counts) | ${median(dry.dry[0]!).toFixed(1)} ms | ${median(dry.rawCount).toFixed(1)} ms | ${(median(dry.dry[0]!) / median(dry.rawCount)).toFixed(2)} |`);
      for (const [k, r] of rounds.entries()) {
        console.log(
          `| truncation, round ${k + 1} (${r.svcFirst ? 'svc' : 'raw'} first; svc: queued → task completed; raw: _delete_by_query, waiting) | ${(r.svcMs / 1000).toFixed(2)} s | ${(r.rawMs / 1000).toFixed(2)} s | ${(r.svcMs / r.rawMs).toFixed(2)} | ${(r.svcEngineMs / 1000).toFixed(2)} s / ${(r.rawEngineMs / 1000).toFixed(2)} s |`,
        );
      }
      console.log(`| truncation, all rounds | ${(sum((r) => r.svcMs) / 1000).toFixed(2)} s | ${(sum((r) => r.rawMs) / 1000).toFixed(2)} s | ${(sum((r) => r.svcMs) / sum((r) => r.rawMs)).toFixed(2)} |`);
    }
    if (trees.length > 1) {
      const [today, base] = [byTree[0]!, byTree[1]!];
      const total = (rounds: OpenSearchRound[], f: (r: OpenSearchRound) => number) => rounds.reduce((a, r) => a + f(r), 0) / 1000;
      const perRound = (f: (r: OpenSearchRound) => number) => today.map((r, k) => ({ today: f(r) / 1000, baseline: f(base[k]!) / 1000 }));
      const rows: AbRow[] = [
        { pass: 'loading: committed to the outbox → shipped (all rounds)', unit: 's', today: total(today, (r) => r.shipMs), baseline: total(base, (r) => r.shipMs), rounds: perRound((r) => r.shipMs) },
        { pass: `dry run (${ITERATIONS} calls against the raw counts, medians; round 1)`, unit: 'ms', today: median(today[0]!.dry!.dry[0]!), baseline: median(base[0]!.dry!.dry[0]!) },
        { pass: 'truncation: queued → task completed (all rounds)', unit: 's', today: total(today, (r) => r.svcMs), baseline: total(base, (r) => r.svcMs), rounds: perRound((r) => r.svcMs) },
        { pass: "(the raw _delete_by_query beside it)", unit: 's', today: total(today, (r) => r.rawMs), baseline: total(base, (r) => r.rawMs), rounds: perRound((r) => r.rawMs) },
      ];
      printAbTable(title, rows);
    }
  } finally {
    await client.close();
    await os.stop();
  }
}

const trees = benchTrees(args.against);
const pgc = await benchPostgres();
try {
  if (args.only !== 'opensearch') await onPostgres(pgc, trees);
  if (args.only !== 'postgres') await onOpenSearch(pgc, trees);
} finally {
  await pgc.stop();
}

/**
 * Which entities name a given one (the reverse lookups of lineage and of a hard delete's references:
 * aspectStore.ts, latestMentioning), on a catalog of N datasets, in one run:
 *
 * - svc's lookup (through the index of mentioned URNs, R__svc_mentions.sql) against the same query sent
 *   raw with `pg`, and against the scan it replaced (the URN looked for in the stored text);
 * - what the index costs the writes of the aspects it covers: the same rows inserted, then every
 *   `structuredProperties` row updated, in a database with the index and in one without it (rounds
 *   alternate the two).
 *
 * Rows are made in SQL, as svc stores them: each dataset its key and two structured property values, one
 * in three an upstream (the dataset a third of its number).
 *
 *   npm run bench:mentions -- [--entities 100000] [--lookups 15] [--rounds 2]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { latestMentioning } from '../../server/src/entities/aspectStore.ts';
import { benchPostgres, createDb, startBenchServer } from './benchSupport.ts';

const { values: args } = parseArgs({ options: { entities: { type: 'string', default: '100000' }, lookups: { type: 'string', default: '15' }, rounds: { type: 'string', default: '2' } } });
const N = Number(args.entities);
const LOOKUPS = Number(args.lookups);
const ROUNDS = Number(args.rounds);

const urn = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,db.t${i},PROD)`;
const REFERRING = ['upstreamLineage', 'dataJobInfo', 'dataHubExecutionRequestInput', 'structuredProperties'];
const LINEAGE_HOLDERS = ['upstreamLineage', 'dataJobInputOutput', 'chartInfo', 'dashboardInfo'];

const INSERT = `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
  SELECT 'urn:li:dataset:(urn:li:dataPlatform:hive,db.t' || i || ',PROD)', a, 0,
    CASE a WHEN 'structuredProperties' THEN json_build_object('properties', json_build_array(
             json_build_object('propertyUrn', 'urn:li:structuredProperty:io.acryl.retention', 'values', json_build_array(json_build_object('double', i % 365))),
             json_build_object('propertyUrn', 'urn:li:structuredProperty:io.acryl.steward', 'values', json_build_array(json_build_object('string', 'urn:li:corpuser:u' || (i % 50))))))
           WHEN 'upstreamLineage' THEN json_build_object('upstreams', json_build_array(json_build_object('dataset', 'urn:li:dataset:(urn:li:dataPlatform:hive,db.t' || (i / 3) || ',PROD)',
             'type', 'TRANSFORMED', 'auditStamp', json_build_object('time', 0, 'actor', 'urn:li:corpuser:x'))))
           ELSE json_build_object('platform', 'urn:li:dataPlatform:hive', 'name', 'db.t' || i, 'origin', 'PROD') END,
    '{}'::jsonb, 'urn:li:corpuser:bench'
  FROM generate_series(1, $1::int) i CROSS JOIN unnest(ARRAY['datasetKey', 'structuredProperties', 'upstreamLineage']) a
  WHERE a <> 'upstreamLineage' OR i % 3 = 0`;
const UPDATE = `UPDATE aspects SET metadata = json_build_object('properties', json_build_array(json_build_object('propertyUrn', 'urn:li:structuredProperty:io.acryl.steward',
  'values', json_build_array(json_build_object('string', 'urn:li:corpuser:v' || length(urn) % 7))))) WHERE aspect = 'structuredProperties' AND version = 0`;
/** The lookup as it was before the index: the URN as a JSON string in the stored text. */
const SCAN = 'SELECT urn, aspect FROM aspects WHERE aspect = ANY($1) AND version = 0 AND strpos(metadata::text, $2) > 0 ORDER BY urn, aspect';
/** latestMentioning's query, sent raw. */
const RAW = `SELECT urn, aspect FROM aspects WHERE aspect = ANY($1) AND version = 0 AND svc_mentioning_aspect(aspect)
  AND svc_mentioned_urns(metadata) @> ARRAY[$2::text] ORDER BY urn, aspect`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

const pgc = await benchPostgres();
try {
  // Two databases with svc's schema (its server run once to migrate them): one keeps the index, one drops it.
  const dbs = { index: await createDb(pgc.adminUrl), scan: await createDb(pgc.adminUrl) };
  for (const db of Object.values(dbs)) await (await startBenchServer(db, 2)).stop();
  const pools = { index: new pg.Pool({ connectionString: dbs.index, max: 2 }), scan: new pg.Pool({ connectionString: dbs.scan, max: 2 }) };
  for (const pool of Object.values(pools)) pool.on('error', () => undefined);
  await pools.scan.query('DROP INDEX aspects_mentions');

  const writes: Record<'index' | 'scan', { insert: number[]; update: number[] }> = { index: { insert: [], update: [] }, scan: { insert: [], update: [] } };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['index', 'scan'] as const) : (['scan', 'index'] as const)) {
      await pools[side].query("DELETE FROM aspects WHERE urn LIKE 'urn:li:dataset:%'");
      await pools[side].query('VACUUM aspects');
      writes[side].insert.push(await seconds(() => pools[side].query(INSERT, [N])));
      writes[side].update.push(await seconds(() => pools[side].query(UPDATE)));
    }
  }
  for (const pool of Object.values(pools)) await pool.query('VACUUM ANALYZE aspects');

  const lookups: Record<string, number[]> = { svc: [], raw: [], scan: [] };
  for (const [label, aspects] of [['references', REFERRING], ['lineage holders', LINEAGE_HOLDERS]] as const) {
    const times: Record<string, number[]> = { svc: [], raw: [], scan: [] };
    for (let k = 0; k < LOOKUPS; k++) {
      const target = urn(1 + ((k * 7919) % N));
      times.svc!.push(await seconds(() => latestMentioning(pools.index, aspects, target)));
      times.raw!.push(await seconds(() => pools.index.query(RAW, [aspects, target])));
      times.scan!.push(await seconds(() => pools.scan.query(SCAN, [aspects, JSON.stringify(target)])));
      const [found, scanned] = await Promise.all([latestMentioning(pools.index, aspects, target), pools.scan.query(SCAN, [aspects, JSON.stringify(target)])]);
      if (JSON.stringify(found) !== JSON.stringify(scanned.rows)) throw new Error(`${label} of ${target}: the index found ${JSON.stringify(found)}, the scan ${JSON.stringify(scanned.rows)}`);
    }
    for (const k of Object.keys(lookups)) lookups[k]!.push(median(times[k]!));
    console.log(`${label}: svc ${(median(times.svc!) * 1000).toFixed(1)} ms, raw ${(median(times.raw!) * 1000).toFixed(1)} ms, the scan before ${(median(times.scan!) * 1000).toFixed(1)} ms (medians of ${LOOKUPS})`);
  }

  const rows = Number((await pools.index.query<{ n: string }>("SELECT count(*) AS n FROM aspects WHERE urn LIKE 'urn:li:dataset:%'")).rows[0]!.n);
  console.log(`\nmentions: ${N} datasets (${rows} rows), Postgres ${pgc.label}`);
  console.log('| pass | svc | raw / before | ratio |');
  console.log('|---|---|---|---|');
  const [refs, holders] = [0, 1];
  for (const [i, label] of [[refs, 'references of a dataset'], [holders, 'lineage holders naming a dataset']] as const) {
    console.log(`| ${label}: svc / raw query (ms) | ${(lookups.svc![i]! * 1000).toFixed(1)} | ${(lookups.raw![i]! * 1000).toFixed(1)} | ${(lookups.raw![i]! / lookups.svc![i]!).toFixed(2)} |`);
    console.log(`| ${label}: index / the scan before (ms) | ${(lookups.svc![i]! * 1000).toFixed(1)} | ${(lookups.scan![i]! * 1000).toFixed(1)} | ${(lookups.scan![i]! / lookups.svc![i]!).toFixed(1)}× faster |`);
  }
  for (const pass of ['insert', 'update'] as const) {
    const [a, b] = [median(writes.index[pass]), median(writes.scan[pass])];
    const what = pass === 'insert' ? `insert of the ${rows} rows` : 'update of every structuredProperties row';
    console.log(`| ${what}, with the index / without (s, median of ${ROUNDS}) | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)} |`);
  }
  for (const pool of Object.values(pools)) await pool.end();
} finally {
  await pgc.stop();
}

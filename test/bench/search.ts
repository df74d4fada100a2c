/**
 * Search on structured properties, both backends, against the same queries sent raw to the engine
 * underneath (SQL to Postgres on svc's search tables, query DSL to OpenSearch on svc's index).
 *
 *   npm run bench:search -- [--entities 100000] [--iterations 200] [--write-seconds 10] [--write-rate 500]
 *                          [--against <a checkout of another commit, installed>] [--baseline-first]
 *
 * 1. Loads N datasets with 5 structured properties each (through the catalog, every rule checked),
 *    indexes them in Postgres (the outbox) and in OpenSearch (as `system-update --restore-indices`).
 * 2. Reads: a range, an exists and an equality query (a page of 10, its entities read with their
 *    structured properties: what `GET /openapi/v3/entity/dataset?query=` does) and a 3-facet
 *    aggregation, each through the catalog's search service and raw, alternating one svc call and one
 *    raw call; reports medians and the ratio svc / raw per backend.
 * 3. Write-to-visible: writes at a fixed rate (one property value per write, a new one each time)
 *    while a watcher searches for the written values every 10 ms; reports p50 / p99 of the time from a
 *    write's commit to the first search that finds it, per backend (the watcher's interval included).
 *
 * With `--against`, the baseline's catalog is measured beside this tree's: the bench imports that
 * checkout's server/src/catalog.ts, config.ts and auth/authorize.ts (its TypeScript under tsx, as this
 * tree's own modules here), gives it a database and index prefix of its own on the same Postgres and
 * OpenSearch and loads the same datasets into it (after this tree's; load and indexing times are shown
 * side by side, once each). Reads alternate this tree's call, the baseline's, then the raw ones (the
 * raw side stays on this tree's database and index); write-to-visible runs this tree's, then the
 * baseline's, per backend. A last table compares the two trees' times.
 *
 * Postgres: DATABASE_URL, or Debian's PostgreSQL 15 through the harness. OpenSearch: OPENSEARCH_URL,
 * or one started through the harness (after `bash test/infra/provision.sh opensearch`).
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@opensearch-project/opensearch';
import pg from 'pg';
import pino from 'pino';
import type { Principal } from '../../server/src/auth/authorize.ts';
import type { Catalog, createCatalog } from '../../server/src/catalog.ts';
import type { loadConfig } from '../../server/src/config.ts';
import { benchOpenSearch, benchPostgres, benchTrees, createDb, printAbTable, type AbRow, type BenchTree } from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    iterations: { type: 'string', default: '200' },
    'write-seconds': { type: 'string', default: '10' },
    'write-rate': { type: 'string', default: '500' },
    against: { type: 'string' },
    'baseline-first': { type: 'boolean', default: false },
  },
});
const N = Number(args.entities);
const ITERATIONS = Number(args.iterations);
const WRITE_SECONDS = Number(args['write-seconds']);
const WRITE_RATE = Number(args['write-rate']);

const P = (name: string) => `urn:li:structuredProperty:bench.${name}`;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:bench,db.t${String(i).padStart(6, '0')},PROD)`;
const DEFINITIONS = [
  { name: 'retention', valueType: 'urn:li:dataType:svc.number' },
  { name: 'tier', valueType: 'urn:li:dataType:svc.string' },
  { name: 'owner', valueType: 'urn:li:dataType:svc.string' },
  { name: 'region', valueType: 'urn:li:dataType:svc.string' },
  { name: 'domain', valueType: 'urn:li:dataType:svc.string' },
];
/** The 5 values of dataset i: retention 1–3650 days, 5 tiers, 100 owners, 10 regions, 40 domains. */
function valuesOf(i: number, retention = (i * 7919) % 3650 + 1) {
  return {
    properties: [
      { propertyUrn: P('retention'), values: [{ double: retention }] },
      { propertyUrn: P('tier'), values: [{ string: `tier-${i % 5}` }] },
      { propertyUrn: P('owner'), values: [{ string: `owner-${(i * 31) % 100}` }] },
      { propertyUrn: P('region'), values: [{ string: `region-${i % 10}` }] },
      { propertyUrn: P('domain'), values: [{ string: `domain-${(i * 13) % 40}` }] },
    ],
  };
}

const log = pino({ level: 'warn' });
const pgc = await benchPostgres();
const os = await benchOpenSearch();

/** A tree's catalog (its own modules), on a database, data directory and index prefix of its own. */
interface Side extends BenchTree {
  createCatalog: typeof createCatalog;
  loadConfig: typeof loadConfig;
  SYSTEM: Principal;
  databaseUrl: string;
  dataDir: string;
  prefix: string;
  /** Plain SQL on the side's database (VACUUM, the outbox refill; this tree's is the raw side's). */
  sql: pg.Pool;
  pgCatalog?: Catalog;
  osCatalog?: Catalog;
}

async function sideOf(tree: BenchTree, k: number): Promise<Side> {
  const load = (path: string) => import(pathToFileURL(join(tree.root, path)).href);
  const [catalog, config, authorize] = await Promise.all([load('server/src/catalog.ts'), load('server/src/config.ts'), load('server/src/auth/authorize.ts')]);
  const databaseUrl = await createDb(pgc.adminUrl);
  return {
    ...tree,
    createCatalog: catalog.createCatalog,
    loadConfig: config.loadConfig,
    SYSTEM: authorize.SYSTEM,
    databaseUrl,
    dataDir: mkdtempSync(join(tmpdir(), 'svc-bench-search-')),
    prefix: `bench${Date.now()}t${k}`,
    sql: new pg.Pool({ connectionString: databaseUrl, max: 4 }),
  };
}

const sides: Side[] = [];
for (const [k, tree] of benchTrees(args.against).entries()) sides.push(await sideOf(tree, k));
const ours = sides[0]!;

function catalogConfig(side: Side, backend: 'postgres' | 'opensearch') {
  return side.loadConfig({
    DATABASE_URL: side.databaseUrl,
    SVC_ADMIN_TOKEN: 'bench-token',
    SVC_DATA_DIR: side.dataDir,
    SVC_DB_POOL_SIZE: '16',
    SEARCH_BACKEND: backend,
    OPENSEARCH_URL: os.url,
    INDEX_PREFIX: side.prefix,
    ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0',
  });
}

const osClient = new Client({ node: os.url });
/** The raw side: this tree's database and index. */
const raw = ours.sql;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
}
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/** Alternates the calls (svc first, the baseline's next if any, then each raw one); returns the median milliseconds of each after a warm-up. */
async function compare(calls: (() => Promise<unknown>)[]): Promise<number[]> {
  for (let i = 0; i < 20; i++) for (const call of calls) await call();
  const times: number[][] = calls.map(() => []);
  for (let i = 0; i < ITERATIONS; i++) for (const [k, call] of calls.entries()) times[k]!.push(await timed(call));
  return times.map(median);
}

const RANGE = { q: 'structuredProperties.bench_retention:[100 TO 200]', field: 'structuredProperties.bench_retention', min: 100, max: 200 };
const EXISTS = { q: '_exists_:structuredProperties.bench_region', field: 'structuredProperties.bench_region' };
const EQUAL = { q: 'structuredProperties.bench_owner:owner-42', field: 'structuredProperties.bench_owner', value: 'owner-42' };
const FACETS = ['structuredProperties.bench_tier', 'structuredProperties.bench_region', 'structuredProperties.bench_domain'];

/** The raw SQL of a page of 10 (plus one, to know of a next page), as svc's search tables hold it. */
const sqlPage = (test: string) =>
  `SELECT d.urn FROM search_documents d WHERE d.entity_type = 'dataset' AND NOT d.removed
     AND d.urn IN (SELECT v.urn FROM search_values v WHERE v.entity_type = 'dataset' AND v.field = $1 AND ${test})
   ORDER BY d.urn LIMIT 11`;
const rawPg = {
  range: () => raw.query(sqlPage('v.num_value >= $2 AND v.num_value <= $3'), [RANGE.field, RANGE.min, RANGE.max]),
  exists: () => raw.query(sqlPage('true'), [EXISTS.field]),
  // As svc asks (search_values_by_string_prefix): the value's key (its first 256 characters), which is the value here.
  equal: () => raw.query(sqlPage('left(v.str_value, 256) = $2'), [EQUAL.field, EQUAL.value]),
  facets: () =>
    Promise.all(
      FACETS.map((f) =>
        raw.query(
          `SELECT v.str_value AS value, count(*) AS n FROM search_values v JOIN search_documents d ON d.entity_type = v.entity_type AND d.urn = v.urn
            WHERE v.field = $1 AND v.entity_type = 'dataset' AND NOT d.removed GROUP BY v.str_value ORDER BY n DESC, v.str_value LIMIT 20`,
          [f],
        ),
      ),
    ),
};
/**
 * The page's entities with their structured properties, read raw from the primary store: what svc
 * answers besides the URNs (in both modes the entities are read from Postgres, as DataHub does).
 */
const readPage = (urns: string[]) =>
  raw.query("SELECT urn, aspect, metadata FROM aspects WHERE urn = ANY($1) AND version = 0 AND aspect IN ('datasetKey', 'structuredProperties')", [urns.slice(0, 10)]);
const withRead = (page: () => Promise<{ rows: { urn: string }[] }>) => async () => readPage((await page()).rows.map((r) => r.urn));
const withReadOs = (page: () => Promise<{ body: { hits: { hits: { _id?: unknown }[] } } }>) => async () => readPage((await page()).body.hits.hits.map((h) => String(h._id)));
const aliasOf = (side: Side) => `${side.prefix}_datasetindex_v2`;
const alias = aliasOf(ours);
const dslPage = (q: unknown) =>
  osClient.search({ index: alias, body: { query: { bool: { filter: [q, { term: { removed: false } }] } }, sort: [{ urn: 'asc' }], size: 11, _source: false } as never });
const rawOs = {
  range: () => dslPage({ range: { [RANGE.field]: { gte: RANGE.min, lte: RANGE.max } } }),
  exists: () => dslPage({ exists: { field: EXISTS.field } }),
  equal: () => dslPage({ term: { [EQUAL.field]: EQUAL.value } }),
  facets: () =>
    osClient.search({
      index: alias,
      body: {
        query: { bool: { filter: [{ term: { removed: false } }] } },
        size: 0,
        aggs: Object.fromEntries(FACETS.map((f, i) => [`f${i}`, { terms: { field: f, size: 20, order: [{ _count: 'desc' }, { _key: 'asc' }] } }])),
      } as never,
    }),
};

function svcCalls(catalog: Catalog, SYSTEM: Principal) {
  const page = (query: string) => () => catalog.search.search(SYSTEM, { entityTypes: ['dataset'], query, count: 10, aspects: ['structuredProperties'] });
  return {
    range: page(RANGE.q),
    exists: page(EXISTS.q),
    equal: page(EQUAL.q),
    facets: () => catalog.search.aggregate(SYSTEM, { entityTypes: ['dataset'], facets: FACETS, maxAggValues: 20 }),
  };
}

/** Writes at WRITE_RATE for WRITE_SECONDS, a watcher finding each write; p50/p99 of write-to-visible. */
async function writeToVisible(catalog: Catalog, SYSTEM: Principal, round: number): Promise<{ writes: number; p50: number; p99: number; max: number }> {
  const base = 1_000_000 * (round + 1);
  const committed = new Map<number, number>();
  const visibleAfter: number[] = [];
  const total = WRITE_RATE * WRITE_SECONDS;
  let issued = 0;
  let failed: unknown;
  const start = performance.now();
  const writer = (async () => {
    const inFlight: Promise<void>[] = [];
    while (issued < total) {
      const due = start + (issued * 1000) / WRITE_RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const k = issued++;
      const i = k % N;
      inFlight.push(
        catalog.entities.write(SYSTEM, [{ urn: urnOf(i), aspect: 'structuredProperties', value: valuesOf(i, base + k) }], 'upsert').then(
          () => void committed.set(k, performance.now()),
          (err: unknown) => {
            failed = err;
          },
        ),
      );
    }
    await Promise.all(inFlight);
  })();
  // The watcher: which written values does search find now?
  const seen = new Set<number>();
  let lo = 0;
  while (seen.size < total && !failed) {
    while (seen.has(lo)) lo++;
    const hi = issued - 1;
    if (hi >= lo) {
      const res = await catalog.search.search(SYSTEM, {
        entityTypes: ['dataset'],
        query: `structuredProperties.bench_retention:[${base + lo} TO ${base + hi}]`,
        count: 1000,
        aspects: ['structuredProperties'],
      });
      const now = performance.now();
      for (const e of res.entities) {
        const v = (e.aspects.get('structuredProperties')?.value as ReturnType<typeof valuesOf>).properties[0]!.values[0] as { double: number };
        const k = v.double - base;
        if (seen.has(k) || !committed.has(k)) continue;
        seen.add(k);
        visibleAfter.push(now - committed.get(k)!);
      }
    }
    if (performance.now() - start > (WRITE_SECONDS + 60) * 1000) throw new Error(`only ${seen.size} of ${total} writes became visible`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await writer;
  if (failed) throw failed;
  return { writes: total, p50: percentile(visibleAfter, 50), p99: percentile(visibleAfter, 99), max: Math.max(...visibleAfter) };
}

try {
  // 1. Load, index in Postgres, then in OpenSearch: each tree in turn.
  const loading: { load: number; pgIndex: number; osIndex: number }[] = [];
  // The side loaded first loads and indexes more slowly and its OpenSearch index answers some queries
  // more slowly (a cold JVM, the index's segments): --baseline-first swaps the order to tell that apart.
  for (const side of args['baseline-first'] ? [...sides].reverse() : sides) {
    const pgCatalog = (side.pgCatalog = await side.createCatalog(catalogConfig(side, 'postgres'), log, { background: false }));
    const { SYSTEM } = side;
    for (const d of DEFINITIONS) {
      await pgCatalog.entities.write(
        SYSTEM,
        [{ urn: P(d.name), aspect: 'propertyDefinition', value: { qualifiedName: `bench.${d.name}`, valueType: d.valueType, entityTypes: ['urn:li:entityType:svc.dataset'] } }],
        'upsert',
      );
    }
    let t = performance.now();
    for (let start = 0; start < N; start += 500) {
      const range = Array.from({ length: Math.min(500, N - start) }, (_, k) => start + k);
      await pgCatalog.entities.write(SYSTEM, range.map((i) => ({ urn: urnOf(i), aspect: 'status', value: { removed: false } })), 'upsert');
      await pgCatalog.entities.write(SYSTEM, range.map((i) => ({ urn: urnOf(i), aspect: 'structuredProperties', value: valuesOf(i) })), 'upsert');
    }
    const loadSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    await pgCatalog.searchOutbox.deliverAll(30 * 60_000);
    const pgIndexSeconds = (performance.now() - t) / 1000;
    await side.sql.query('VACUUM ANALYZE');
    const osCatalog = (side.osCatalog = await side.createCatalog(catalogConfig(side, 'opensearch'), log, { background: false }));
    t = performance.now();
    await side.sql.query("INSERT INTO search_outbox (urn) SELECT urn FROM aspects WHERE version = 0 AND aspect LIKE '%Key' ORDER BY urn");
    await osCatalog.searchOutbox.deliverAll(30 * 60_000);
    const osIndexSeconds = (performance.now() - t) / 1000;
    await osClient.indices.forcemerge({ index: aliasOf(side), max_num_segments: 1 });
    loading[sides.indexOf(side)] = { load: loadSeconds, pgIndex: pgIndexSeconds, osIndex: osIndexSeconds };
    console.log(
      `# ${N} datasets × 5 properties${sides.length > 1 ? `, ${side.label}` : ''}: loaded in ${loadSeconds.toFixed(0)} s; indexed in Postgres in ${pgIndexSeconds.toFixed(0)} s, in OpenSearch in ${osIndexSeconds.toFixed(0)} s (Postgres: ${pgc.label})`,
    );
  }

  // 2. Reads. A page is compared with the raw filter followed by the raw read of the page's entities
  // (the same answer), and with the raw filter alone (URNs only); a baseline's call follows this tree's.
  const ab: AbRow[] = [];
  if (sides.length > 1) {
    for (const [pass, key] of [['load through the catalog (once each)', 'load'], ['index in Postgres (once each)', 'pgIndex'], ['index in OpenSearch (once each)', 'osIndex']] as const) {
      ab.push({ pass, unit: 's', today: loading[0]![key], baseline: loading[1]![key] });
    }
  }
  console.log(`\n| query (${ITERATIONS} alternating calls, medians) | svc on Postgres | raw SQL + read | ratio | raw SQL alone | ratio | svc on OpenSearch | raw DSL + read | ratio | raw DSL alone | ratio |`);
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const pgSvc = sides.map((side) => svcCalls(side.pgCatalog!, side.SYSTEM));
  const osSvc = sides.map((side) => svcCalls(side.osCatalog!, side.SYSTEM));
  const cells = (svc: number, ...raws: number[]) => [`${svc.toFixed(2)} ms`, ...raws.flatMap((r) => [`${r.toFixed(2)} ms`, `**${(svc / r).toFixed(2)}**`])];
  /** Medians of svc's calls (one per tree), then of the raw ones. */
  const timesOf = async (svc: (() => Promise<unknown>)[], ...raws: (() => Promise<unknown>)[]) => {
    const times = await compare([...svc, ...raws]);
    return { svc: times.slice(0, svc.length), raw: times.slice(svc.length) };
  };
  const abRows = (label: string, pgS: number[], osS: number[]) => {
    if (sides.length > 1) ab.push({ pass: `${label}, Postgres`, unit: 'ms', today: pgS[0]!, baseline: pgS[1]! }, { pass: `${label}, OpenSearch`, unit: 'ms', today: osS[0]!, baseline: osS[1]! });
  };
  for (const [name, label] of [
    ['range', `range \`${RANGE.q}\``],
    ['exists', `exists \`${EXISTS.q}\``],
    ['equal', `equality \`${EQUAL.q}\``],
  ] as const) {
    const pgT = await timesOf(pgSvc.map((c) => c[name]), withRead(rawPg[name]), rawPg[name]);
    const osT = await timesOf(osSvc.map((c) => c[name]), withReadOs(rawOs[name]), rawOs[name]);
    console.log(`| ${label} | ${[...cells(pgT.svc[0]!, pgT.raw[0]!, pgT.raw[1]!), ...cells(osT.svc[0]!, osT.raw[0]!, osT.raw[1]!)].join(' | ')} |`);
    abRows(label, pgT.svc, osT.svc);
  }
  const pgF = await timesOf(pgSvc.map((c) => c.facets), rawPg.facets);
  const osF = await timesOf(osSvc.map((c) => c.facets), rawOs.facets);
  console.log(`| 3-facet aggregation (tier, region, domain; 20 values) | ${[...cells(pgF.svc[0]!, pgF.raw[0]!, pgF.raw[0]!), ...cells(osF.svc[0]!, osF.raw[0]!, osF.raw[0]!)].join(' | ')} |`);
  abRows('3-facet aggregation', pgF.svc, osF.svc);
  for (const side of sides) {
    await side.pgCatalog?.close();
    side.pgCatalog = undefined;
    await side.osCatalog?.close();
    side.osCatalog = undefined;
  }

  // 3. Write-to-visible, one backend at a time (its dispatcher running), this tree's then the baseline's.
  console.log(`\n| write-to-visible (${WRITE_RATE} writes/s for ${WRITE_SECONDS} s) | writes | p50 | p99 | max |`);
  console.log('|---|---|---|---|---|');
  for (const [round, backend] of (['postgres', 'opensearch'] as const).entries()) {
    const visible: { p50: number; p99: number }[] = [];
    for (const side of sides) {
      const catalog = await side.createCatalog(catalogConfig(side, backend), log);
      try {
        const r = await writeToVisible(catalog, side.SYSTEM, round);
        visible.push(r);
        console.log(`| ${backend}${sides.length > 1 ? `, ${side.label}` : ''} | ${r.writes} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms | ${r.max.toFixed(0)} ms |`);
      } finally {
        await catalog.close();
      }
    }
    if (sides.length > 1) {
      ab.push(
        { pass: `write-to-visible p50, ${backend}`, unit: 'ms', today: visible[0]!.p50, baseline: visible[1]!.p50 },
        { pass: `write-to-visible p99, ${backend}`, unit: 'ms', today: visible[0]!.p99, baseline: visible[1]!.p99 },
      );
    }
  }
  if (sides.length > 1) printAbTable(`search: ${N} datasets × 5 properties, ${ITERATIONS} alternating calls (medians)`, ab);
} finally {
  for (const side of sides) {
    await side.pgCatalog?.close();
    await side.osCatalog?.close();
    await side.sql.end();
    await osClient.indices.delete({ index: `${side.prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true }).catch(() => undefined);
    rmSync(side.dataDir, { recursive: true, force: true });
  }
  await osClient.close();
  await os.stop();
  await pgc.stop();
}

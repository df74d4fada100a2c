/**
 * Search on structured properties, both backends, against the same queries sent raw to the engine
 * underneath (SQL to Postgres on svc's search tables, query DSL to OpenSearch on svc's index).
 *
 *   npm run bench:search -- [--entities 100000] [--iterations 200] [--write-seconds 10] [--write-rate 500]
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
 * Postgres: DATABASE_URL, or Debian's PostgreSQL 15 through the harness. OpenSearch: OPENSEARCH_URL,
 * or one started through the harness (after `bash test/infra/provision.sh opensearch`).
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@opensearch-project/opensearch';
import pg from 'pg';
import pino from 'pino';
import { SYSTEM } from '../../server/src/auth/authorize.ts';
import { createCatalog, type Catalog } from '../../server/src/catalog.ts';
import { loadConfig } from '../../server/src/config.ts';
import { benchOpenSearch, benchPostgres, createDb } from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    entities: { type: 'string', default: '100000' },
    iterations: { type: 'string', default: '200' },
    'write-seconds': { type: 'string', default: '10' },
    'write-rate': { type: 'string', default: '500' },
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
const databaseUrl = await createDb(pgc.adminUrl);
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-search-'));
const prefix = `bench${Date.now()}`;

function catalogConfig(backend: 'postgres' | 'opensearch') {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    SVC_ADMIN_TOKEN: 'bench-token',
    SVC_DATA_DIR: dataDir,
    SVC_DB_POOL_SIZE: '16',
    SEARCH_BACKEND: backend,
    OPENSEARCH_URL: os.url,
    INDEX_PREFIX: prefix,
    ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0',
  });
}

const osClient = new Client({ node: os.url });
const raw = new pg.Pool({ connectionString: databaseUrl, max: 4 });

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

/** Alternates the calls (svc first, then each raw one); returns the median milliseconds of each after a warm-up. */
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
const alias = `${prefix}_datasetindex_v2`;
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

function svcCalls(catalog: Catalog) {
  const page = (query: string) => () => catalog.search.search(SYSTEM, { entityTypes: ['dataset'], query, count: 10, aspects: ['structuredProperties'] });
  return {
    range: page(RANGE.q),
    exists: page(EXISTS.q),
    equal: page(EQUAL.q),
    facets: () => catalog.search.aggregate(SYSTEM, { entityTypes: ['dataset'], facets: FACETS, maxAggValues: 20 }),
  };
}

/** Writes at WRITE_RATE for WRITE_SECONDS, a watcher finding each write; p50/p99 of write-to-visible. */
async function writeToVisible(catalog: Catalog, round: number): Promise<{ writes: number; p50: number; p99: number; max: number }> {
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

let pgCatalog: Catalog | undefined;
let osCatalog: Catalog | undefined;
try {
  // 1. Load, index in Postgres, then in OpenSearch.
  pgCatalog = await createCatalog(catalogConfig('postgres'), log, { background: false });
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
  await raw.query('VACUUM ANALYZE');
  osCatalog = await createCatalog(catalogConfig('opensearch'), log, { background: false });
  t = performance.now();
  await raw.query("INSERT INTO search_outbox (urn) SELECT urn FROM aspects WHERE version = 0 AND aspect LIKE '%Key' ORDER BY urn");
  await osCatalog.searchOutbox.deliverAll(30 * 60_000);
  const osIndexSeconds = (performance.now() - t) / 1000;
  await osClient.indices.forcemerge({ index: alias, max_num_segments: 1 });
  console.log(
    `# ${N} datasets × 5 properties: loaded in ${loadSeconds.toFixed(0)} s; indexed in Postgres in ${pgIndexSeconds.toFixed(0)} s, in OpenSearch in ${osIndexSeconds.toFixed(0)} s (Postgres: ${pgc.label})`,
  );

  // 2. Reads. A page is compared with the raw filter followed by the raw read of the page's entities
  // (the same answer), and with the raw filter alone (URNs only).
  console.log(`\n| query (${ITERATIONS} alternating calls, medians) | svc on Postgres | raw SQL + read | ratio | raw SQL alone | ratio | svc on OpenSearch | raw DSL + read | ratio | raw DSL alone | ratio |`);
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const pgSvc = svcCalls(pgCatalog);
  const osSvc = svcCalls(osCatalog);
  const cells = (svc: number, ...raws: number[]) => [`${svc.toFixed(2)} ms`, ...raws.flatMap((r) => [`${r.toFixed(2)} ms`, `**${(svc / r).toFixed(2)}**`])];
  for (const [name, label] of [
    ['range', `range \`${RANGE.q}\``],
    ['exists', `exists \`${EXISTS.q}\``],
    ['equal', `equality \`${EQUAL.q}\``],
  ] as const) {
    const [pgS, pgRead, pgAlone] = (await compare([pgSvc[name], withRead(rawPg[name]), rawPg[name]])) as [number, number, number];
    const [osS, osRead, osAlone] = (await compare([osSvc[name], withReadOs(rawOs[name]), rawOs[name]])) as [number, number, number];
    console.log(`| ${label} | ${[...cells(pgS, pgRead, pgAlone), ...cells(osS, osRead, osAlone)].join(' | ')} |`);
  }
  const [pgF, pgRaw] = (await compare([pgSvc.facets, rawPg.facets])) as [number, number];
  const [osF, osRaw] = (await compare([osSvc.facets, rawOs.facets])) as [number, number];
  console.log(`| 3-facet aggregation (tier, region, domain; 20 values) | ${[...cells(pgF, pgRaw, pgRaw), ...cells(osF, osRaw, osRaw)].join(' | ')} |`);
  await pgCatalog.close();
  pgCatalog = undefined;
  await osCatalog.close();
  osCatalog = undefined;

  // 3. Write-to-visible, one backend at a time (its dispatcher running).
  console.log(`\n| write-to-visible (${WRITE_RATE} writes/s for ${WRITE_SECONDS} s) | writes | p50 | p99 | max |`);
  console.log('|---|---|---|---|---|');
  for (const [round, backend] of (['postgres', 'opensearch'] as const).entries()) {
    const catalog = await createCatalog(catalogConfig(backend), log);
    try {
      const r = await writeToVisible(catalog, round);
      console.log(`| ${backend} | ${r.writes} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms | ${r.max.toFixed(0)} ms |`);
    } finally {
      await catalog.close();
    }
  }
} finally {
  await pgCatalog?.close();
  await osCatalog?.close();
  await raw.end();
  await osClient.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true }).catch(() => undefined);
  await osClient.close();
  await os.stop();
  await pgc.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

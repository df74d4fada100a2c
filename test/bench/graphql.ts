/**
 * GraphQL against REST in one run, on one server: structured-property upserts through
 * `upsertStructuredProperties` against the same write through REST v3 (`PATCH structuredProperties`,
 * an `add` of the property: the same semantics, other properties kept) and the full set (`POST`),
 * with raw `pg` upserts of as many rows as the floor; then a filtered scroll of 10 through
 * `scrollAcrossEntities` against the REST listing with the same query (`GET ...?query=`), both
 * returning the entities' structured properties.
 *
 *   npm run bench:graphql -- [--entities 5000] [--seconds 3] [--rounds 4] [--concurrency 16] [--iterations 1000] [--warm-up 1000]
 *                           [--against <a checkout of another commit, installed>]
 *
 * Writes run in alternating rounds (REST PATCH, GraphQL, REST POST) of the given length, reads
 * alternate one request each after an untimed warm-up; the ratios are GraphQL over REST. With
 * `--against`, that checkout's server (the baseline, run from its TypeScript) runs beside this tree's,
 * each on a database of its own on the same Postgres: the reads alternate this tree's pair of requests
 * and the baseline's, the write rounds this tree's three and the baseline's, and a last table compares
 * the two trees' rates, times and server CPU. Needs wrk (Debian's package).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  alternateTrees,
  benchPostgres,
  benchTrees,
  call,
  keptAliveClient,
  printAbTable,
  rawUpserts,
  runWrk,
  startTreeServers,
  stopTreeServers,
  type AbRow,
  type TreeServer,
} from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    entities: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '16' },
    iterations: { type: 'string', default: '1000' },
    'warm-up': { type: 'string', default: '1000' },
    against: { type: 'string' },
  },
});
const N = Number(args.entities);
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const ITERATIONS = Number(args.iterations);
const WARM_UP = Number(args['warm-up']);
const RETENTION = 'urn:li:structuredProperty:bench.retention';
const VALUES = [30, 60, 90, 365];
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:bench,db.t${i},PROD)`;
const urnLua = `"urn:li:dataset:(urn:li:dataPlatform:bench,db.t" .. i .. ",PROD)"`;
const encUrnLua = `"urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Abench%2Cdb.t" .. i .. "%2CPROD%29"`;
const valueLua = `({30, 60, 90, 365})[i % 4 + 1]`;

const UPSERT = 'mutation($a:String!,$p:String!,$v:Float!){upsertStructuredProperties(input:{assetUrn:$a,structuredPropertyInputParams:[{structuredPropertyUrn:$p,values:[{numberValue:$v}]}]}){properties{structuredProperty{urn}}}}';
const SCROLL = `query($s:String){scrollAcrossEntities(input:{types:[DATASET],query:"*",count:10,scrollId:$s,orFilters:[{and:[{field:"structuredProperties.bench.retention",condition:GREATER_THAN,values:["45.0"]}]}]}){nextScrollId searchResults{entity{urn ... on Dataset{structuredProperties{properties{structuredProperty{urn} values{... on NumberValue{numberValue}}}}}}}}}`;
/** The same filter, counting the matches (to wait for indexing). */
const TOTAL = `{scrollAcrossEntities(input:{types:[DATASET],query:"*",count:1,orFilters:[{and:[{field:"structuredProperties.bench.retention",condition:GREATER_THAN,values:["45.0"]}]}]}){total}}`;
const REST_QUERY = `/openapi/v3/entity/dataset?count=10&aspects=structuredProperties&query=${encodeURIComponent('structuredProperties.bench_retention:>45')}`;

const graphql = (base: string, query: string, variables: Record<string, unknown>) => call(base, 'POST', '/api/graphql', { query, variables }) as Promise<{ data: any; errors?: unknown }>;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A tree's definition and N datasets with a value each, indexed, then a steady database (not the autovacuum and checkpoint that follow a bulk load). */
async function load(tree: TreeServer): Promise<void> {
  const base = tree.server.base;
  await call(base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(RETENTION)}/propertyDefinition`, {
    value: {
      qualifiedName: 'bench.retention',
      valueType: 'urn:li:dataType:svc.number',
      entityTypes: ['urn:li:entityType:svc.dataset'],
      allowedValues: VALUES.map((d) => ({ value: { double: d } })),
    },
  });
  for (let start = 0; start < N; start += 500) {
    const batch = Array.from({ length: Math.min(500, N - start) }, (_, k) => ({
      urn: urnOf(start + k),
      status: { value: { removed: false } },
      structuredProperties: { value: { properties: [{ propertyUrn: RETENTION, values: [{ double: VALUES[(start + k) % 4] }] }] } },
    }));
    await call(base, 'POST', '/openapi/v3/entity/dataset?async=false', batch);
  }
  // Search is fed asynchronously: wait until every value is indexed.
  const expected = Array.from({ length: N }, (_, i) => VALUES[i % 4]! > 45).filter(Boolean).length;
  for (let t = 0; ; t++) {
    const r = await graphql(base, TOTAL, {});
    if (r.data?.scrollAcrossEntities?.total === expected) break;
    if (t > 600) throw new Error(`search did not catch up: ${JSON.stringify(r).slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 200));
  }
  const admin = new pg.Client({ connectionString: tree.svcDb });
  await admin.connect();
  await admin.query('VACUUM ANALYZE');
  await admin.query('CHECKPOINT');
  await admin.end();
}

/** A tree's scroll pairs: its client, times, the server's CPU per side and where each side's scroll is. */
interface Reads {
  client: ReturnType<typeof keptAliveClient>;
  graphqlMs: number[];
  restMs: number[];
  cpu: { graphql: number; rest: number };
  gScroll: string | null;
  rScroll: string | null;
}

/** Pair k of a tree's scroll: GraphQL, then REST, each on page k % 5 of its own scroll (timed from k = 0). */
async function readPair(tree: TreeServer, reads: Reads, k: number): Promise<void> {
  const { client, cpu } = reads;
  const { server } = tree;
  if (k % 5 === 0) reads.gScroll = reads.rScroll = null;
  let c = server.cpuMicros();
  let t = performance.now();
  const g = await client.request('POST', '/api/graphql', { query: SCROLL, variables: { s: reads.gScroll } });
  if (k >= 0) reads.graphqlMs.push(performance.now() - t);
  if (k >= 0) cpu.graphql += server.cpuMicros() - c;
  if (g.errors || g.data.scrollAcrossEntities.searchResults.length !== 10) throw new Error(`graphql scroll: ${JSON.stringify(g).slice(0, 300)}`);
  reads.gScroll = g.data.scrollAcrossEntities.nextScrollId;
  c = server.cpuMicros();
  t = performance.now();
  const r = (await client.request('GET', `${REST_QUERY}${reads.rScroll ? `&scrollId=${encodeURIComponent(reads.rScroll)}` : ''}`)) as { entities: unknown[]; scrollId: string | null };
  if (k >= 0) reads.restMs.push(performance.now() - t);
  if (k >= 0) cpu.rest += server.cpuMicros() - c;
  if (r.entities.length !== 10) throw new Error('rest listing: short page');
  reads.rScroll = r.scrollId;
}

type Writes = Record<'patch' | 'graphql' | 'post', { count: number; rate: number }>;

/** One write round of a tree: REST PATCH, GraphQL, REST POST, each for SECONDS. */
function writeRound(tree: TreeServer, round: number): Writes {
  const offset = round * 100_003;
  const patch = runWrk(
    tree.server.base,
    {
      method: 'PATCH',
      pathLua: `"/openapi/v3/entity/dataset/" .. ${encUrnLua} .. "/structuredProperties"`,
      bodyLua: `'{"patch":[{"op":"add","path":"/properties/${RETENTION}","value":{"propertyUrn":"${RETENTION}","values":[{"double":' .. ${valueLua} .. '}]}}],"arrayPrimaryKeys":{"properties":["propertyUrn"]}}'`,
      contentType: 'application/json-patch+json',
    },
    N,
    SECONDS,
    CONCURRENCY,
    offset,
  );
  const gql = runWrk(
    tree.server.base,
    {
      method: 'POST',
      pathLua: '"/api/graphql"',
      bodyLua: `'{"query":"${UPSERT}","variables":{"a":"' .. ${urnLua} .. '","p":"${RETENTION}","v":' .. ${valueLua} .. '}}'`,
    },
    N,
    SECONDS,
    CONCURRENCY,
    offset,
  );
  const post = runWrk(
    tree.server.base,
    {
      method: 'POST',
      pathLua: `"/openapi/v3/entity/dataset/" .. ${encUrnLua} .. "/structuredProperties?createIfNotExists=false"`,
      bodyLua: `'{"value":{"properties":[{"propertyUrn":"${RETENTION}","values":[{"double":' .. ${valueLua} .. '}]}]}}'`,
    },
    N,
    SECONDS,
    CONCURRENCY,
    offset,
  );
  return { patch, graphql: gql, post };
}

const pgc = await benchPostgres();
const trees = await startTreeServers(pgc.adminUrl, CONCURRENCY, benchTrees(args.against)).catch(async (err: unknown) => {
  await pgc.stop();
  throw err;
});
try {
  for (const tree of trees) await load(tree);

  // Reads: one request at a time, alternating, each side following its own scroll for 5 pages, on
  // one kept-alive connection (see keptAliveClient), after untimed pairs that warm the server's code
  // up: GraphQL's path (yoga, the compiled query) takes longer to reach its steady speed than REST's,
  // the ratio of pairs 1-500 was 0.84 and of pairs 3,000-4,000 0.88-0.90 on one server. The server's
  // CPU is counted per side too: latency also holds the client's and Postgres' time. With a baseline,
  // its pair follows this tree's.
  const reads: Reads[] = trees.map((t) => ({ client: keptAliveClient(t.server.base), graphqlMs: [], restMs: [], cpu: { graphql: 0, rest: 0 }, gScroll: null, rScroll: null }));
  for (let k = -WARM_UP; k < ITERATIONS; k++) for (const [i, tree] of trees.entries()) await readPair(tree, reads[i]!, k);
  for (const r of reads) r.client.close();

  // Writes: alternating rounds of the same number of seconds each, this tree's three then the baseline's.
  const writes = await alternateTrees(trees, ROUNDS, async (tree, round) => writeRound(tree, round));
  const mean = (ws: Writes[], k: keyof Writes) => ws.reduce((a, w) => a + w[k].rate, 0) / ws.length;
  const count = (ws: Writes[], k: keyof Writes) => ws.reduce((a, w) => a + w[k].count, 0);
  const raws: number[] = [];
  for (const [i, tree] of trees.entries()) {
    raws.push(
      await rawUpserts(tree.rawDb, count(writes[i]!, 'graphql'), CONCURRENCY, (k) => ({
        urn: urnOf(k % N),
        aspect: 'structuredProperties',
        value: { properties: [{ propertyUrn: RETENTION, values: [{ double: VALUES[k % 4] }] }] },
      })),
    );
  }

  const title = `GraphQL against REST: ${N} datasets, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${SECONDS} s, Postgres ${pgc.label}, search on postgres`;
  for (const [i, tree] of trees.entries()) {
    const ws = writes[i]!;
    const rate = (k: keyof Writes) => mean(ws, k);
    const raw = raws[i]!;
    const { graphqlMs, restMs, cpu } = reads[i]!;
    console.log(`\n${title}${trees.length > 1 ? `; ${tree.label} (${tree.root})` : ''}`);
    console.log('| pass | GraphQL | REST v3 | GraphQL / REST | per round | raw pg | GraphQL / raw |');
    console.log('|---|---|---|---|---|---|---|');
    console.log(
      `| upsert one property (GraphQL upsertStructuredProperties vs REST PATCH add) | ${rate('graphql').toFixed(0)}/s | ${rate('patch').toFixed(0)}/s | ${(rate('graphql') / rate('patch')).toFixed(2)} | ${ws.map((w) => (w.graphql.rate / w.patch.rate).toFixed(2)).join(' / ')} | ${raw.toFixed(0)}/s | ${(rate('graphql') / raw).toFixed(2)} |`,
    );
    console.log(`| (REST POST set, for reference) | | ${rate('post').toFixed(0)}/s | ${(rate('graphql') / rate('post')).toFixed(2)} | | | |`);
    const g = median(graphqlMs);
    const r = median(restMs);
    // Latency: a ratio of throughputs is REST's time over GraphQL's.
    console.log(`| filtered scroll of 10 with their properties (${ITERATIONS} alternating requests, medians) | ${g.toFixed(2)} ms | ${r.toFixed(2)} ms | ${(r / g).toFixed(2)} (REST time / GraphQL time) | | | |`);
    console.log(`| (the same requests: the server's CPU per request) | ${(cpu.graphql / ITERATIONS).toFixed(0)} µs | ${(cpu.rest / ITERATIONS).toFixed(0)} µs | ${(cpu.rest / cpu.graphql).toFixed(2)} | | | |`);
    console.log(`\nwrites counted: GraphQL ${count(ws, 'graphql')}, PATCH ${count(ws, 'patch')}, POST ${count(ws, 'post')}`);
  }
  if (trees.length > 1) {
    const side = (i: number) => ({ ws: writes[i]!, raw: raws[i]!, ...reads[i]! });
    const today = side(0);
    const base = side(1);
    const writeRow = (pass: string, k: keyof Writes): AbRow => ({
      pass,
      unit: 'ops/s',
      today: mean(today.ws, k),
      baseline: mean(base.ws, k),
      rounds: today.ws.map((w, round) => ({ today: w[k].rate, baseline: base.ws[round]![k].rate })),
    });
    printAbTable(title, [
      writeRow('upsert one property, GraphQL upsertStructuredProperties', 'graphql'),
      writeRow('the same, REST PATCH add', 'patch'),
      writeRow('(REST POST set, for reference)', 'post'),
      { pass: '(raw pg beside it, after the rounds)', unit: 'ops/s', today: today.raw, baseline: base.raw },
      { pass: 'filtered scroll of 10, GraphQL (medians)', unit: 'ms', today: median(today.graphqlMs), baseline: median(base.graphqlMs) },
      { pass: 'the same, REST listing (medians)', unit: 'ms', today: median(today.restMs), baseline: median(base.restMs) },
      { pass: "the server's CPU per GraphQL scroll", unit: 'µs', today: today.cpu.graphql / ITERATIONS, baseline: base.cpu.graphql / ITERATIONS },
      { pass: "the server's CPU per REST listing", unit: 'µs', today: today.cpu.rest / ITERATIONS, baseline: base.cpu.rest / ITERATIONS },
    ]);
  }
} finally {
  await stopTreeServers(trees);
  await pgc.stop();
}

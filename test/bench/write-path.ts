/**
 * Write-path benchmark: aspect upserts per second through svc's HTTP API at concurrency 16, against
 * raw `pg` upserts of the same rows into the same table shape, in the same run, on the same Postgres.
 *
 *   npm run bench:write-path -- [--seconds 12] [--rounds 6] [--concurrency 16] [--aspect datasetProperties|schemaMetadata] [--against <a checkout of another commit, installed>]
 *
 * Two passes: inserts (a new entity per request), then updates of the aspects the inserts created.
 * The aspect written is `datasetProperties` (its description and custom properties are search fields:
 * each write also queues its entity's search document, delivered beside the writes), or with
 * `--aspect schemaMetadata` one no search document is built from (a ~1 KB raw schema and no fields),
 * to measure the write path alone. Last, the server's CPU per operation of each pass (its process's
 * user and system time over the rounds, search delivery included).
 * Each pass runs in interleaved rounds (svc for seconds/rounds, then the raw side for as many rows,
 * and again), so a machine whose speed drifts during the run affects both sides alike; the ratio is
 * of the totals, and each round's ratio is printed beside it. The raw side is not timed while svc still
 * delivers its round's new entities to search (see untilSettled).
 * With `--against`, that checkout's server (the baseline, run from its TypeScript) does the same passes
 * on databases of its own on the same Postgres, its rounds alternating with this tree's (this tree's svc
 * round and raw round, then the baseline's), and a last table compares the two trees' svc rates.
 * Uses DATABASE_URL when set (a cluster's admin URL), else starts Debian's PostgreSQL 15 through the
 * test harness. Needs wrk (Debian's package).
 */
import { parseArgs } from 'node:util';
import {
  alternatingTreeRounds,
  benchPostgres,
  benchTrees,
  printTreeTables,
  rawUpserts,
  runWrk,
  startTreeServers,
  stopTreeServers,
  untilSettled,
  type BenchRow,
  type TreeServer,
} from './benchSupport.ts';

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '12' }, rounds: { type: 'string', default: '6' }, concurrency: { type: 'string', default: '16' }, against: { type: 'string' }, aspect: { type: 'string', default: 'datasetProperties' } },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);

/** The ~1 KB text of each write; the same text on both sides. */
const text = (i: number, pass: number) => `row ${i} pass ${pass} ${'lorem ipsum dolor sit amet '.repeat(34)}`;
const SCHEMA = { schemaName: 'bench', platform: 'urn:li:dataPlatform:bench', version: 0, hash: '', fields: [] };
/** The aspects the bench writes: the value of row i in pass p, for the raw side and as wrk's Lua builds it (`pad`: the lorem ipsum). */
const ASPECTS: Record<string, { value(i: number, pass: number): unknown; bodyLua(pass: number): string }> = {
  datasetProperties: {
    value: (i, pass) => ({ description: text(i, pass), customProperties: { owner: `team-${i % 17}` } }),
    bodyLua: (pass) => `'{"value":{"description":"row ' .. i .. ' pass ${pass} ' .. pad .. '","customProperties":{"owner":"team-' .. (i % 17) .. '"}}}'`,
  },
  schemaMetadata: {
    value: (i, pass) => ({ ...SCHEMA, platformSchema: { 'com.linkedin.schema.OtherSchema': { rawSchema: text(i, pass) } } }),
    bodyLua: (pass) =>
      `'{"value":{"schemaName":"bench","platform":"urn:li:dataPlatform:bench","version":0,"hash":"","fields":[],"platformSchema":{"com.linkedin.schema.OtherSchema":{"rawSchema":"row ' .. i .. ' pass ${pass} ' .. pad .. '"}}}}'`,
  },
};
if (!Object.hasOwn(ASPECTS, args.aspect!)) throw new Error(`--aspect: expected one of ${Object.keys(ASPECTS).join(', ')}`);
const aspect = ASPECTS[args.aspect!]!;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:bench,db.table_${i},PROD)`;

const pg = await benchPostgres();
const trees = await startTreeServers(pg.adminUrl, CONCURRENCY, benchTrees(args.against)).catch(async (err: unknown) => {
  await pg.stop();
  throw err;
});
try {
  const results: BenchRow[][] = trees.map(() => []);
  const created = new Map<TreeServer, number>(); // entities each tree's insert pass created (rows 0 .. created-1), on both sides
  const serverCpu = new Map(trees.map((t) => [t, [1, 2].map(() => ({ micros: 0, ops: 0 }))])); // each tree's server CPU and operations, per pass
  for (const [pass, label] of [[1, 'insert (new entities)'], [2, 'update (existing aspects)']] as const) {
    const rows = await alternatingTreeRounds(label, ROUNDS, trees, async (tree, _round, offset) => {
      // Pass 1 numbers rows on from the last round's; pass 2 walks the rows pass 1 created.
      const modulo = pass === 1 ? 1_000_000_000 : created.get(tree)!;
      const cpuBefore = tree.server.cpuMicros();
      const http = runWrk(
        tree.server.base,
        {
          method: 'POST',
          pathLua: `"/openapi/v3/entity/dataset/urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Abench%2Cdb.table_" .. i .. "%2CPROD%29/${args.aspect}?createIfNotExists=false"`,
          bodyLua: aspect.bodyLua(pass),
        },
        modulo,
        SECONDS / ROUNDS,
        CONCURRENCY,
        offset,
      );
      await untilSettled(tree.svcDb);
      // The server's CPU for the round's requests and for the search delivery they queued (settled above).
      const used = serverCpu.get(tree)![pass - 1]!;
      used.micros += tree.server.cpuMicros() - cpuBefore;
      used.ops += http.count;
      const raw = await rawUpserts(tree.rawDb, http.count, CONCURRENCY, (k) => {
        const i = (offset + k) % modulo;
        return { urn: urnOf(i), aspect: args.aspect!, value: aspect.value(i, pass) };
      });
      return { http, raw };
    });
    for (const [i, row] of rows.entries()) {
      if (pass === 1) created.set(trees[i]!, row.n);
      results[i]!.push(row);
    }
  }
  printTreeTables(`write-path: ~1 KB ${args.aspect} upserts, concurrency ${CONCURRENCY}, Postgres ${pg.label}`, trees, results);
  console.log(`\nthe server's CPU per operation, its search delivery included (µs): ${trees.map((t) => `${t.label} ${serverCpu.get(t)!.map((c) => (c.micros / c.ops).toFixed(0)).join(' / ')}`).join('; ')} (inserts / updates)`);
} finally {
  await stopTreeServers(trees);
  await pg.stop();
}

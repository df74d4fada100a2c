/**
 * Write-path benchmark: aspect upserts per second through svc's HTTP API at concurrency 16, against
 * raw `pg` upserts of the same rows into the same table shape, in the same run, on the same Postgres.
 *
 *   npm run bench:write-path -- [--seconds 10] [--concurrency 16]
 *
 * Two passes: inserts (a new entity per request) for the given time, then as many updates of those
 * aspects. The raw side upserts exactly as many rows in each pass.
 * Uses DATABASE_URL when set (a cluster's admin URL), else starts Debian's PostgreSQL 15 through the
 * test harness. Needs wrk (Debian's package).
 */
import { parseArgs } from 'node:util';
import { benchPostgres, createDb, printTable, rawUpserts, runWrk, startBenchServer } from './benchSupport.ts';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '16' } } });
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);

/** A ~1 KB datasetProperties aspect; the same text on both sides. */
const description = (i: number, pass: number) => `row ${i} pass ${pass} ${'lorem ipsum dolor sit amet '.repeat(34)}`;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:bench,db.table_${i},PROD)`;

const pg = await benchPostgres();
const server = await startBenchServer(await createDb(pg.adminUrl), CONCURRENCY);
const rawDb = await createDb(pg.adminUrl);
try {
  const results = [];
  let rows = 1_000_000_000; // pass 1: every request a new entity; pass 2: the rows pass 1 created
  for (const [pass, label] of [[1, 'insert (new entities)'], [2, 'update (existing aspects)']] as const) {
    const http = runWrk(
      server.base,
      {
        method: 'POST',
        pathLua: `"/openapi/v3/entity/dataset/urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Abench%2Cdb.table_" .. i .. "%2CPROD%29/datasetProperties?createIfNotExists=false"`,
        bodyLua: `'{"value":{"description":"row ' .. i .. ' pass ${pass} ' .. pad .. '","customProperties":{"owner":"team-' .. (i % 17) .. '"}}}'`,
      },
      rows,
      SECONDS,
      CONCURRENCY,
    );
    if (pass === 1) rows = http.count;
    const raw = await rawUpserts(rawDb, http.count, CONCURRENCY, (i) => ({
      urn: urnOf(i % rows),
      aspect: 'datasetProperties',
      value: { description: description(i % rows, pass), customProperties: { owner: `team-${(i % rows) % 17}` } },
    }));
    results.push({ pass: label, http: http.rate, raw, n: http.count });
  }
  printTable(`write-path: ~1 KB datasetProperties upserts, concurrency ${CONCURRENCY}, Postgres ${pg.label}`, results);
} finally {
  await server.stop();
  await pg.stop();
}

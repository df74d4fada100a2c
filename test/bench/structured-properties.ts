/**
 * Structured-property value writes through HTTP, validation included (definitions loaded, types,
 * allowed values, entity types, value rows kept), against raw `pg` upserts of the same aspect rows.
 *
 *   npm run bench:structured-properties -- [--entities 10000] [--seconds 12] [--rounds 6] [--concurrency 16]
 *
 * Over N entities (created first), for the given time each: sets (POST structuredProperties) cycling
 * over the entities, then patches (PATCH add of a second property); then definition updates (POST
 * propertyDefinition, a new description each time) cycling over 100 properties. Each pass alternates
 * svc and raw in rounds (see alternatingRounds): the raw side upserts exactly as many aspect rows as
 * svc wrote in the round before it. Neither side is timed while svc still delivers earlier writes to
 * search (see untilSettled). Needs wrk (Debian's package).
 */
import pg from 'pg';
import { alternatingRounds, benchPostgres, call, createDb, printTable, rawUpserts, runWrk, startBenchServer, untilSettled } from './benchSupport.ts';
import { BENCH_URN_LUA, benchUrn, DAYS, passOptions, RETENTION, setRequest, setRow } from './setPass.ts';

const { entities: N, rounds: ROUNDS, roundSeconds: ROUND_SECONDS, concurrency: CONCURRENCY } = passOptions();
const TIER = 'urn:li:structuredProperty:bench.tier';

const pgc = await benchPostgres();
const svcDb = await createDb(pgc.adminUrl);
const server = await startBenchServer(svcDb, CONCURRENCY);
const rawDb = await createDb(pgc.adminUrl);
try {
  const retention = {
    qualifiedName: 'bench.retention',
    valueType: 'urn:li:dataType:svc.number',
    cardinality: 'MULTIPLE',
    entityTypes: ['urn:li:entityType:svc.dataset'],
    allowedValues: [30, 60, 90, 365].map((d) => ({ value: { double: d }, description: `${d} days` })),
  };
  const tier = { qualifiedName: 'bench.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] };
  await call(server.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(RETENTION)}/propertyDefinition`, { value: retention });
  await call(server.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(TIER)}/propertyDefinition`, { value: tier });
  for (let start = 0; start < N; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, N - start) }, (_, k) => ({ urn: benchUrn(start + k), status: { value: { removed: false } } }));
    await call(server.base, 'POST', '/openapi/v3/entity/dataset?async=false', batch);
  }
  // Measure the steady state, not the search delivery, autovacuum and checkpoint that follow a bulk load.
  await untilSettled(svcDb);
  const admin = new pg.Client({ connectionString: svcDb });
  await admin.connect();
  await admin.query('VACUUM ANALYZE');
  await admin.query('CHECKPOINT');
  await admin.end();

  const set = await alternatingRounds('set (POST structuredProperties)', ROUNDS, async (_round, offset) => {
    const http = runWrk(server.base, setRequest('?createIfNotExists=false'), N, ROUND_SECONDS, CONCURRENCY, offset);
    await untilSettled(svcDb);
    const raw = await rawUpserts(rawDb, http.count, CONCURRENCY, (k) => setRow((offset + k) % N));
    return { http, raw };
  });
  const patch = await alternatingRounds('patch add (PATCH structuredProperties)', ROUNDS, async (_round, offset) => {
    const http = runWrk(
      server.base,
      {
        method: 'PATCH',
        pathLua: `"/openapi/v3/entity/dataset/" .. ${BENCH_URN_LUA} .. "/structuredProperties"`,
        bodyLua: `'{"patch":[{"op":"add","path":"/properties/${TIER}","value":{"propertyUrn":"${TIER}","values":[{"string":"tier-' .. (i % 3) .. '"}]}}],"arrayPrimaryKeys":{"properties":["propertyUrn"]}}'`,
        contentType: 'application/json-patch+json',
      },
      N,
      ROUND_SECONDS,
      CONCURRENCY,
      offset,
    );
    await untilSettled(svcDb);
    const raw = await rawUpserts(rawDb, http.count, CONCURRENCY, (k) => {
      const i = (offset + k) % N;
      return {
        urn: benchUrn(i),
        aspect: 'structuredProperties',
        value: { properties: [{ propertyUrn: RETENTION, values: [{ double: DAYS[i % 4] }] }, { propertyUrn: TIER, values: [{ string: `tier-${i % 3}` }] }] },
      };
    });
    return { http, raw };
  });
  // Definition writes: 100 properties, each update a new description (rules checked, history kept).
  const DEFINITIONS = 100;
  const definitionOf = (k: number, d: string) => ({ qualifiedName: `bench.def${k}`, valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'], description: d });
  for (let k = 0; k < DEFINITIONS; k++) {
    await call(server.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(`urn:li:structuredProperty:bench.def${k}`)}/propertyDefinition`, { value: definitionOf(k, 'first') });
  }
  await untilSettled(svcDb);
  const definitions = await alternatingRounds('definition update (POST propertyDefinition)', ROUNDS, async (_round, offset) => {
    const http = runWrk(
      server.base,
      {
        method: 'POST',
        pathLua: `"/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Abench.def" .. (i % ${DEFINITIONS}) .. "/propertyDefinition?createIfNotExists=false"`,
        bodyLua: `'{"value":{"qualifiedName":"bench.def' .. (i % ${DEFINITIONS}) .. '","valueType":"urn:li:dataType:svc.string","entityTypes":["urn:li:entityType:svc.dataset"],"description":"update ' .. i .. '"}}'`,
      },
      1_000_000_000,
      ROUND_SECONDS,
      CONCURRENCY,
      offset,
    );
    await untilSettled(svcDb);
    const raw = await rawUpserts(rawDb, http.count, CONCURRENCY, (k) => {
      const i = offset + k;
      return { urn: `urn:li:structuredProperty:bench.def${i % DEFINITIONS}`, aspect: 'propertyDefinition', value: definitionOf(i % DEFINITIONS, `update ${i}`) };
    });
    return { http, raw };
  });
  printTable(`structured properties: ${N} entities, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${ROUND_SECONDS} s per pass, Postgres ${pgc.label}`, [set, patch, definitions]);
} finally {
  await server.stop();
  await pgc.stop();
}

/**
 * Structured-property value writes through HTTP, validation included (definitions loaded, types,
 * allowed values, entity types, value rows kept), against raw `pg` upserts of the same aspect rows.
 *
 *   npm run bench:structured-properties -- [--entities 10000] [--seconds 12] [--rounds 6] [--concurrency 16] [--against <a checkout of another commit, installed>]
 *
 * Over N entities (created first), for the given time each: sets (POST structuredProperties) cycling
 * over the entities, then patches (PATCH add of a second property); then definition updates (POST
 * propertyDefinition, a new description each time) cycling over 100 properties. Each pass alternates
 * svc and raw in rounds (see alternatingRounds): the raw side upserts exactly as many aspect rows as
 * svc wrote in the round before it. Neither side is timed while svc still delivers earlier writes to
 * search (see untilSettled). With `--against`, that checkout's server (the baseline, run from its
 * TypeScript) does the same passes on databases of its own on the same Postgres, its rounds alternating
 * with this tree's (this tree's svc and raw round, then the baseline's), and a last table compares the
 * two trees' svc rates. Needs wrk (Debian's package).
 */
import pg from 'pg';
import {
  alternatingTreeRounds,
  benchPostgres,
  benchTrees,
  call,
  printTreeTables,
  rawUpserts,
  runWrk,
  startTreeServers,
  stopTreeServers,
  untilSettled,
  type TreeServer,
} from './benchSupport.ts';
import { BENCH_URN_LUA, benchUrn, DAYS, passOptions, RETENTION, setRequest, setRow } from './setPass.ts';

const { entities: N, rounds: ROUNDS, roundSeconds: ROUND_SECONDS, concurrency: CONCURRENCY, extra } = passOptions({ against: '' });
const TIER = 'urn:li:structuredProperty:bench.tier';

/** Definition writes: 100 properties, each update a new description (rules checked, history kept). */
const DEFINITIONS = 100;
const definitionOf = (k: number, d: string) => ({ qualifiedName: `bench.def${k}`, valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'], description: d });

/** A tree's definitions and N datasets, then a steady database (not the search delivery, autovacuum and checkpoint that follow a bulk load). */
async function load(tree: TreeServer): Promise<void> {
  const retention = {
    qualifiedName: 'bench.retention',
    valueType: 'urn:li:dataType:svc.number',
    cardinality: 'MULTIPLE',
    entityTypes: ['urn:li:entityType:svc.dataset'],
    allowedValues: [30, 60, 90, 365].map((d) => ({ value: { double: d }, description: `${d} days` })),
  };
  const tier = { qualifiedName: 'bench.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] };
  await call(tree.server.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(RETENTION)}/propertyDefinition`, { value: retention });
  await call(tree.server.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(TIER)}/propertyDefinition`, { value: tier });
  for (let start = 0; start < N; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, N - start) }, (_, k) => ({ urn: benchUrn(start + k), status: { value: { removed: false } } }));
    await call(tree.server.base, 'POST', '/openapi/v3/entity/dataset?async=false', batch);
  }
  await untilSettled(tree.svcDb);
  const admin = new pg.Client({ connectionString: tree.svcDb });
  await admin.connect();
  await admin.query('VACUUM ANALYZE');
  await admin.query('CHECKPOINT');
  await admin.end();
}

const pgc = await benchPostgres();
const trees = await startTreeServers(pgc.adminUrl, CONCURRENCY, benchTrees(extra.against || undefined)).catch(async (err: unknown) => {
  await pgc.stop();
  throw err;
});
try {
  for (const tree of trees) await load(tree);

  const set = await alternatingTreeRounds('set (POST structuredProperties)', ROUNDS, trees, async (tree, _round, offset) => {
    const http = runWrk(tree.server.base, setRequest('?createIfNotExists=false'), N, ROUND_SECONDS, CONCURRENCY, offset);
    await untilSettled(tree.svcDb);
    const raw = await rawUpserts(tree.rawDb, http.count, CONCURRENCY, (k) => setRow((offset + k) % N));
    return { http, raw };
  });
  const patch = await alternatingTreeRounds('patch add (PATCH structuredProperties)', ROUNDS, trees, async (tree, _round, offset) => {
    const http = runWrk(
      tree.server.base,
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
    await untilSettled(tree.svcDb);
    const raw = await rawUpserts(tree.rawDb, http.count, CONCURRENCY, (k) => {
      const i = (offset + k) % N;
      return {
        urn: benchUrn(i),
        aspect: 'structuredProperties',
        value: { properties: [{ propertyUrn: RETENTION, values: [{ double: DAYS[i % 4] }] }, { propertyUrn: TIER, values: [{ string: `tier-${i % 3}` }] }] },
      };
    });
    return { http, raw };
  });
  for (const tree of trees) {
    for (let k = 0; k < DEFINITIONS; k++) {
      await call(tree.server.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(`urn:li:structuredProperty:bench.def${k}`)}/propertyDefinition`, { value: definitionOf(k, 'first') });
    }
    await untilSettled(tree.svcDb);
  }
  const definitions = await alternatingTreeRounds('definition update (POST propertyDefinition)', ROUNDS, trees, async (tree, _round, offset) => {
    const http = runWrk(
      tree.server.base,
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
    await untilSettled(tree.svcDb);
    const raw = await rawUpserts(tree.rawDb, http.count, CONCURRENCY, (k) => {
      const i = offset + k;
      return { urn: `urn:li:structuredProperty:bench.def${i % DEFINITIONS}`, aspect: 'propertyDefinition', value: definitionOf(i % DEFINITIONS, `update ${i}`) };
    });
    return { http, raw };
  });
  printTreeTables(
    `structured properties: ${N} entities, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${ROUND_SECONDS} s per pass, Postgres ${pgc.label}`,
    trees,
    trees.map((_, i) => [set[i]!, patch[i]!, definitions[i]!]),
  );
} finally {
  await stopTreeServers(trees);
  await pgc.stop();
}

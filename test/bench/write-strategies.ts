/**
 * Where a write's state comes from (server/src/config.ts, writeStrategy), measured A/B in one run: a
 * server with the default (`checked`, state from grouped reads, kept rows and guesses) and, one at a
 * time, a server with another choice, on one database, in alternating rounds of the same writes:
 * structured-property sets (a new value each round) and patches (a second property added, then given
 * again). Each choice is kept in svc only while it earns its place (at least 10% on a pass, see
 * docs/decisions).
 *
 *   npm run bench:write-strategies -- [--entities 10000] [--seconds 12] [--rounds 6] [--concurrency 16]
 *
 * Prints, per choice, its rate and the default's in the same rounds, and their ratio. Needs wrk.
 */
import { benchPostgres, call, createDb, runWrk, startBenchServer, untilSettled, type BenchServer } from './benchSupport.ts';
import { BENCH_URN_LUA, benchUrn, passOptions, RETENTION, setRequest } from './setPass.ts';

const { entities: N, rounds: ROUNDS, roundSeconds: ROUND_SECONDS, concurrency: CONCURRENCY } = passOptions();
const TIER = 'urn:li:structuredProperty:bench.tier';

/** The choices measured against the default. */
const CHOICES: { name: string; env: Record<string, string> }[] = [
  { name: 'locked (read under the entity lock)', env: { SVC_WRITE_STRATEGY: 'locked' } },
  { name: 'checked, read for each write', env: { SVC_WRITE_STATE_SOURCES: 'read' } },
  { name: 'checked, grouped reads', env: { SVC_WRITE_STATE_SOURCES: 'grouped' } },
  { name: 'checked, grouped reads and kept rows', env: { SVC_WRITE_STATE_SOURCES: 'grouped,kept' } },
  { name: 'checked, grouped reads and guesses', env: { SVC_WRITE_STATE_SOURCES: 'grouped,guess' } },
];

const patchRequest = {
  method: 'PATCH' as const,
  pathLua: `"/openapi/v3/entity/dataset/" .. ${BENCH_URN_LUA} .. "/structuredProperties"`,
  bodyLua: `'{"patch":[{"op":"add","path":"/properties/${TIER}","value":{"propertyUrn":"${TIER}","values":[{"string":"tier-' .. (i % 3) .. '"}]}}],"arrayPrimaryKeys":{"properties":["propertyUrn"]}}'`,
};

const pgc = await benchPostgres();
const db = await createDb(pgc.adminUrl);
const base = await startBenchServer(db, CONCURRENCY);
const rows: string[] = [];
try {
  const retention = { qualifiedName: 'bench.retention', valueType: 'urn:li:dataType:svc.number', cardinality: 'MULTIPLE', entityTypes: ['urn:li:entityType:svc.dataset'], allowedValues: [30, 60, 90, 365].map((d) => ({ value: { double: d } })) };
  const tier = { qualifiedName: 'bench.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] };
  await call(base.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(RETENTION)}/propertyDefinition`, { value: retention });
  await call(base.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(TIER)}/propertyDefinition`, { value: tier });
  for (let start = 0; start < N; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, N - start) }, (_, k) => ({ urn: benchUrn(start + k), status: { value: { removed: false } } }));
    await call(base.base, 'POST', '/openapi/v3/entity/dataset?async=false', batch);
  }
  await untilSettled(db);
  let offset = 0;
  for (const choice of CHOICES) {
    const other: BenchServer = await startBenchServer(db, CONCURRENCY, choice.env);
    try {
      for (const [pass, req] of [
        ['set', setRequest('?createIfNotExists=false')],
        ['patch', patchRequest],
      ] as const) {
        let a = 0;
        let b = 0;
        let aSeconds = 0;
        let bSeconds = 0;
        for (let k = 0; k < ROUNDS; k++) {
          // Alternately first, so that neither side always meets the other's leftovers.
          for (const [server, isDefault] of k % 2 === 0 ? ([[base, true], [other, false]] as const) : ([[other, false], [base, true]] as const)) {
            const r = runWrk(server.base, req, N, ROUND_SECONDS, CONCURRENCY, offset);
            offset += r.count;
            await untilSettled(db);
            if (isDefault) {
              a += r.count;
              aSeconds += r.count / r.rate;
            } else {
              b += r.count;
              bSeconds += r.count / r.rate;
            }
          }
        }
        const ratio = b / bSeconds / (a / aSeconds);
        rows.push(`| ${choice.name} | ${pass} | ${(b / bSeconds).toFixed(0)} | ${(a / aSeconds).toFixed(0)} | ${ratio.toFixed(2)} |`);
        console.log(rows[rows.length - 1]);
      }
    } finally {
      await other.stop();
    }
  }
  console.log('\nwrite strategies against the default, alternating rounds on one database');
  console.log('| choice | pass | choice writes/s | default writes/s | choice / default |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
} finally {
  await base.stop();
  await pgc.stop();
}

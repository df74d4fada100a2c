/**
 * Where a write's state comes from (server/src/config.ts, writeStrategy), measured A/B in one run: a
 * server reading the state for each write (`SVC_WRITE_STATE_SOURCES=read`) against, one at a time, a
 * server with another choice, on one database, in alternating rounds of the same writes. A source of
 * state beside the plain read stays in svc only while it earns at least 10% on a pass (see
 * docs/decisions/0033-write-state-sources.md).
 *
 *   npm run bench:write-strategies -- [--entities 10000] [--seconds 12] [--rounds 6] [--concurrency 16]
 *                                      [--choices grouped,kept,guess,default,locked] [--passes first,again,patch]
 *                                      [--baseline read|<directory of another checkout>]
 *
 * `--baseline` with a directory measures against that checkout's server with its defaults instead of a
 * read for each write (e.g. `--choices default --baseline ../before`: this build against an earlier one,
 * on the same schema).
 * Three passes per choice, each side on entities of its own (so that neither server's writes change
 * what the other one kept): `first value`, structured-property sets on datasets that have none yet (a
 * fresh pool of 2 × entities per side); `set again`, sets over `entities` datasets whose value is given
 * again (the usual ingestion run); `patch`, patches adding a second property, then giving it again.
 * Before `set again` and `patch` each side writes its datasets once, untimed. Prints, per choice and
 * pass, its rate and the plain read's in the same rounds, and their ratio. Needs wrk.
 */
import { resolve } from 'node:path';
import { benchPostgres, call, createDb, runWrk, startBenchServer, untilSettled, type BenchServer, type WrkRequest } from './benchSupport.ts';
import { BENCH_URN_LUA, benchUrn, passOptions, RETENTION, setRequest } from './setPass.ts';

const {
  entities: N,
  rounds: ROUNDS,
  roundSeconds: ROUND_SECONDS,
  concurrency: CONCURRENCY,
  extra: options,
} = passOptions({ choices: 'grouped,kept,guess,default,locked', passes: 'first,again,patch', baseline: 'read' });
const TIER = 'urn:li:structuredProperty:bench.tier';
/** Datasets of each side's pool of first values, per choice. */
const FRESH = 2 * N;

/** The plain read every choice is measured against (or another checkout's server, see --baseline). */
const BASELINE: { env: Record<string, string>; root?: string } = options.baseline === 'read' ? { env: { SVC_WRITE_STATE_SOURCES: 'read' } } : { env: {}, root: resolve(options.baseline) };
/** The choices measured against it: each source of state alone, all of them (the default), and locks. */
const ALL_CHOICES: { key: string; name: string; env: Record<string, string> }[] = [
  { key: 'grouped', name: 'checked, grouped reads', env: { SVC_WRITE_STATE_SOURCES: 'grouped' } },
  { key: 'kept', name: 'checked, kept rows', env: { SVC_WRITE_STATE_SOURCES: 'kept' } },
  { key: 'guess', name: 'checked, guesses', env: { SVC_WRITE_STATE_SOURCES: 'guess' } },
  { key: 'default', name: 'the default (checked, grouped,kept,guess)', env: {} },
  { key: 'locked', name: 'locked (read under the entity lock)', env: { SVC_WRITE_STRATEGY: 'locked' } },
];
const CHOICES = ALL_CHOICES.filter((c) => options.choices.split(',').includes(c.key));

const patchRequest: WrkRequest = {
  method: 'PATCH',
  pathLua: `"/openapi/v3/entity/dataset/" .. ${BENCH_URN_LUA} .. "/structuredProperties"`,
  bodyLua: `'{"patch":[{"op":"add","path":"/properties/${TIER}","value":{"propertyUrn":"${TIER}","values":[{"string":"tier-' .. (i % 3) .. '"}]}}],"arrayPrimaryKeys":{"properties":["propertyUrn"]}}'`,
};
const setAgain = setRequest('?createIfNotExists=false');
const PASSES = (
  [
    ['first', 'first value', setAgain],
    ['again', 'set again', setAgain],
    ['patch', 'patch', patchRequest],
  ] as const
).filter(([key]) => options.passes.split(',').includes(key));

const pgc = await benchPostgres();
const db = await createDb(pgc.adminUrl);
const base = await startBenchServer(db, CONCURRENCY, BASELINE.env, BASELINE.root);

/** Creates datasets [first, first + n) (their status), 1,000 to a request. */
async function createDatasets(first: number, n: number): Promise<void> {
  for (let start = 0; start < n; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - start) }, (_, k) => ({ urn: benchUrn(first + start + k), status: { value: { removed: false } } }));
    await call(base.base, 'POST', '/openapi/v3/entity/dataset?async=false', batch);
  }
}

/** Writes each of a side's `n` datasets from `first` once, untimed. */
async function warmUp(server: BenchServer, req: WrkRequest, first: number, n: number): Promise<void> {
  for (let done = 0; done < n; ) done += runWrk(server.base, req, n, ROUND_SECONDS, CONCURRENCY, done, first).count;
  await untilSettled(db);
}

const rows: string[] = [];
try {
  const retention = { qualifiedName: 'bench.retention', valueType: 'urn:li:dataType:svc.number', cardinality: 'MULTIPLE', entityTypes: ['urn:li:entityType:svc.dataset'], allowedValues: [30, 60, 90, 365].map((d) => ({ value: { double: d } })) };
  const tier = { qualifiedName: 'bench.tier', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] };
  await call(base.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(RETENTION)}/propertyDefinition`, { value: retention });
  await call(base.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(TIER)}/propertyDefinition`, { value: tier });
  // The plain read's datasets are [0, N), each choice's [N, 2N); first values come from fresh pools after them.
  await createDatasets(0, 2 * N);
  await untilSettled(db);
  for (const [c, choice] of CHOICES.entries()) {
    const other: BenchServer = await startBenchServer(db, CONCURRENCY, choice.env);
    const fresh = 2 * N + c * 2 * FRESH;
    if (PASSES.some(([key]) => key === 'first')) {
      await createDatasets(fresh, 2 * FRESH);
      await untilSettled(db);
    }
    try {
      for (const [, pass, req] of PASSES) {
        const firstValues = pass === 'first value';
        const sides = new Map<BenchServer, { first: number; modulo: number; offset: number; count: number; seconds: number }>([
          [base, { first: firstValues ? fresh : 0, modulo: firstValues ? FRESH : N, offset: 0, count: 0, seconds: 0 }],
          [other, { first: firstValues ? fresh + FRESH : N, modulo: firstValues ? FRESH : N, offset: 0, count: 0, seconds: 0 }],
        ]);
        if (!firstValues) for (const [server, side] of sides) await warmUp(server, req, side.first, side.modulo);
        for (let k = 0; k < ROUNDS; k++) {
          // Alternately first, so that neither side always meets the other's leftovers.
          for (const server of k % 2 === 0 ? [base, other] : [other, base]) {
            const side = sides.get(server)!;
            const r = runWrk(server.base, req, side.modulo, ROUND_SECONDS, CONCURRENCY, side.offset, side.first);
            side.offset += r.count;
            side.count += r.count;
            side.seconds += r.count / r.rate;
            await untilSettled(db);
          }
        }
        const [a, b] = [sides.get(base)!, sides.get(other)!];
        if (firstValues && Math.max(a.count, b.count) > FRESH) console.log(`# ${choice.name}: more first values than the pool holds; the later ones were values given again`);
        const ratio = b.count / b.seconds / (a.count / a.seconds);
        rows.push(`| ${choice.name} | ${pass} | ${(b.count / b.seconds).toFixed(0)} | ${(a.count / a.seconds).toFixed(0)} | ${ratio.toFixed(2)} |`);
        console.log(rows[rows.length - 1]);
      }
    } finally {
      await other.stop();
    }
  }
  const against = options.baseline === 'read' ? 'a read for each write' : `the server of ${options.baseline}`;
  console.log(`\nwrite strategies against ${against}, alternating rounds on one database`);
  console.log('| choice | pass | choice writes/s | baseline writes/s | choice / baseline |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
} finally {
  await base.stop();
  await pgc.stop();
}

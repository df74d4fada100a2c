/**
 * The ceiling of an HTTP write on this machine: a bare `node:http` server in its own process (see
 * floorServer.ts: one `JSON.parse` and one `pg` upsert per request, nothing else) against raw `pg`
 * upserts of the same rows, driven and measured exactly as `bench:structured-properties` drives its
 * set pass (wrk at the same concurrency, alternating rounds). Whatever svc does per write on top of
 * that (validation, history, the record of assignments, search) can only lower its ratio below this one.
 *
 *   npm run bench:http-floor -- [--entities 10000] [--seconds 12] [--rounds 6] [--concurrency 16]
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../harness/component.ts';
import { alternatingRounds, benchPostgres, createDb, printTable, rawUpserts, runWrk } from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    entities: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '12' },
    rounds: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '16' },
  },
});
const ROUNDS = Number(args.rounds);
const ROUND_SECONDS = Math.max(1, Math.round(Number(args.seconds) / ROUNDS));
const N = Number(args.entities);
const CONCURRENCY = Number(args.concurrency);
const RETENTION = 'urn:li:structuredProperty:bench.retention';
const DAYS = [30, 60, 90, 365];
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:bench,db.t${i},PROD)`;
const encUrnLua = `"urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Abench%2Cdb.t" .. i .. "%2CPROD%29"`;

const pgc = await benchPostgres();
const floorDb = await createDb(pgc.adminUrl);
const rawDb = await createDb(pgc.adminUrl);
const port = await freePort();
const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'floorServer.ts')], {
  env: { ...process.env, DATABASE_URL: floorDb, PORT: String(port), POOL_SIZE: String(CONCURRENCY) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the bare server exited (${code})`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const set = await alternatingRounds('bare node:http + one pg upsert per request', ROUNDS, async (_round, offset) => {
    const http = runWrk(
      base,
      {
        method: 'POST',
        pathLua: `"/openapi/v3/entity/dataset/" .. ${encUrnLua} .. "/structuredProperties"`,
        bodyLua: `'{"value":{"properties":[{"propertyUrn":"${RETENTION}","values":[{"double":' .. ({30, 60, 90, 365})[i % 4 + 1] .. '}]}]}}'`,
      },
      N,
      ROUND_SECONDS,
      CONCURRENCY,
      offset,
    );
    const raw = await rawUpserts(rawDb, http.count, CONCURRENCY, (k) => {
      const i = (offset + k) % N;
      return { urn: urnOf(i), aspect: 'structuredProperties', value: { properties: [{ propertyUrn: RETENTION, values: [{ double: DAYS[i % 4] }] }] } };
    });
    return { http, raw };
  });
  printTable(`HTTP floor: ${N} entities, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${ROUND_SECONDS} s, Postgres ${pgc.label}`, [set]);
} finally {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  await pgc.stop();
}

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
import { freePort } from '../harness/component.ts';
import { alternatingRounds, benchPostgres, createDb, printTable, rawUpserts, runWrk } from './benchSupport.ts';
import { passOptions, setRequest, setRow } from './setPass.ts';

const { entities: N, rounds: ROUNDS, roundSeconds: ROUND_SECONDS, concurrency: CONCURRENCY } = passOptions();

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
    const http = runWrk(base, setRequest(), N, ROUND_SECONDS, CONCURRENCY, offset);
    const raw = await rawUpserts(rawDb, http.count, CONCURRENCY, (k) => setRow((offset + k) % N));
    return { http, raw };
  });
  printTable(`HTTP floor: ${N} entities, concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${ROUND_SECONDS} s, Postgres ${pgc.label}`, [set]);
} finally {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  await pgc.stop();
}

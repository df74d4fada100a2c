/**
 * Where svc's time goes on the batches of a `datahub ingest`: the bodies bench:ingest recorded
 * (`npm run bench:ingest -- --keep <dir>` leaves them in `<dir>/bodies.jsonl`) sent again to
 * `ingestProposalBatch` of a fresh svc, on a Postgres cluster of their own with `pg_stat_statements`
 * and `track_functions = all`; prints the wall time, the server's CPU, and the statements and functions
 * that took the most of Postgres's time. The first `--warm-up` batches are not counted.
 *
 *   npx tsx test/bench/ingestProfile.ts <dir>/bodies.jsonl [--concurrency 1] [--warm-up 20] [--idle-seconds 0] [--server <another build's dist/server/src/main.js>]
 *
 * `--idle-seconds` first prints the server's CPU while idle for that long (after the warm-up, its search
 * delivery done): what a server that is up longer for the same load spends beside it.
 *
 * `--server` runs another build's compiled server instead of this tree's (e.g. a copy of `dist/` with a
 * migration changed, to try a change of a write statement). SVC_BENCH_SERVER_NODE_ARGS=--cpu-prof adds
 * a CPU profile of the server (this tree's).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePort } from '../harness/component.ts';
import { startPostgresCluster } from '../harness/postgres.ts';
import { BENCH_TOKEN, createDb, startBenchServer, untilSettled, SERVER_NODE_ARGS, type BenchServer } from './benchSupport.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { concurrency: { type: 'string', default: '1' }, 'warm-up': { type: 'string', default: '20' }, 'idle-seconds': { type: 'string', default: '0' }, server: { type: 'string' } },
});
if (positionals.length !== 1) throw new Error('usage: npx tsx test/bench/ingestProfile.ts <bodies.jsonl> [--concurrency 1] [--warm-up 20] [--server <main.js>]');
const bodies = readFileSync(positionals[0]!, 'utf8').trim().split('\n').map((b) => Buffer.from(b));
const CONCURRENCY = Number(args.concurrency);
const WARM_UP = Number(args['warm-up']);

/** Another build's compiled server on `databaseUrl`, started as startBenchServer starts this tree's. */
async function otherServer(entry: string, databaseUrl: string): Promise<BenchServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, entry], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), SVC_ADMIN_TOKEN: BENCH_TOKEN, SVC_LOG_LEVEL: 'warn', SVC_DB_POOL_SIZE: '16' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let t = 0; !(await fetch(`${base}/ready`).then((r) => r.ok, () => false)); t++) {
    if (t > 600) throw new Error(`${entry} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    cpuMicros: () => {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10_000;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** POSTs `payloads` to the batch route, `concurrency` in flight on kept-alive connections; resolves to the wall time in seconds. */
async function send(base: string, payloads: readonly Buffer[], concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const { hostname, port } = new URL(base);
  const one = (body: Buffer) =>
    new Promise<void>((done, fail) => {
      const req = http.request(
        { agent, hostname, port, method: 'POST', path: '/aspects?action=ingestProposalBatch', headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => ((res.statusCode ?? 0) >= 300 ? fail(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 2000)}`)) : done()));
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  let next = 0;
  const start = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < payloads.length; i = next++) await one(payloads[i]!);
      }),
    );
  } finally {
    agent.destroy();
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const cluster = await startPostgresCluster({
  settings: { max_connections: '400', shared_buffers: '256MB', shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all', track_functions: 'all' },
});
try {
  const db = await createDb(cluster.url);
  const server = args.server ? await otherServer(args.server, db) : await startBenchServer(db, 16);
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await send(server.base, bodies.slice(0, WARM_UP), 1);
    await untilSettled(db);
    const idle = Number(args['idle-seconds']);
    if (idle > 0) {
      const before = server.cpuMicros();
      await new Promise((r) => setTimeout(r, idle * 1000));
      console.log(`the server idle for ${idle} s: ${((server.cpuMicros() - before) / 1e6).toFixed(2)} s of CPU`);
    }
    await client.query('SELECT pg_stat_statements_reset(), pg_stat_reset()');
    const cpu0 = server.cpuMicros();
    const wall = await send(server.base, bodies.slice(WARM_UP), CONCURRENCY);
    const cpu = (server.cpuMicros() - cpu0) / 1e6;
    console.log(`${bodies.length - WARM_UP} batches, ${CONCURRENCY} in flight, server ${args.server ?? 'of this tree'}: ${wall.toFixed(1)} s, server CPU ${cpu.toFixed(1)} s`);
    const statements = await client.query<{ ms: number; calls: string; rows: string; query: string }>(
      `SELECT round(total_exec_time)::int AS ms, calls, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS query
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time DESC LIMIT 20`,
    );
    console.log('\n| ms | calls | rows | statement (a function\'s time includes the statements it runs, and theirs their triggers\') |\n|---|---|---|---|');
    for (const r of statements.rows) console.log(`| ${r.ms} | ${r.calls} | ${r.rows} | \`${r.query.replace(/\|/g, '\\|')}\` |`);
    const functions = await client.query<{ funcname: string; calls: string; total: number; self: number }>(
      'SELECT funcname, calls, round(total_time)::int AS total, round(self_time)::int AS self FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 12',
    );
    console.log('\n| function | calls | total ms | own ms |\n|---|---|---|---|');
    for (const r of functions.rows) console.log(`| ${r.funcname} | ${r.calls} | ${r.total} | ${r.self} |`);
    await untilSettled(db, 600_000);
  } finally {
    await client.end();
    await server.stop();
  }
} finally {
  await cluster.close();
}

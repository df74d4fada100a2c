/**
 * Where svc's time goes on the batches of a `datahub ingest`: the bodies bench:ingest recorded
 * (`npm run bench:ingest -- --keep <dir>` leaves them in `<dir>/bodies.jsonl`) sent again to
 * `ingestProposalBatch` of a fresh svc, on a Postgres cluster of their own with `pg_stat_statements`
 * and `track_functions = all`; prints the wall time, the server's CPU, and the statements and functions
 * that took the most of Postgres's time. The first `--warm-up` batches are not counted.
 *
 *   npx tsx test/bench/ingestProfile.ts <dir>/bodies.jsonl [--concurrency 1] [--warm-up 20] [--idle-seconds 0] [--paced <dir>/spans.jsonl] [--server <another build's dist/server/src/main.js>]
 *
 * `--paced <dir>/spans.jsonl` sends each batch when the client sent its batch of that rank (their start
 * times as recorded), instead of as soon as the one before is answered, and prints the mean time of a
 * request: svc's requests with the client's pauses between them, without the client running.
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
  options: { concurrency: { type: 'string', default: '1' }, 'warm-up': { type: 'string', default: '20' }, 'idle-seconds': { type: 'string', default: '0' }, server: { type: 'string' }, paced: { type: 'string' } },
});
if (positionals.length !== 1) throw new Error('usage: npx tsx test/bench/ingestProfile.ts <bodies.jsonl> [--concurrency 1] [--warm-up 20] [--idle-seconds 0] [--paced <spans.jsonl>] [--server <main.js>]');
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
    pid: child.pid!,
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

/** Milliseconds after the first at which the client sent each of its batches, in order (from bench:ingest's spans.jsonl). */
function pacing(spansFile: string): number[] {
  const starts = readFileSync(spansFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { t0: number; path: string })
    .filter((x) => x.path.includes('action=ingestProposalBatch'))
    .map((x) => x.t0)
    .sort((a, b) => a - b);
  return starts.map((t) => (t - starts[0]!) * 1000);
}

/** Answer times of the requests `send` made (ms). */
const answered: number[] = [];

/**
 * POSTs `payloads` to the batch route, `concurrency` in flight on kept-alive connections, or each at its
 * time in `at` (ms after the first); resolves to the wall time in seconds.
 */
async function send(base: string, payloads: readonly Buffer[], concurrency: number, at?: readonly number[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: at ? 64 : concurrency });
  const { hostname, port } = new URL(base);
  const one = (body: Buffer) =>
    new Promise<void>((done, fail) => {
      const sent = process.hrtime.bigint();
      const req = http.request(
        { agent, hostname, port, method: 'POST', path: '/aspects?action=ingestProposalBatch', headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            answered.push(Number(process.hrtime.bigint() - sent) / 1e6);
            if ((res.statusCode ?? 0) >= 300) fail(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 2000)}`));
            else done();
          });
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  let next = 0;
  const start = process.hrtime.bigint();
  try {
    if (at) {
      const since = () => Number(process.hrtime.bigint() - start) / 1e6;
      const pending: Promise<void>[] = [];
      for (const [i, body] of payloads.entries()) {
        const wait = at[i]! - at[0]! - since();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(one(body));
      }
      await Promise.all(pending);
    } else {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let i = next++; i < payloads.length; i = next++) await one(payloads[i]!);
        }),
      );
    }
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
    answered.length = 0;
    const at = args.paced ? pacing(args.paced).slice(WARM_UP) : undefined;
    const wall = await send(server.base, bodies.slice(WARM_UP), CONCURRENCY, at);
    const cpu = (server.cpuMicros() - cpu0) / 1e6;
    const mean = answered.reduce((a, x) => a + x, 0) / answered.length;
    console.log(
      `${bodies.length - WARM_UP} batches, ${at ? 'at the client\'s pace' : `${CONCURRENCY} in flight`}, server ${args.server ?? 'of this tree'}: ${wall.toFixed(1)} s, ${mean.toFixed(0)} ms a request on average, server CPU ${cpu.toFixed(1)} s`,
    );
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

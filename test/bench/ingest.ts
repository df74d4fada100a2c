/**
 * Ingestion benchmark: DataHub's own `datahub ingest` of a file of metadata change proposals (the file
 * source, the datahub-rest sink as it comes: mode ASYNC_BATCH, 15 threads, batches of up to 100) into
 * svc, against the same batches sent straight to svc's Rest.li route, in the same run.
 *
 *   npm run bench:ingest -- [--proposals 100000] [--client 1.7.0.17|0.14.1.12] [--threads 15] [--rounds 1] [--keep <dir>] [--switch-interval <s>] [--pin] [--paced]
 *
 * - The file: `--proposals` proposals written by test/bench/ingestProposals.py with the SDK's own
 *   classes in the client's virtualenv (datasets with datasetProperties, schemaMetadata, status,
 *   subTypes, browsePathsV2, ownership, globalTags, and upstreamLineage for one in three).
 * - A, the client: `datahub ingest` of the file into a fresh svc (Postgres backend, a fresh database),
 *   through test/bench/ingestTimed.py, which times every HTTP request the client makes and keeps the
 *   body of each `ingestProposalBatch` it sent. Its wall time is from the start of the Python process to
 *   its exit. svc's time is the union of the client's request spans (time during which at least one
 *   request was waiting on svc), the client's own time the rest of the wall time (reading and parsing the
 *   file, building and serialising the proposals, the client's start). The sum of the server's own spans
 *   of these requests (its `svc_http_request_duration_seconds` histogram on `/metrics`) is shown beside
 *   the client's sum of the same spans: how much of the wait was the server's.
 * - B, svc's own route: the bodies A sent, unchanged (the same batches, the same proposals in the same
 *   order), POSTed to `/aspects?action=ingestProposalBatch` of another fresh svc from this process with
 *   `--threads` requests in flight, as the sink's threads are; its wall time from the first request to
 *   the last answer. Then again one request at a time: the sink has 15 threads, but the client keeps
 *   about one request in flight (the bench prints how many, the client's sum of its request spans over
 *   their union), since making the next batch takes it longer than svc takes to write one.
 * - raw: the rows of those batches upserted by a multi-row `INSERT … SELECT FROM unnest(…) ON CONFLICT`
 *   per batch into a plain table of the shape of svc's `aspects` (no key aspects, no history, no search
 *   outbox), `--threads` at a time.
 *
 * ratio = svc's own time for B one at a time / svc's own time in A (target ≥ 0.8): 1 when svc serves
 * DataHub's client as fast as the same batches sent the same way straight to its route. svc's own time
 * is the sum of the server's spans of the requests (its `svc_http_request_duration_seconds`, from the
 * request's headers read to its answer handed to the socket). The client's clock (its request spans)
 * is reported beside it and runs longer: it also holds the client's own handling of each request in
 * Python (requests and urllib3 preparing it, sending the body, reading the answer), and the waits of the
 * request's thread for its turn at the interpreter lock while the client's other threads build the next
 * batches (`--switch-interval 0.0002` makes the turns shorter than Python's 5 ms, and the difference
 * between the two clocks shrinks: an experiment, not the client as it comes). B at the sink's threads
 * and raw are reported against it too; the servers' CPU
 * time (from /proc) is compared as well. Search delivery of each load is waited for after it
 * (untilSettled) and not timed. With `--rounds` above 1, A and B run again on fresh databases, B first
 * in even rounds. `--keep <dir>` keeps the file and A's recorded spans and bodies there (ingestProfile.ts
 * sends those bodies again to show where svc's time goes).
 *
 * `--paced` adds B at the client's pace: one at a time, each batch sent when the client sent its own (the
 * start times A recorded), so that svc has the pauses between batches it had in A.
 *
 * `--pin` puts svc and its Postgres on the first CPU and the client (the Python process in A, this
 * process in B) on the others, in A and B alike: the client's work then does not share svc's CPU, as
 * when it runs on a machine of its own. Without it every process shares every CPU, as on one small
 * machine, and svc's requests inside the ingest take longer while the client's Python runs.
 *
 * Uses DATABASE_URL when set (a cluster's admin URL), else starts Debian's PostgreSQL 15 through the
 * test harness; the DataHub clients are provisioned by `test/infra/provision.sh datahub`.
 */
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { BENCH_TOKEN, RAW_TABLE, benchPostgres, createDb, startBenchServer, untilSettled, type BenchServer } from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    proposals: { type: 'string', default: '100000' },
    client: { type: 'string', default: '1.7.0.17' },
    threads: { type: 'string', default: '15' },
    rounds: { type: 'string', default: '1' },
    keep: { type: 'string' },
    'switch-interval': { type: 'string' },
    pin: { type: 'boolean', default: false },
    paced: { type: 'boolean', default: false },
  },
});
const PROPOSALS = Number(args.proposals);
const THREADS = Number(args.threads);
const ROUNDS = Number(args.rounds);
const ROOT = resolve(import.meta.dirname, '../..');
/** The server's Postgres pool: as the other benchmarks give it, above the requests in flight. */
const POOL_SIZE = 16;

/** The client's virtualenv `bin` folder of the version asked for, provisioned if missing. */
function clientBin(version: string): string {
  const out = execFileSync('bash', [join(ROOT, 'test/infra/provision.sh'), 'datahub'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const bins = /^SVC_DATAHUB_BINS=(.*)$/m.exec(out)?.[1]?.split(' ') ?? [];
  const bin = bins.find((b) => b.endsWith(`/datahub-${version}/bin`));
  if (!bin) throw new Error(`--client ${version}: provision.sh installs ${bins.map((b) => /datahub-([^/]+)\/bin$/.exec(b)?.[1]).join(', ')}`);
  return bin;
}

/**
 * Runs a program of the client's virtualenv as the compatibility tests do (its own HOME, no telemetry, no
 * calls out); resolves to its wall time and its CPU time in seconds (read from /proc every 200 ms while
 * it runs, so up to 200 ms short).
 */
/** `--switch-interval`: the client's Python thread switch interval (see ingestTimed.py), Python's own (5 ms) unless given. */
const switchInterval: Record<string, string> = args['switch-interval'] ? { SVC_BENCH_SWITCH_INTERVAL: args['switch-interval'] } : {};

function runClient(bin: string, home: string, argv: string[], env: Record<string, string> = {}): Promise<{ seconds: number; cpu: number; out: string }> {
  return new Promise((done, fail) => {
    const start = process.hrtime.bigint();
    const child = spawn(join(bin, 'python'), argv, {
      cwd: home,
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: home, DATAHUB_TELEMETRY_ENABLED: 'false', HTTP_PROXY: 'http://127.0.0.1:9', HTTPS_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1,localhost', ...switchInterval, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let cpu = 0;
    const sample = setInterval(() => {
      try {
        const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        cpu = (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        // exited
      }
    }, 200);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c));
    child.stderr!.on('data', (c: Buffer) => (out += c));
    child.on('error', fail);
    child.on('exit', (code) => {
      clearInterval(sample);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (code === 0) done({ seconds, cpu, out });
      else fail(new Error(`${argv.join(' ')} exited with ${code}:\n${out.slice(-4000)}`));
    });
  });
}

interface Span {
  t0: number;
  t1: number;
  method: string;
  path: string;
  status: number | null;
  bytes: number;
}

/** Seconds covered by at least one of the spans. */
function union(spans: readonly Span[]): number {
  const sorted = [...spans].sort((a, b) => a.t0 - b.t0);
  let total = 0;
  let end = -Infinity;
  for (const s of sorted) {
    if (s.t1 <= end) continue;
    total += s.t1 - Math.max(s.t0, end);
    end = s.t1;
  }
  return total;
}

/** The server's own count and sum of seconds of `POST /aspects` requests, from its /metrics. */
async function serverAspectPosts(base: string): Promise<{ count: number; seconds: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (suffix: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`svc_http_request_duration_seconds_${suffix}{`) && l.includes('method="POST"') && /route="[^"]*\/aspects"/.test(l))
      .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return { count: read('count'), seconds: read('sum') };
}

/** Aspect rows svc holds (latest versions) but the client's record of its run (a `dataHubExecutionRequest`, not sent in a batch), to check that both loads wrote the same. */
async function storedAspects(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM aspects WHERE version = 0 AND urn NOT LIKE 'urn:li:dataHubExecutionRequest:%'`)).rows[0]!.n;
  } finally {
    await client.end();
  }
}

interface ClientRun {
  wall: number;
  /** The client's CPU seconds (all its threads). */
  clientCpu: number;
  /** Union of the spans of all the client's requests, and of its ingestProposalBatch requests alone. */
  svc: number;
  svcBatches: number;
  /** The client's sum of its batch requests' spans, and the server's own sum of them. */
  clientSum: number;
  serverSum: number;
  requests: number;
  batches: string[];
  /** When the client sent each batch, in seconds after its first. */
  batchStarts: number[];
  proposals: number;
  /** The server's CPU seconds for the load and its search delivery (until settled). */
  cpu: number;
  stored: number;
  settle: number;
}

/** `--pin`: the CPU of svc and its Postgres, and those of the client. */
const SERVER_CPUS = '0';
const CLIENT_CPUS = `1-${availableParallelism() - 1}`;

/** Sets the CPUs of a process, all its threads and all the processes below it (taskset). */
function pin(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === pid) pin(Number(entry), cpus);
    } catch {
      // exited
    }
  }
}

/** Pins the Postgres of `url` (its postmaster and the processes below it) to the server's CPU. */
async function pinPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const postmaster = Number(readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    pin(postmaster, SERVER_CPUS);
  } finally {
    await client.end();
  }
}

async function serverOn(adminUrl: string): Promise<{ db: string; server: BenchServer }> {
  const db = await createDb(adminUrl);
  const server = await startBenchServer(db, POOL_SIZE);
  if (args.pin) pin(server.pid, SERVER_CPUS);
  return { db, server };
}

/** A: `datahub ingest` of the file into a fresh svc. */
async function runA(adminUrl: string, bin: string, dir: string, file: string): Promise<ClientRun> {
  const { db, server } = await serverOn(adminUrl);
  try {
    const recipe = join(dir, 'recipe.yaml');
    writeFileSync(
      recipe,
      `source:\n  type: file\n  config:\n    path: ${file}\nsink:\n  type: datahub-rest\n  config:\n    server: ${server.base}\n    token: ${BENCH_TOKEN}\n    max_threads: ${THREADS}\n`,
    );
    const spansFile = join(dir, 'spans.jsonl');
    const bodiesFile = join(dir, 'bodies.jsonl');
    const before = await serverAspectPosts(server.base);
    const cpu0 = server.cpuMicros();
    const { seconds: wall, cpu: clientCpu, out } = await runClient(bin, dir, [join(ROOT, 'test/bench/ingestTimed.py'), spansFile, bodiesFile, 'ingest', '-c', recipe]);
    const after = await serverAspectPosts(server.base);
    if (/'failures': \[\{|Failed to|Pipeline finished with at least .* failures/.test(out)) throw new Error(`datahub ingest reported failures:\n${out.slice(-4000)}`);
    const spans = readFileSync(spansFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Span);
    const batchSpans = spans.filter((s) => s.path.includes('action=ingestProposalBatch'));
    const bad = spans.filter((s) => s.status === null || s.status >= 300);
    if (bad.length) throw new Error(`the client had ${bad.length} failed requests, e.g. ${JSON.stringify(bad[0])}`);
    const batches = readFileSync(bodiesFile, 'utf8').trim().split('\n');
    const proposals = batches.reduce((a, b) => a + (JSON.parse(b) as { proposals: unknown[] }).proposals.length, 0);
    const settled = Date.now();
    await untilSettled(db, 600_000);
    const cpu = (server.cpuMicros() - cpu0) / 1e6;
    return {
      wall,
      clientCpu,
      svc: union(spans),
      svcBatches: union(batchSpans),
      clientSum: spans.filter((s) => s.method === 'POST' && s.path.startsWith('/aspects')).reduce((a, s) => a + s.t1 - s.t0, 0),
      serverSum: after.seconds - before.seconds,
      requests: spans.length,
      batches,
      batchStarts: batchSpans.map((x) => x.t0 - batchSpans[0]!.t0).sort((x, y) => x - y),
      proposals,
      cpu,
      stored: await storedAspects(db),
      settle: (Date.now() - settled) / 1000,
    };
  } finally {
    await server.stop();
  }
}

/**
 * Sends `bodies` as POSTs to `path` on `base` with `concurrency` in flight on kept-alive connections, or
 * each at its time in `at` (seconds after the first) and not before the one before it is answered;
 * resolves to the wall time in seconds.
 */
async function post(base: string, path: string, bodies: readonly string[], concurrency: number, at?: readonly number[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const { hostname, port } = new URL(base);
  const send = (body: Buffer) =>
    new Promise<void>((done, fail) => {
      const req = http.request(
        { agent, hostname, port, method: 'POST', path, headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json', 'x-restli-protocol-version': '2.0.0', 'content-length': body.length } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => ((res.statusCode ?? 0) >= 300 ? fail(new Error(`POST ${path}: HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 2000)}`)) : done()));
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  const payloads = bodies.map((b) => Buffer.from(b));
  let next = 0;
  const start = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < payloads.length; i = next++) {
          const wait = at ? at[i]! * 1000 - Number(process.hrtime.bigint() - start) / 1e6 : 0;
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          await send(payloads[i]!);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

interface RouteRun {
  wall: number;
  /** The server's own sum of its request spans (its histogram). */
  serverSum: number;
  cpu: number;
  stored: number;
  settle: number;
}

/** B: the same bodies straight to svc's Rest.li batch route, on a fresh svc, `concurrency` in flight (or one at a time at the times `at`). */
async function runB(adminUrl: string, batches: readonly string[], concurrency: number, at?: readonly number[]): Promise<RouteRun> {
  const { db, server } = await serverOn(adminUrl);
  try {
    const cpu0 = server.cpuMicros();
    const before = await serverAspectPosts(server.base);
    const wall = await post(server.base, '/aspects?action=ingestProposalBatch', batches, concurrency, at);
    const serverSum = (await serverAspectPosts(server.base)).seconds - before.seconds;
    const settled = Date.now();
    await untilSettled(db, 600_000);
    const cpu = (server.cpuMicros() - cpu0) / 1e6;
    return { wall, serverSum, cpu, stored: await storedAspects(db), settle: (Date.now() - settled) / 1000 };
  } finally {
    await server.stop();
  }
}

interface Proposal {
  entityUrn: string;
  aspectName: string;
  aspect: { value: string };
  systemMetadata?: unknown;
}

/** raw: each batch's rows as one multi-row upsert (the last of a repeated urn and aspect in a batch), `THREADS` at a time. */
async function runRaw(adminUrl: string, batches: readonly string[]): Promise<number> {
  const db = await createDb(adminUrl);
  const rows = batches.map((b) => {
    const byKey = new Map<string, [string, string, string, string]>();
    for (const p of (JSON.parse(b) as { proposals: Proposal[] }).proposals) {
      byKey.set(`${p.entityUrn}\n${p.aspectName}`, [p.entityUrn, p.aspectName, p.aspect.value, JSON.stringify(p.systemMetadata ?? {})]);
    }
    const cols: [string[], string[], string[], string[]] = [[], [], [], []];
    for (const r of byKey.values()) r.forEach((v, c) => cols[c]!.push(v));
    return cols;
  });
  const pool = new pg.Pool({ connectionString: db, max: THREADS });
  try {
    await pool.query(RAW_TABLE);
    let next = 0;
    const start = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: THREADS }, async () => {
        for (let i = next++; i < rows.length; i = next++) {
          await pool.query(
            `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
             SELECT u, a, 0, m::json, s::jsonb, 'urn:li:corpuser:bench' FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(u, a, m, s)
             ON CONFLICT (urn, aspect, version) DO UPDATE SET metadata = excluded.metadata, system_metadata = excluded.system_metadata`,
            rows[i]!,
          );
        }
      }),
    );
    return Number(process.hrtime.bigint() - start) / 1e9;
  } finally {
    await pool.end();
  }
}

const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);
const rate = (n: number, s: number) => Math.round(n / s).toLocaleString('en-US');

const bin = clientBin(args.client!);
const dir = args.keep ? resolve(args.keep) : mkdtempSync(join(tmpdir(), 'svc-bench-ingest-'));
mkdirSync(dir, { recursive: true });
if (args.pin) {
  if (availableParallelism() < 2) throw new Error('--pin needs two CPUs or more');
  pin(process.pid, CLIENT_CPUS);
}
const pgc = await benchPostgres();
try {
  if (args.pin) await pinPostgres(pgc.adminUrl);
  const file = join(dir, 'proposals.json');
  const generated = await runClient(bin, dir, [join(ROOT, 'test/bench/ingestProposals.py'), file, String(PROPOSALS)]);
  console.log(`generated ${generated.out.trim()} in ${f1(generated.seconds)} s (${file})`);
  const rounds: { a: ClientRun; b: RouteRun; b1: RouteRun; paced?: RouteRun; raw: number }[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    let a: ClientRun;
    let b: RouteRun;
    let b1: RouteRun;
    if (k % 2 === 0) {
      a = await runA(pgc.adminUrl, bin, dir, file);
      b = await runB(pgc.adminUrl, a.batches, THREADS);
      b1 = await runB(pgc.adminUrl, a.batches, 1);
    } else {
      // B first needs A's batches: those of round 0, the same file.
      b1 = await runB(pgc.adminUrl, rounds[0]!.a.batches, 1);
      b = await runB(pgc.adminUrl, rounds[0]!.a.batches, THREADS);
      a = await runA(pgc.adminUrl, bin, dir, file);
    }
    for (const [label, run] of [['B', b], ['B, one at a time', b1]] as const) {
      if (a.stored !== run.stored) throw new Error(`A stored ${a.stored} aspects, ${label} ${run.stored}: the two loads did not write the same`);
    }
    const paced = args.paced ? await runB(pgc.adminUrl, a.batches, 1, (rounds[0]?.a ?? a).batchStarts) : undefined;
    if (paced && paced.stored !== a.stored) throw new Error(`A stored ${a.stored} aspects, B at the client's pace ${paced.stored}`);
    const raw = await runRaw(pgc.adminUrl, a.batches);
    rounds.push({ a, b, b1, paced, raw });
    const sizes = a.batches.map((x) => (JSON.parse(x) as { proposals: unknown[] }).proposals.length);
    console.log(
      `round ${k + 1}: A wall ${f1(a.wall)} s, svc ${f1(a.svc)} s (batches ${f1(a.svcBatches)} s; ${a.requests} requests, ${a.batches.length} batches of ${Math.min(...sizes)}-${Math.max(...sizes)}, mean ${f1(a.proposals / a.batches.length)}), ` +
        `client sum ${f1(a.clientSum)} s / server sum ${f1(a.serverSum)} s (${f1(a.clientSum / a.svcBatches)} in flight on average); B ${f1(b.wall)} s; B one at a time ${f1(b1.wall)} s; raw ${f1(raw)} s; server CPU (load and its search delivery) A ${f1(a.cpu)} s / B ${f1(b.cpu)} s / B one at a time ${f1(b1.cpu)} s; ` +
        `${a.stored} aspects stored each; search settled ${f1(a.settle)} s / ${f1(b.settle)} s / ${f1(b1.settle)} s after`,
    );
  }
  const sum = (f: (r: (typeof rounds)[number]) => number) => rounds.reduce((x, r) => x + f(r), 0);
  const n = rounds[0]!.a.proposals;
  const [wall, svc, b, b1, raw, cpuA, cpuB, cpuB1] = [sum((r) => r.a.wall), sum((r) => r.a.svc), sum((r) => r.b.wall), sum((r) => r.b1.wall), sum((r) => r.raw), sum((r) => r.a.cpu), sum((r) => r.b.cpu), sum((r) => r.b1.cpu)];
  const inFlight = sum((r) => r.a.clientSum) / sum((r) => r.a.svcBatches);
  const placement = args.pin ? `svc and Postgres on CPU ${SERVER_CPUS}, the client on CPUs ${CLIENT_CPUS}` : 'every process on every CPU';
  console.log(`\ningest: \`datahub ingest\` (acryl-datahub ${args.client}, file source, datahub-rest sink, ${THREADS} threads) of ${n.toLocaleString('en-US')} proposals against the same batches straight to svc, ${ROUNDS} round(s), Postgres ${pgc.label}, ${placement}`);
  const serverSum = sum((r) => r.a.serverSum);
  const [b1Server, bServer] = [sum((r) => r.b1.serverSum), sum((r) => r.b.serverSum)];
  const perRound = (f: (r: (typeof rounds)[number]) => number) => (ROUNDS > 1 ? ` (per round ${rounds.map((r) => f2(f(r))).join(' / ')})` : '');
  console.log('| measure | seconds | proposals/s | ratio |');
  console.log('|---|---|---|---|');
  console.log(`| A: \`datahub ingest\`, wall | ${f1(wall)} | ${rate(n * ROUNDS, wall)} | |`);
  console.log(`| A: svc's own time (the server's spans of the client's requests, summed; ${f1(inFlight)} in flight on average) | ${f1(serverSum)} | ${rate(n * ROUNDS, serverSum)} | 1 |`);
  console.log(`| B one at a time, svc's own time (the same batches in the same order, as the client sends them) | ${f1(b1Server)} | ${rate(n * ROUNDS, b1Server)} | **${f2(b1Server / serverSum)}**${perRound((r) => r.b1.serverSum / r.a.serverSum)} |`);
  console.log(`| B one at a time, wall | ${f1(b1)} | ${rate(n * ROUNDS, b1)} | ${f2(b1 / serverSum)} |`);
  if (args.paced) {
    const pacedServer = sum((r) => r.paced!.serverSum);
    console.log(`| B at the client's pace (one at a time, each batch when the client sent it), svc's own time; wall ${f1(sum((r) => r.paced!.wall))} s | ${f1(pacedServer)} | ${rate(n * ROUNDS, pacedServer)} | **${f2(pacedServer / serverSum)}**${perRound((r) => r.paced!.serverSum / r.a.serverSum)} |`);
  }
  console.log(`| B, ${THREADS} in flight (the sink's threads), wall; svc's own time summed ${f1(bServer)} s | ${f1(b)} | ${rate(n * ROUNDS, b)} | ${f2(b / serverSum)} |`);
  console.log(`| A by the client's clock: the union of its request spans (svc's time and the client's own handling of its requests) | ${f1(svc)} | ${rate(n * ROUNDS, svc)} | B one at a time ${f2(b1 / svc)}, B ${f2(b / svc)} |`);
  console.log(`| A: the client's own time (wall − the union of its request spans) | ${f1(wall - svc)} | | |`);
  const clientCpu = sum((r) => r.a.clientCpu);
  console.log(`| A: the client's CPU (all its threads, on the machine svc shares) | ${f1(clientCpu)} | | ${f2(clientCpu / wall)} of a core over the wall time |`);
  console.log(`| raw: one multi-row upsert per batch | ${f1(raw)} | ${rate(n * ROUNDS, raw)} | ${f2(raw / serverSum)} (B: ${f2(raw / b)}) |`);
  console.log(`| server CPU for the load and its search delivery, A / B / B one at a time | ${f1(cpuA)} / ${f1(cpuB)} / ${f1(cpuB1)} | | ${f2(cpuB / cpuA)} / ${f2(cpuB1 / cpuA)} |`);
} finally {
  await pgc.stop();
  if (!args.keep) rmSync(dir, { recursive: true, force: true });
}

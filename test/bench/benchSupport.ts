/**
 * What the benchmarks share: a Postgres (DATABASE_URL, or Debian's PostgreSQL 15 through the test
 * harness), an OpenSearch (OPENSEARCH_URL, or the harness's), fresh databases, an svc server in its own process, a wrk driver for HTTP load (a C load
 * generator: a Node client would take as much CPU as the server on a small machine) and a `pg`
 * driver for the raw side.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { freePort, type Component } from '../harness/component.ts';
import { startOpenSearch } from '../harness/opensearch.ts';
import { startDebianPostgres } from '../harness/postgres.ts';
import { builtEntry } from '../support/built.ts';
import { createTestDatabase } from '../support/testServer.ts';

export const BENCH_TOKEN = 'bench-token';
const ROOT = resolve(import.meta.dirname, '../..');

export interface BenchPostgres {
  adminUrl: string;
  label: string;
  stop(): Promise<void>;
}

export async function benchPostgres(): Promise<BenchPostgres> {
  if (process.env.DATABASE_URL) return { adminUrl: process.env.DATABASE_URL, label: 'from DATABASE_URL', stop: async () => undefined };
  const c: Component = await startDebianPostgres();
  return { adminUrl: c.env.DATABASE_URL!, label: 'Debian 15 (harness, tmpfs)', stop: () => c.stop() };
}

export interface BenchOpenSearch {
  url: string;
  stop(): Promise<void>;
}

/** OPENSEARCH_URL, or an OpenSearch provisioned and started by the test harness (with the JVM heap given, 512 MB by default). */
export async function benchOpenSearch(heap?: string): Promise<BenchOpenSearch> {
  if (process.env.OPENSEARCH_URL) return { url: process.env.OPENSEARCH_URL, stop: async () => undefined };
  const provisioned = execFileSync('bash', [resolve(ROOT, 'test/infra/provision.sh'), 'opensearch'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const line of provisioned.split('\n')) {
    const m = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (m) process.env[m[1]!] = m[2]!;
  }
  const node = await startOpenSearch({ heap });
  return { url: node.env.OPENSEARCH_URL!, stop: () => node.stop() };
}

/** A fresh, empty database on the cluster of `adminUrl`. */
export const createDb = (adminUrl: string): Promise<string> => createTestDatabase(adminUrl);

export interface BenchServer {
  base: string;
  /** The server's process id. */
  pid: number;
  /** CPU time the server's process has used so far, in microseconds (Linux /proc). */
  cpuMicros(): number;
  stop(): Promise<void>;
}

/**
 * The server's Node options as `npm start` gives them (the options between `node` and the script in
 * its script; the image runs the same command, see embedded-default.test.ts), so that a benchmark
 * measures the server as it ships.
 */
export const SERVER_NODE_ARGS: string[] = startNodeArgs(ROOT);

/**
 * The Node options of the `npm start` of the checkout at `root`: today's (`node [options]
 * dist/server/src/main.js`) or, in a checkout from before the build, `node [options] --import tsx
 * server/src/main.ts`.
 */
function startNodeArgs(root: string): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const m = start.match(/\bnode((?:\s+-\S+)*?)\s+(?:dist\/server\/src\/main\.js|--import\s+tsx\s+server\/src\/main\.ts)$/);
  if (!m) throw new Error(`npm start of ${root} does not run node [options] dist/server/src/main.js (or --import tsx server/src/main.ts): ${start}`);
  return m[1]!.split(/\s+/).filter(Boolean);
}

/**
 * Starts the server on `databaseUrl` in its own process, as in production: this checkout's as `npm start`
 * runs it (compiled into dist/), another checkout's (`root`, e.g. a baseline) from its TypeScript, in its
 * directory (its own tsx) and with the Node options of its own `npm start` (`env` adds to its
 * environment, e.g. `SEARCH_BACKEND`). Node options for the server beyond {@link SERVER_NODE_ARGS}
 * (e.g. `--cpu-prof` to profile it, or another `--max-semi-space-size`) come from `SVC_BENCH_SERVER_NODE_ARGS`.
 */
export async function startBenchServer(databaseUrl: string, poolSize: number, env: Record<string, string> = {}, root = ROOT): Promise<BenchServer> {
  const port = await freePort();
  const nodeArgs = (process.env.SVC_BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const ours = resolve(root) === ROOT;
  const args = ours
    ? [...SERVER_NODE_ARGS, ...nodeArgs, builtEntry('server/src/main.ts')]
    : [...startNodeArgs(root), ...nodeArgs, '--import', 'tsx', join(root, 'server/src/main.ts')];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ours ? undefined : root,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), SVC_ADMIN_TOKEN: BENCH_TOKEN, SVC_LOG_LEVEL: 'warn', SVC_DB_POOL_SIZE: String(poolSize), ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let t = 0; ; t++) {
    try {
      if ((await fetch(`${base}/ready`)).ok) break;
    } catch {
      // starting
    }
    if (t > 600) {
      child.kill('SIGTERM');
      throw new Error('server did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    pid: child.pid!,
    cpuMicros() {
      // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second on Linux).
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10_000;
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Calls the server with the bench token; throws unless the status is 2xx. */
export async function call(base: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * One connection kept alive, and a request on it with the bench token that resolves to the parsed
 * JSON answer (throws unless the status is 2xx), for latency measured one request at a time. Node's
 * `fetch` is not used there: it costs its own process about 250 µs of CPU more for a POST with a
 * body than for a GET (the body goes through a web stream), on the same CPUs as the server, which
 * would count against the POST side of a comparison.
 */
export function keptAliveClient(base: string): { request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<any>; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const { hostname, port } = new URL(base);
  return {
    request(method, path, body) {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string | number> = { authorization: `Bearer ${BENCH_TOKEN}` };
      if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
      return new Promise((resolve, reject) => {
        const req = http.request({ agent, hostname, port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${path}: HTTP ${res.statusCode}: ${text}`));
            else resolve(text ? JSON.parse(text) : undefined);
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}

export interface WrkRequest {
  method: 'POST' | 'PATCH';
  /** Lua expression of the path for request number `i` (0-based), e.g. `"/x/" .. i`. */
  pathLua: string;
  /** Lua expression of the body for request number `i`. */
  bodyLua: string;
  contentType?: string;
}

/**
 * Drives HTTP load with wrk at `concurrency` (one connection per request in flight) for `seconds`;
 * request number k uses `i = first + (offset + k) % modulo`. Returns how many requests completed and their
 * rate; any non-2xx answer aborts the run.
 */
export function runWrk(base: string, req: WrkRequest, modulo: number, seconds: number, concurrency: number, offset = 0, first = 0): { count: number; rate: number } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const script = join(dir, 'load.lua');
  writeFileSync(
    script,
    `
local counter = -1
local pad = string.rep("lorem ipsum dolor sit amet ", 34)
request = function()
  counter = counter + 1
  local i = ${first} + (${offset} + counter) % ${modulo}
  return wrk.format("${req.method}", ${req.pathLua}, {["Authorization"] = "Bearer ${BENCH_TOKEN}", ["Content-Type"] = "${req.contentType ?? 'application/json'}"}, ${req.bodyLua})
end
response = function(status, headers, body)
  if status < 200 or status > 299 then error("HTTP " .. status .. ": " .. body) end
end`,
  );
  try {
    const out = execFileSync('wrk', ['-t1', `-c${concurrency}`, `-d${seconds}s`, '-s', script, base], { encoding: 'utf8' });
    const count = Number(out.match(/(\d+) requests in/)?.[1]);
    const rate = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
    if (!count || /Non-2xx/.test(out)) throw new Error(`wrk reported failures:\n${out}`);
    return { count, rate };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error("the benchmarks drive HTTP with wrk: install Debian's package (apt-get install wrk)");
    throw err;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `task(i)` for i in [0, n) with `concurrency` workers; returns operations per second. */
export async function drive(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await task(i);
    }),
  );
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

/**
 * Waits until an svc server has nothing left in the background on its database: its search outbox
 * delivered, and none of its sessions running a statement (e.g. the dispatcher's `ANALYZE` of the
 * search tables after a large delivery), seen three times in a row 100 ms apart. A pass calls it
 * before its first round and between each svc round and the raw one after it, so that neither side is
 * timed while the other's writes are still being delivered: the search delivery of a bulk load made
 * before the pass (4,000 of its 10,000 entities were still queued when the first set round began),
 * nor the last step of an svc round, which ran into the raw round after it.
 */
export async function untilSettled(databaseUrl: string, timeoutMs = 120_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (let quiet = 0; quiet < 3; ) {
      if (Date.now() > deadline) throw new Error(`the server's background work on ${databaseUrl} did not settle within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
      const { rows } = await client.query<{ queued: number; busy: number }>(
        `SELECT (SELECT count(*)::int FROM search_outbox) AS queued,
                (SELECT count(*)::int FROM pg_stat_activity
                  WHERE datname = current_database() AND backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()) AS busy`,
      );
      quiet = rows[0]!.queued === 0 && rows[0]!.busy === 0 ? quiet + 1 : 0;
    }
  } finally {
    await client.end();
  }
}

/** The raw side's table: the shape of svc's `aspects` (server/src/db/migrations/V001__baseline.sql), without its triggers and other indexes. */
export const RAW_TABLE = `CREATE TABLE IF NOT EXISTS aspects (
    urn text COLLATE "C" NOT NULL, aspect text NOT NULL, version bigint NOT NULL, metadata json NOT NULL,
    system_metadata jsonb NOT NULL DEFAULT '{}', created_on timestamptz NOT NULL DEFAULT now(), created_by text NOT NULL,
    PRIMARY KEY (urn, aspect, version))`;

/** The raw side's write of one row: $1 urn, $2 aspect, $3 value (JSON text), $4 system metadata (JSON text). */
export const RAW_UPSERT = `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by) VALUES ($1, $2, 0, $3, $4, 'urn:li:corpuser:bench')
   ON CONFLICT (urn, aspect, version) DO UPDATE SET metadata = excluded.metadata, system_metadata = excluded.system_metadata`;

/** The raw side: single-statement upserts of aspect rows through `pg`, into the same table shape as svc's. */
export async function rawUpserts(databaseUrl: string, n: number, concurrency: number, row: (i: number) => { urn: string; aspect: string; value: unknown }): Promise<number> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: concurrency });
  await pool.query(RAW_TABLE);
  const rate = await drive(n, concurrency, async (i) => {
    const r = row(i);
    await pool.query(RAW_UPSERT, [r.urn, r.aspect, JSON.stringify(r.value), JSON.stringify({ lastObserved: Date.now(), runId: 'bench' })]);
  });
  await pool.end();
  return rate;
}

/** A round of svc's work and the raw side's rate of as many operations right after it. */
export type SvcRound = { http: { count: number; rate: number }; raw: number };

/**
 * One pass of a benchmark as `rounds` alternating rounds, svc then raw (this machine's speed drifts
 * within a minute, so both sides see the same spells). `round` gets the round's number and how many
 * svc operations earlier rounds made (where its requests go on numbering), and returns its svc run
 * and the raw rate of as many operations. The ratio is of the rates over all rounds, with each
 * round's beside it.
 */
export async function alternatingRounds(pass: string, rounds: number, round: (k: number, done: number) => Promise<SvcRound>): Promise<BenchRow> {
  return (await alternatingTreeRounds(pass, rounds, [undefined], (_tree, k, done) => round(k, done)))[0]!;
}

/**
 * {@link alternatingRounds} for each of `trees` (see {@link benchTrees}), in turn within each round:
 * this tree's svc round and its raw round, then the baseline's, and again. `done` counts each tree's own
 * operations. Returns one row per tree.
 */
export async function alternatingTreeRounds<T>(pass: string, rounds: number, trees: readonly T[], round: (tree: T, k: number, done: number) => Promise<SvcRound>): Promise<BenchRow[]> {
  const done = trees.map(() => 0);
  const runs = await alternateTrees(trees, rounds, async (tree, k, i) => {
    const r = await round(tree, k, done[i]!);
    done[i]! += r.http.count;
    return r;
  });
  return runs.map((rs) => {
    const ops = rs.reduce((a, r) => a + r.http.count, 0);
    const httpSeconds = rs.reduce((a, r) => a + r.http.count / r.http.rate, 0);
    const rawSeconds = rs.reduce((a, r) => a + r.http.count / r.raw, 0);
    return { pass, http: ops / httpSeconds, raw: ops / rawSeconds, n: ops, rounds: rs.map((r) => r.http.rate / r.raw), rates: rs.map((r) => r.http.rate), rawRates: rs.map((r) => r.raw) };
  });
}

export interface BenchRow {
  pass: string;
  http: number;
  raw: number;
  n: number;
  /** svc/raw of each round, when the pass ran in interleaved rounds. */
  rounds?: number[];
  /** svc's rate in each round, and the raw side's. */
  rates?: number[];
  rawRates?: number[];
}

export function printTable(title: string, rows: BenchRow[]): void {
  console.log(`\n${title}`);
  console.log('| pass | svc HTTP ops/s | raw pg upserts/s | ratio | ratio per round | operations |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const rounds = r.rounds?.map((x) => x.toFixed(2)).join(' / ') ?? '';
    console.log(`| ${r.pass} | ${r.http.toFixed(0)} | ${r.raw.toFixed(0)} | ${(r.http / r.raw).toFixed(2)} | ${rounds} | ${r.n} |`);
  }
}

/** A tree a benchmark measures: this checkout, or the one named by `--against` (the baseline). */
export interface BenchTree {
  label: 'this tree' | 'baseline';
  root: string;
}

/**
 * The trees a benchmark measures side by side: this checkout, and with `--against <dir>` a checkout of
 * another commit, installed (its own `npm ci`), whose server runs from its TypeScript (see
 * {@link startBenchServer}). This tree comes first in every round.
 */
export function benchTrees(against: string | undefined): BenchTree[] {
  const trees: BenchTree[] = [{ label: 'this tree', root: ROOT }];
  if (against) {
    const root = resolve(against);
    if (!existsSync(join(root, 'server/src/main.ts')) || !existsSync(join(root, 'node_modules'))) {
      throw new Error(`--against ${against}: expected a checkout of svc with its packages installed (server/src/main.ts and node_modules/ in it)`);
    }
    trees.push({ label: 'baseline', root });
  }
  return trees;
}

/** A tree's svc server on a fresh database of its own (the trees' schemas differ), and a fresh database for its raw side. */
export interface TreeServer extends BenchTree {
  server: BenchServer;
  svcDb: string;
  rawDb: string;
}

/** Starts each tree's server on a fresh database of its own on `adminUrl`'s cluster (see {@link startBenchServer} for `env`). */
export async function startTreeServers(adminUrl: string, poolSize: number, trees: readonly BenchTree[], env: Record<string, string> = {}): Promise<TreeServer[]> {
  const started: TreeServer[] = [];
  try {
    for (const tree of trees) {
      const svcDb = await createDb(adminUrl);
      const rawDb = await createDb(adminUrl);
      started.push({ ...tree, svcDb, rawDb, server: await startBenchServer(svcDb, poolSize, env, tree.root) });
    }
  } catch (err) {
    await stopTreeServers(started);
    throw err;
  }
  return started;
}

export async function stopTreeServers(trees: readonly TreeServer[]): Promise<void> {
  for (const t of trees) await t.server.stop();
}

/**
 * Runs `round(tree, k, i)` (`i`: the tree's index) for each round k and, within it, for each tree in
 * turn, so that both trees see the same spells of the machine; returns each tree's results by round.
 */
export async function alternateTrees<T, R>(trees: readonly T[], rounds: number, round: (tree: T, k: number, i: number) => Promise<R>): Promise<R[][]> {
  const out = trees.map((): R[] => []);
  for (let k = 0; k < rounds; k++) for (const [i, tree] of trees.entries()) out[i]!.push(await round(tree, k, i));
  return out;
}

/**
 * One measure of this tree and the baseline: a rate (`unit` ending in `/s`, higher is better) or a time
 * (lower is better), over the pass and, where it ran in rounds, in each round.
 */
export interface AbRow {
  pass: string;
  unit: string;
  today: number;
  baseline: number;
  rounds?: { today: number; baseline: number }[];
}

const figure = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));

/** Prints this tree against the baseline: both figures and today / baseline, over the pass and per round. */
export function printAbTable(title: string, rows: AbRow[]): void {
  console.log(`\n${title}: this tree against the baseline (today / baseline: of a rate, above 1 is faster; of a time, below 1 is faster)`);
  console.log('| pass | unit | this tree | baseline | today / baseline | per round |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const rounds = r.rounds?.map((x) => (x.today / x.baseline).toFixed(2)).join(' / ') ?? '';
    console.log(`| ${r.pass} | ${r.unit} | ${figure(r.today)} | ${figure(r.baseline)} | **${(r.today / r.baseline).toFixed(2)}** | ${rounds} |`);
  }
}

/**
 * The tables of passes run by {@link alternatingTreeRounds}, `rows[tree][pass]`: each tree's against its
 * raw side as {@link printTable} prints them and, with a baseline, this tree against it (svc's rates,
 * and the raw side's beside each: how alike the machine was to both).
 */
export function printTreeTables(title: string, trees: readonly BenchTree[], rows: BenchRow[][]): void {
  if (trees.length === 1) return printTable(title, rows[0]!);
  for (const [i, tree] of trees.entries()) printTable(`${title}; ${tree.label} (${tree.root})`, rows[i]!);
  const zip = (a: number[] = [], b: number[] = []) => a.map((today, k) => ({ today, baseline: b[k]! }));
  printAbTable(
    title,
    rows[0]!.flatMap((today, p) => {
      const base = rows[1]![p]!;
      return [
        { pass: today.pass, unit: 'svc ops/s', today: today.http, baseline: base.http, rounds: zip(today.rates, base.rates) },
        { pass: `(raw pg beside it)`, unit: 'ops/s', today: today.raw, baseline: base.raw, rounds: zip(today.rawRates, base.rawRates) },
      ];
    }),
  );
}

/**
 * Write-path benchmark: aspect upserts per second through svc's HTTP API at concurrency 16, against
 * raw `pg` upserts of the same rows into the same table shape, in the same run, on the same Postgres.
 *
 *   npm run bench:write-path -- [--seconds 10] [--concurrency 16]
 *
 * Two passes: inserts (a new entity per request) for `seconds`, then updates of those same aspects.
 * The raw side upserts exactly as many rows, with `pg` at the same concurrency. Needs `wrk` (Debian's
 * package; test/infra/provision.sh installs it).
 *
 * Uses DATABASE_URL when set (a cluster's admin URL); otherwise starts Debian's PostgreSQL 15 through
 * the test harness. The server runs as its own process, as in production; the load comes from this one.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePort, type Component } from '../harness/component.ts';
import { startDebianPostgres } from '../harness/postgres.ts';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '16' } } });
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const ROOT = resolve(import.meta.dirname, '../..');
const TOKEN = 'bench-token';

/** A ~1 KB datasetProperties aspect, distinct per row and pass. */
function aspect(i: number, pass: number) {
  return { description: `row ${i} pass ${pass} ${'lorem ipsum dolor sit amet '.repeat(34)}`, customProperties: { owner: `team-${i % 17}`, pass: String(pass) } };
}
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:bench,db.table_${i},PROD)`;

async function createDb(adminUrl: string): Promise<string> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs `task(i)` for i in [0, n) with `concurrency` workers; returns operations per second. */
async function drive(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await task(i);
    }),
  );
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function rawPg(url: string, pass: number, rows: number): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  await pool.query(`CREATE TABLE IF NOT EXISTS aspects (
      urn text COLLATE "C" NOT NULL, aspect text NOT NULL, version bigint NOT NULL, metadata json NOT NULL,
      system_metadata jsonb NOT NULL DEFAULT '{}', created_on timestamptz NOT NULL DEFAULT now(), created_by text NOT NULL,
      PRIMARY KEY (urn, aspect, version))`);
  const rate = await drive(rows, CONCURRENCY, async (i) => {
    await pool.query(
      `INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by) VALUES ($1, 'datasetProperties', 0, $2, $3, 'urn:li:corpuser:bench')
       ON CONFLICT (urn, aspect, version) DO UPDATE SET metadata = excluded.metadata, system_metadata = excluded.system_metadata`,
      [urnOf(i), JSON.stringify(aspect(i, pass)), JSON.stringify({ lastObserved: Date.now(), runId: 'bench' })],
    );
  });
  await pool.end();
  return rate;
}

/** wrk's script: POSTs the aspect of row (counter % modulo) of the pass, all rows distinct URNs. */
function wrkScript(pass: number, modulo: number): string {
  return `
local counter = -1
local pad = string.rep("lorem ipsum dolor sit amet ", 34)
request = function()
  counter = counter + 1
  local i = counter % ${modulo}
  local urn = "urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Abench%2Cdb.table_" .. i .. "%2CPROD%29"
  local body = '{"value":{"description":"row ' .. i .. ' pass ${pass} ' .. pad .. '","customProperties":{"owner":"team-' .. (i % 17) .. '","pass":"${pass}"}}}'
  return wrk.format("POST", "/openapi/v3/entity/dataset/" .. urn .. "/datasetProperties?createIfNotExists=false",
    {["Authorization"] = "Bearer ${TOKEN}", ["Content-Type"] = "application/json"}, body)
end
response = function(status, headers, body)
  if status ~= 200 then error("HTTP " .. status .. ": " .. body) end
end`;
}

/**
 * Drives HTTP upserts with wrk (a C load generator: a Node client would take as much CPU as the server
 * on a small machine) for `seconds`; returns how many requests completed and the rate.
 */
function viaWrk(baseUrl: string, pass: number, modulo: number, seconds: number): { count: number; rate: number } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const script = join(dir, 'write.lua');
  writeFileSync(script, wrkScript(pass, modulo));
  const out = execFileSync('wrk', ['-t1', `-c${CONCURRENCY}`, `-d${seconds}s`, '-s', script, baseUrl], { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  const count = Number(out.match(/(\d+) requests in/)?.[1]);
  const rate = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  if (/Non-2xx/.test(out) || !count) throw new Error(`wrk reported failures:\n${out}`);
  return { count, rate };
}

async function main(): Promise<void> {
  let pgComponent: Component | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    pgComponent = await startDebianPostgres();
    adminUrl = pgComponent.env.DATABASE_URL!;
  }
  const port = await freePort();
  const svcDb = await createDb(adminUrl);
  const rawDb = await createDb(adminUrl);
  const server = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'server/src/main.ts')], {
    env: { ...process.env, DATABASE_URL: svcDb, PORT: String(port), SVC_ADMIN_TOKEN: TOKEN, SVC_LOG_LEVEL: 'warn', SVC_DB_POOL_SIZE: String(CONCURRENCY) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let t = 0; ; t++) {
    try {
      if ((await fetch(`${base}/ready`)).ok) break;
    } catch {
      // starting
    }
    if (t > 300) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    // Warm up both paths (connections, JIT) on rows outside the measured range.
    await drive(500, CONCURRENCY, async (i) => {
      await fetch(`${base}/openapi/v3/entity/tag/${encodeURIComponent(`urn:li:tag:warm${i}`)}/status?createIfNotExists=false`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: '{"value":{"removed":false}}',
      }).then((r) => r.arrayBuffer());
    });
    const inserts = viaWrk(base, 1, 1_000_000_000, SECONDS);
    const updates = viaWrk(base, 2, inserts.count, SECONDS);
    const results = [
      { pass: 'insert (new entities)', http: inserts.rate, raw: await rawPg(rawDb, 1, inserts.count), rows: inserts.count },
      { pass: 'update (existing aspects)', http: updates.rate, raw: await rawPg(rawDb, 2, inserts.count), rows: inserts.count },
    ];
    console.log(`\nwrite-path: ~1 KB datasetProperties upserts, concurrency ${CONCURRENCY}, Postgres ${pgComponent ? 'Debian 15 (harness, tmpfs)' : 'from DATABASE_URL'}`);
    console.log('| pass | svc HTTP upserts/s | raw pg upserts/s | ratio | rows |');
    console.log('|---|---|---|---|---|');
    for (const r of results) console.log(`| ${r.pass} | ${r.http.toFixed(0)} | ${r.raw.toFixed(0)} | ${(r.http / r.raw).toFixed(2)} | ${r.rows} |`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    await pgComponent?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

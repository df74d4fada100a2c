/**
 * How fast `npm start` is ready, and how much memory the server's Node process holds once idle, as a
 * user meets them: the embedded default (no DATABASE_URL) on a fresh data directory (the first start
 * runs initdb), then a restart on the same directory. Each round also times the first GraphQL query
 * after the start (GraphQL is loaded by its first request).
 *
 *   npm run bench:start -- [--runs 5] [--idle-seconds 5] [--against <a checkout of another commit, installed>]
 *
 * With `--against`, each round runs that checkout's `npm start` too, alternating with this one, so that
 * both see the same load on the machine. Data directories go under /tmp (reachable by the unprivileged
 * user the embedded Postgres runs as when svc runs as root).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../harness/component.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, 'idle-seconds': { type: 'string', default: '5' }, against: { type: 'string' } },
});
const RUNS = Number(values.runs);
const IDLE_MS = Number(values['idle-seconds']) * 1000;
const roots: { label: string; dir: string }[] = [{ label: 'this tree', dir: resolve(import.meta.dirname, '../..') }];
if (values.against) roots.unshift({ label: `against ${values.against}`, dir: resolve(values.against) });

interface Start {
  /** Milliseconds from spawning `npm start` to the log line "svc listening". */
  listening: number;
  /** Milliseconds from spawning `npm start` to the first 200 of /ready. */
  ready: number;
  /** CPU time (user and system) the server's Node process had used when it was ready, in ms: what the start costs, whatever else the machine runs. */
  cpuToReady: number;
  /** The server's Node process, in MB, IDLE_MS after it was ready. */
  idleRssMb: number;
  /** Milliseconds of the first GraphQL query after the idle wait. */
  firstGraphQL: number;
  /** The Node process, in MB, after that query. */
  rssAfterGraphQLMb: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second on Linux). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const kb = Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m)![1]);
  return Math.round(kb / 1024);
}

async function startOnce(dir: string, dataDir: string): Promise<Start> {
  const port = await freePort();
  const t0 = performance.now();
  const child: ChildProcess = spawn('npm', ['start', '--silent'], {
    cwd: dir,
    env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir, PORT: String(port), SVC_ADMIN_TOKEN: 'start-bench-token', SVC_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let listening = 0;
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    if (!listening && out.includes('"svc listening"')) listening = performance.now() - t0;
  });
  const base = `http://127.0.0.1:${port}`;
  let ready = 0;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}): ${out}`);
      try {
        if ((await fetch(`${base}/ready`)).status === 200) break;
      } catch {
        // not listening yet
      }
      if (performance.now() - t0 > 120_000) throw new Error(`not ready after 120 s: ${out}`);
      await sleep(10);
    }
    ready = performance.now() - t0;
    // npm's child is the server itself (the script execs node).
    const pid = Number(execFileSync('pgrep', ['-P', String(child.pid)]).toString().trim());
    const cpuToReady = cpuMs(pid);
    await sleep(IDLE_MS);
    const idleRssMb = rssMb(pid);
    const q0 = performance.now();
    const res = await fetch(`${base}/api/graphql`, {
      method: 'POST',
      headers: { authorization: 'Bearer start-bench-token', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ searchAcrossEntities(input: {types: [DATASET], query: "*", start: 0, count: 1}) { total } }' }),
    });
    const body = await res.text();
    const firstGraphQL = performance.now() - q0;
    if (res.status !== 200 || body.includes('"errors"')) throw new Error(`GraphQL: ${res.status} ${body}`);
    return { listening, ready, cpuToReady, idleRssMb, firstGraphQL, rssAfterGraphQLMb: rssMb(pid) };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
  }
}

// freePort's probe socket is unref'd: keep the loop alive between the steps of a round.
const keepAlive = setInterval(() => undefined, 60_000);
const results = new Map<string, { first: Start[]; restart: Start[] }>(roots.map((r) => [r.label, { first: [], restart: [] }]));
for (let run = 1; run <= RUNS; run++) {
  for (const root of roots) {
    const parent = mkdtempSync('/tmp/svc-start-');
    chmodSync(parent, 0o755);
    const dataDir = join(parent, 'data');
    try {
      const first = await startOnce(root.dir, dataDir);
      const restart = await startOnce(root.dir, dataDir);
      results.get(root.label)!.first.push(first);
      results.get(root.label)!.restart.push(restart);
      process.stderr.write(`run ${run} ${root.label}: first ${JSON.stringify(first)}; restart ${JSON.stringify(restart)}\n`);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }
}

clearInterval(keepAlive);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const cell = (xs: number[], unit: string) => `${median(xs).toFixed(0)} ${unit} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
console.log(`\nnpm start, embedded Postgres, ${RUNS} runs each: median (min–max); RSS of the server's Node process ${IDLE_MS / 1000} s after ready\n`);
console.log('| tree | start | listening | ready | CPU to ready | idle RSS | first GraphQL query | RSS after it |');
console.log('|---|---|---|---|---|---|---|---|');
for (const [label, r] of results) {
  for (const [kind, xs] of [['first (initdb)', r.first], ['restart', r.restart]] as const) {
    console.log(
      `| ${label} | ${kind} | ${cell(xs.map((x) => x.listening), 'ms')} | ${cell(xs.map((x) => x.ready), 'ms')} | ${cell(xs.map((x) => x.cpuToReady), 'ms')} | ${cell(xs.map((x) => x.idleRssMb), 'MB')} | ${cell(xs.map((x) => x.firstGraphQL), 'ms')} | ${cell(xs.map((x) => x.rssAfterGraphQLMb), 'MB')} |`,
    );
  }
}

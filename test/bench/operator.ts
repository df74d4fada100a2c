/**
 * The operator at scale, against the raw engines underneath, in one run:
 *
 * - apply: N StructuredProperty objects created as fast as the API server takes them, timed from the
 *   first create until every object is `Ready=True` for its current generation (a watch of the
 *   namespace counts them); reconciles per second from the operator's own `/metrics`
 *   (`controller_runtime_reconcile_total{controller="structuredproperty"}`, every result);
 * - raw catalog: the same N definitions written straight to REST v3 (a GET, then
 *   `POST propertyDefinition?createIfNotExists=false`, as a reconcile does), under fresh qualified
 *   names, at the operator's worker count;
 * - raw Kubernetes: N custom objects created and their status patched once each, in a namespace no
 *   operator watches, at the apply's concurrency (the operator also adds a finalizer patch and an Event
 *   per object);
 * - idle: the operator's CPU (utime + stime from /proc, as % of one core) and RSS over a window with the
 *   N objects Ready; then again in a second operator start with a short resync (every object compared
 *   with the server each `--resync-seconds`, and the watch relisted), unless `--resync-seconds 0`.
 *
 *   npm run bench:operator -- [--n 1000] [--concurrency 16] [--idle-seconds 30] [--resync-seconds 30]
 *
 * The operator runs as a process of its own (`operator/src/main.ts` compiled, leader election on, 4 workers, log
 * level warn), as does the svc server. Kubernetes is KUBECONFIG, or an etcd + kube-apiserver that
 * the harness provisions and starts (`test/infra/provision.sh kube`); with KUBECONFIG set, the bench's
 * namespaces and objects are left behind.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Watch } from '@kubernetes/client-node';
import { definitionOf } from '../../operator/src/controllers/structuredProperty.ts';
import { GROUP, VERSION, type StructuredProperty } from '../../operator/src/resources.ts';
import { freePort } from '../harness/component.ts';
import { BENCH_TOKEN, benchPostgres, createDb, drive, startBenchServer } from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '16' },
    'idle-seconds': { type: 'string', default: '30' },
    'resync-seconds': { type: 'string', default: '30' },
  },
});
const N = Number(args.n);
const CONCURRENCY = Number(args.concurrency);
const IDLE_SECONDS = Number(args['idle-seconds']);
const SHORT_RESYNC = Number(args['resync-seconds']);
/** The operator's default SVC_OPERATOR_WORKERS: the raw catalog side writes at the same concurrency. */
const WORKERS = 4;
const ROOT = resolve(import.meta.dirname, '../..');
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
const seconds = (fromMs: number) => (performance.now() - fromMs) / 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The spec of object i: a number property of datasets with a few allowed values. */
const specOf = (qualifiedName: string, i: number): StructuredProperty['spec'] => ({
  qualifiedName,
  valueType: 'number',
  cardinality: 'SINGLE',
  entityTypes: ['dataset'],
  allowedValues: [30, 90, 365].map((d) => ({ numberValue: d + (i % 7), description: `${d} days` })),
  description: `bench property ${i}`,
});

// Kubernetes first: the test support reads KUBECONFIG when it is loaded.
let stopKube: (() => Promise<void>) | undefined;
if (!process.env.KUBECONFIG) {
  const provisioned = execFileSync('bash', [resolve(ROOT, 'test/infra/provision.sh'), 'kube'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const line of provisioned.split('\n')) {
    const m = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (m) process.env[m[1]!] = m[2]!;
  }
  const { startKube } = await import('../harness/kube.ts');
  const kube = await startKube();
  Object.assign(process.env, kube.env);
  stopKube = () => kube.stop();
}
const { createNamespace, installCrds, kc, merge, objects, readyNow, spawnOperator } = await import('../support/operator.ts');
type OperatorProcess = ReturnType<typeof spawnOperator>;

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Resident memory of a process, in MiB. */
function rssMiB(pid: number): number {
  const kb = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)?.[1];
  return Number(kb) / 1024;
}

interface Operator {
  process: OperatorProcess;
  pid: number;
  metricsUrl: string;
}

/** Starts the operator on `namespace` and waits until it holds the Lease and its caches are synced. */
async function startOperatorProcess(server: string, namespace: string, env: Record<string, string> = {}): Promise<Operator> {
  const port = await freePort();
  const proc = spawnOperator({
    SVC_GMS_URL: server,
    SVC_GMS_TOKEN: BENCH_TOKEN,
    SVC_OPERATOR_NAMESPACE: namespace,
    SVC_OPERATOR_POD_NAMESPACE: namespace,
    SVC_OPERATOR_PORT: String(port),
    SVC_LOG_LEVEL: 'warn',
    ...env,
  });
  const base = `http://127.0.0.1:${port}`;
  for (let t = 0; ; t++) {
    if (proc.child.exitCode !== null) throw new Error(`the operator exited (${proc.child.exitCode}):\n${proc.output()}`);
    try {
      const metrics = await (await fetch(`${base}/metrics`)).text();
      const leading = /^leader_election_master_status\{name="svc-operator"\} 1$/m.test(metrics);
      if (leading && (await fetch(`${base}/readyz`)).ok) break;
    } catch {
      // starting
    }
    if (t > 600) throw new Error(`the operator did not lead within 60 s:\n${proc.output()}`);
    await sleep(100);
  }
  return { process: proc, pid: proc.child.pid!, metricsUrl: `${base}/metrics` };
}

/** Stops the operator gracefully (SIGTERM: the Lease is released), or kills it after 15 s. */
async function stopOperatorProcess(op: Operator): Promise<void> {
  const killer = setTimeout(() => void op.process.kill('SIGKILL'), 15_000);
  await op.process.kill('SIGTERM');
  clearTimeout(killer);
}

/** `controller_runtime_reconcile_total` of the StructuredProperty controller, by result. */
async function reconciles(op: Operator): Promise<Record<string, number>> {
  const text = await (await fetch(op.metricsUrl)).text();
  const byResult: Record<string, number> = {};
  for (const m of text.matchAll(/^controller_runtime_reconcile_total\{([^}]*)\} (\S+)$/gm)) {
    if (!m[1]!.includes('controller="structuredproperty"')) continue;
    byResult[m[1]!.match(/result="([^"]*)"/)?.[1] ?? '?'] = Number(m[2]);
  }
  return byResult;
}
const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** The V8 heap in use, in MiB, from the operator's default Node metrics (RSS also counts garbage not yet collected). */
async function heapUsedMiB(op: Operator): Promise<number> {
  const text = await (await fetch(op.metricsUrl)).text();
  return Number(text.match(/^nodejs_heap_size_used_bytes (\S+)$/m)?.[1]) / 2 ** 20;
}

/** The operator's CPU (% of one core) and reconciles over `windowSeconds`, then its RSS and heap in use. */
async function idle(op: Operator, windowSeconds: number): Promise<{ cpuPercent: number; reconciles: number; rss: number; heap: number }> {
  const before = await reconciles(op);
  const cpu0 = cpuSeconds(op.pid);
  const t0 = performance.now();
  await sleep(windowSeconds * 1000);
  const cpu = cpuSeconds(op.pid) - cpu0;
  const elapsed = seconds(t0);
  const after = await reconciles(op);
  return { cpuPercent: (100 * cpu) / elapsed, reconciles: total(after) - total(before), rss: rssMiB(op.pid), heap: await heapUsedMiB(op) };
}

/**
 * Counts the objects of `namespace` that are Ready for their generation, from a watch (resumed from
 * scratch if the API server ends it); `allReady` resolves with the time the count reached `n`.
 */
function readiness(namespace: string, n: number): { allReady: Promise<number>; stop(): void } {
  const ready = new Map<string, boolean>();
  let count = 0;
  let stopped = false;
  let abort: AbortController | undefined;
  let settle!: (at: number) => void;
  let fail!: (err: unknown) => void;
  const allReady = new Promise<number>((res, rej) => ((settle = res), (fail = rej)));
  const watch = () => {
    new Watch(kc)
      .watch(
        `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/structuredproperties`,
        {},
        (phase: string, obj: StructuredProperty) => {
          if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
          const name = obj.metadata.name!;
          const now = readyNow(obj);
          if (now !== (ready.get(name) ?? false)) count += now ? 1 : -1;
          ready.set(name, now);
          if (count === n) {
            stopped = true;
            abort?.abort();
            settle(performance.now());
          }
        },
        (err: unknown) => {
          if (stopped) return;
          if (err && !(err instanceof Error && err.name === 'AbortError')) console.error(`readiness watch ended: ${String(err)}; watching again`);
          watch();
        },
      )
      .then((c) => (stopped ? c.abort() : (abort = c)), fail);
  };
  watch();
  return {
    allReady,
    stop() {
      stopped = true;
      abort?.abort();
    },
  };
}

/** A GET of the definition (404 expected) and then its write, as a reconcile of a new object does. */
async function rawDefinitionWrite(base: string, qualifiedName: string, i: number): Promise<void> {
  const urn = encodeURIComponent(`urn:li:structuredProperty:${qualifiedName}`);
  const headers = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
  const read = await fetch(`${base}/openapi/v3/entity/structuredProperty/${urn}?systemMetadata=false`, { headers });
  await read.text();
  if (read.status !== 404 && !read.ok) throw new Error(`GET ${qualifiedName}: HTTP ${read.status}`);
  const write = await fetch(`${base}/openapi/v3/entity/structuredProperty/${urn}/propertyDefinition?createIfNotExists=false`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ value: definitionOf(specOf(qualifiedName, i)) }),
  });
  const text = await write.text();
  if (!write.ok) throw new Error(`POST ${qualifiedName}: HTTP ${write.status}: ${text}`);
}

const ref = (namespace: string) => ({ group: GROUP, version: VERSION, namespace, plural: 'structuredproperties' });
const objectOf = (name: string, spec: StructuredProperty['spec']) => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'StructuredProperty', metadata: { name }, spec });

/** Warnings and errors of the operator's log, counted by message. */
function logSummary(output: string): string {
  const counts = new Map<string, number>();
  for (const line of output.split('\n')) {
    if (!line.trim()) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      if ((entry.level ?? 0) >= 40) counts.set(entry.msg ?? '?', (counts.get(entry.msg ?? '?') ?? 0) + 1);
    } catch {
      counts.set(line.slice(0, 120), (counts.get(line.slice(0, 120)) ?? 0) + 1);
    }
  }
  return counts.size ? [...counts].map(([msg, c]) => `${c} × ${msg}`).join('; ') : 'no warnings or errors';
}

const started = performance.now();
const pgc = await benchPostgres();
const server = await startBenchServer(await createDb(pgc.adminUrl), 8);
const operators: Operator[] = [];
try {
  await installCrds();

  // Warm the server up, then the raw catalog side: N definitions through REST, fresh names.
  await drive(50, WORKERS, (i) => rawDefinitionWrite(server.base, `bench.warmup.p${i}`, i));
  let t = performance.now();
  await drive(N, WORKERS, (i) => rawDefinitionWrite(server.base, `bench.raw.p${i}`, i));
  const rawRest = seconds(t);

  // The raw Kubernetes side: N creates and N status patches, in a namespace nobody reconciles.
  const rawNamespace = await createNamespace('bench-raw');
  t = performance.now();
  await drive(N, CONCURRENCY, async (i) => {
    const name = `p${i}`;
    const created = (await objects.createNamespacedCustomObject({ ...ref(rawNamespace), body: objectOf(name, specOf(`bench.kube.p${i}`, i)) })) as StructuredProperty;
    const now = new Date().toISOString();
    const urn = `urn:li:structuredProperty:bench.kube.p${i}`;
    const generation = created.metadata.generation;
    await objects.patchNamespacedCustomObjectStatus(
      {
        ...ref(rawNamespace),
        name,
        body: {
          status: {
            observedGeneration: generation,
            urn,
            valueType: 'urn:li:dataType:svc.number',
            entityTypes: ['urn:li:entityType:svc.dataset'],
            lastSyncTime: now,
            conditions: [
              { type: 'Ready', status: 'True', reason: 'Synced', message: `the server holds the spec as ${urn}`, lastTransitionTime: now, observedGeneration: generation },
              { type: 'Synced', status: 'True', reason: 'Created', message: `Created ${urn}`, lastTransitionTime: now, observedGeneration: generation },
            ],
          },
        },
      },
      merge,
    );
  });
  const rawKube = seconds(t);

  // The operator: apply N objects, time until all are Ready.
  const namespace = await createNamespace('bench-operator');
  const op = await startOperatorProcess(server.base, namespace);
  operators.push(op);
  const watcher = readiness(namespace, N);
  const reconcilesBefore = total(await reconciles(op));
  const cpuBefore = cpuSeconds(op.pid);
  t = performance.now();
  await drive(N, CONCURRENCY, async (i) => {
    await objects.createNamespacedCustomObject({ ...ref(namespace), body: objectOf(`p${i}`, specOf(`bench.op.p${i}`, i)) });
  });
  const createdIn = seconds(t);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((r) => {
    timer = setTimeout(() => r(undefined), 600_000);
  });
  const readyAt = await Promise.race([watcher.allReady, timedOut]);
  clearTimeout(timer);
  watcher.stop();
  if (readyAt === undefined) throw new Error(`not all ${N} objects were Ready after 10 minutes:\n${logSummary(op.process.output())}`);
  const applySeconds = (readyAt - t) / 1000;
  const applyCpu = cpuSeconds(op.pid) - cpuBefore;
  const applyReconciles = await reconciles(op);
  const reconcileCount = total(applyReconciles) - reconcilesBefore;
  const list = (await objects.listNamespacedCustomObject(ref(namespace))) as { items: StructuredProperty[] };
  const readyListed = list.items.filter(readyNow).length;

  // Idle with the default resync (300 s): after the Events and last status writes have settled.
  await sleep(5_000);
  const idleDefault = await idle(op, IDLE_SECONDS);
  const firstLog = op.process.output();
  await stopOperatorProcess(op);

  // Idle with a short resync: a second start, measured once its first pass over the N objects is done.
  let idleShort: Awaited<ReturnType<typeof idle>> | undefined;
  let secondLog = '';
  if (SHORT_RESYNC > 0) {
    const op2 = await startOperatorProcess(server.base, namespace, { SVC_OPERATOR_RESYNC_SECONDS: String(SHORT_RESYNC) });
    operators.push(op2);
    for (let k = 0; total(await reconciles(op2)) < N; k++) {
      if (k > 1200) throw new Error('the second operator did not reconcile every object within 2 minutes');
      await sleep(100);
    }
    idleShort = await idle(op2, Math.max(IDLE_SECONDS, SHORT_RESYNC));
    secondLog = op2.process.output();
    await stopOperatorProcess(op2);
  }

  const f1 = (x: number) => x.toFixed(1);
  const f2 = (x: number) => x.toFixed(2);
  console.log(`\nOperator: ${N} StructuredProperty objects, creates at concurrency ${CONCURRENCY}, ${WORKERS} workers, leader election on; Postgres ${pgc.label}; Kubernetes ${stopKube ? 'etcd + kube-apiserver of the harness (tmpfs)' : 'from KUBECONFIG'}`);
  console.log('| pass | operator | raw | operator / raw |');
  console.log('|---|---|---|---|');
  console.log(`| apply ${N} objects until all Ready (raw: REST GET + POST propertyDefinition each, ${WORKERS} at a time) | ${f2(applySeconds)} s | ${f2(rawRest)} s | ${f2(applySeconds / rawRest)} |`);
  console.log(`| apply ${N} objects until all Ready (raw: kube create + status patch each, ${CONCURRENCY} at a time) | ${f2(applySeconds)} s | ${f2(rawKube)} s | ${f2(applySeconds / rawKube)} |`);
  console.log(`| reconciles/s during the apply (${reconcileCount} reconciles: ${Object.entries(applyReconciles).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ')}) | ${f1(reconcileCount / applySeconds)}/s | | |`);
  console.log(`| objects Ready/s (raw: definitions written/s) | ${f1(N / applySeconds)}/s | ${f1(N / rawRest)}/s | ${f2(rawRest / applySeconds)} |`);
  console.log(`| operator CPU during the apply (% of one core) | ${f1((100 * applyCpu) / applySeconds)} % | | |`);
  console.log(`| idle, resync 300 s (${IDLE_SECONDS} s window, ${idleDefault.reconciles} reconciles): CPU, RSS (V8 heap used) | ${f2(idleDefault.cpuPercent)} %, ${idleDefault.rss.toFixed(0)} MiB (${idleDefault.heap.toFixed(0)} MiB) | | |`);
  if (idleShort) {
    console.log(`| idle, resync ${SHORT_RESYNC} s, second start (${Math.max(IDLE_SECONDS, SHORT_RESYNC)} s window, ${idleShort.reconciles} reconciles): CPU, RSS (V8 heap used) | ${f2(idleShort.cpuPercent)} %, ${idleShort.rss.toFixed(0)} MiB (${idleShort.heap.toFixed(0)} MiB) | | |`);
  }
  console.log(`\ncreates accepted by the API server in ${f2(createdIn)} s; Ready in a final list: ${readyListed}/${N}`);
  console.log(`operator log (level ≥ warn): first start: ${logSummary(firstLog)}${SHORT_RESYNC > 0 ? `; second start: ${logSummary(secondLog)}` : ''}`);
  console.log(`bench took ${f1(seconds(started))} s`);
} finally {
  for (const op of operators) await stopOperatorProcess(op);
  await server.stop();
  await stopKube?.();
  await pgc.stop();
}

/**
 * Search lag under sustained writes, on both backends: how long a write takes to become searchable
 * while writes come at fixed rates, how fast the outbox is delivered, and how long a bulk load takes to
 * become fully searchable against the load itself.
 *
 *   npm run bench:lag -- [--rates 200,500,1000,2000] [--seconds 60] [--backends postgres,opensearch]
 *                        [--bulk 100000] [--preload 20000] [--probes-per-second 20]
 *
 * For each backend, a server in its own process (as `npm start` runs it) on a fresh database:
 * 1. Rates. For each rate, writes are sent open-loop (on a schedule, not when the last one answered;
 *    none while 512 are unanswered: the server is not keeping up, and the rate answered says so)
 *    for `--seconds`: a third create datasets with 5 structured properties (POST of the entity with its
 *    status and structuredProperties),
 *    a third set the 5 properties of a preloaded dataset again, a third patch one (PATCH add). Beside
 *    them, probes: a write of a new number to `bench.probe` on one of 200 probe datasets, each probe
 *    timed from its answer (the commit) to the first search through the real route
 *    (`GET /openapi/v3/entity/dataset?query=…`, polled every 50 ms) that shows it or a later probe of
 *    the same dataset (timed at the answer's arrival: the watcher's search answer times are reported
 *    beside). Reported: the write rate reached, probe latency p50 / p99 / max, the entities the
 *    dispatcher delivered per second (svc_search_delivered_total), the outbox depth and
 *    svc_search_lag_seconds over the run (sampled from /metrics every second), and whether the lag
 *    stayed bounded (every probe seen within 10 s, and the oldest change waiting at the end younger
 *    than that). The highest rate answered in full (95%) with the lag bounded is the sustained rate.
 * 2. Bulk load. `--bulk` datasets with 5 properties each, 500 per request, 4 requests at a time
 *    (`POST /openapi/v3/entity/dataset`), the dispatcher delivering meanwhile; reported: the load's own
 *    time, the time from its start until every entity is searchable (outbox empty, then counted through
 *    search), and their ratio (the target is at most 1.5).
 * 3. Backlog. Every dataset queued again (on Postgres with the search tables emptied first, as a restore
 *    after a loss), nothing else running: the entities delivered per second, against raw inserts of
 *    the same rows into empty copies of the search tables with the same indexes (Postgres).
 *
 * Postgres: DATABASE_URL, or Debian's PostgreSQL 15 through the harness. OpenSearch: OPENSEARCH_URL, or
 * one started through the harness.
 */
import http from 'node:http';
import pg from 'pg';
import { parseArgs } from 'node:util';
import { benchOpenSearch, benchPostgres, BENCH_TOKEN, call, createDb, startBenchServer, untilSettled, type BenchServer } from './benchSupport.ts';

const { values: args } = parseArgs({
  options: {
    rates: { type: 'string', default: '200,500,1000,2000' },
    seconds: { type: 'string', default: '60' },
    backends: { type: 'string', default: 'postgres,opensearch' },
    bulk: { type: 'string', default: '100000' },
    preload: { type: 'string', default: '20000' },
    'probes-per-second': { type: 'string', default: '20' },
  },
});
const RATES = args.rates.split(',').map(Number);
const SECONDS = Number(args.seconds);
const BACKENDS = args.backends.split(',') as ('postgres' | 'opensearch')[];
const BULK = Number(args.bulk);
const PRELOAD = Number(args.preload);
const PROBE_RATE = Number(args['probes-per-second']);
const PROBE_ENTITIES = 200;
const POLL_MS = 50;
/** Unanswered load writes beyond which no more are sent (see atRate). */
const MAX_PENDING = 512;

const PROPERTIES = ['retention', 'tier', 'owner', 'region', 'domain', 'probe'] as const;
const P = (name: (typeof PROPERTIES)[number]) => `urn:li:structuredProperty:bench.${name}`;
const dataset = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:bench,${name},PROD)`;
const probeUrn = (j: number) => dataset(`probe${j}`);
/** The 5 values of a dataset (the `i`th write of its kind). */
const fiveValues = (i: number) => ({
  properties: [
    { propertyUrn: P('retention'), values: [{ double: (i * 7919) % 3650 + 1 }] },
    { propertyUrn: P('tier'), values: [{ string: `tier-${i % 5}` }] },
    { propertyUrn: P('owner'), values: [{ string: `owner-${(i * 31) % 100}` }] },
    { propertyUrn: P('region'), values: [{ string: `region-${i % 10}` }] },
    { propertyUrn: P('domain'), values: [{ string: `domain-${(i * 13) % 40}` }] },
  ],
});

/** Requests on kept-alive connections, many at once; resolves with the status, rejects on a network error. */
function client(base: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const { hostname, port } = new URL(base);
  return {
    send(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; text: string }> {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string | number> = { authorization: `Bearer ${BENCH_TOKEN}` };
      if (payload) Object.assign(headers, { 'content-type': contentType, 'content-length': payload.length });
      return new Promise((resolve, reject) => {
        const req = http.request({ agent, hostname, port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
type Client = ReturnType<typeof client>;

const aspectPath = (urn: string) => `/openapi/v3/entity/dataset/${encodeURIComponent(urn)}/structuredProperties`;

/** Sends write `k` of the load at a rate: a new dataset, a set of a preloaded one, or a patch of one. */
function loadWrite(c: Client, round: string, k: number) {
  switch (k % 3) {
    case 0:
      return c.send('POST', '/openapi/v3/entity/dataset?async=false', [{ urn: dataset(`${round}.n${k}`), status: { value: { removed: false } }, structuredProperties: { value: fiveValues(k) } }]);
    case 1:
      return c.send('POST', `${aspectPath(dataset(`t${k % PRELOAD}`))}?createIfNotExists=false`, { value: fiveValues(k) });
    default: {
      const tier = P('tier');
      return c.send(
        'PATCH',
        aspectPath(dataset(`t${k % PRELOAD}`)),
        { patch: [{ op: 'add', path: `/properties/${tier}`, value: { propertyUrn: tier, values: [{ string: `tier-${k % 7}` }] } }], arrayPrimaryKeys: { properties: ['propertyUrn'] } },
        'application/json-patch+json',
      );
    }
  }
}

/** The gauges and counters of /metrics the run follows. */
async function metrics(c: Client): Promise<{ depth: number; lag: number; delivered: number }> {
  const { text } = await c.send('GET', '/metrics');
  const value = (name: string) => Number(text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm'))?.[1] ?? NaN);
  return { depth: value('svc_search_outbox_depth'), lag: value('svc_search_lag_seconds'), delivered: value('svc_search_delivered_total') };
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
}

interface RateResult {
  rate: number;
  reached: number;
  /** Writes due that were not sent: MAX_PENDING were unanswered. */
  skipped: number;
  refused: number;
  probes: number;
  p50: number;
  p99: number;
  max: number;
  /** The watcher's search answer times, p50 and p99. */
  searchP50: number;
  searchP99: number;
  deliveredPerSecond: number;
  depthMax: number;
  depthEnd: number;
  lagMax: number;
  bounded: boolean;
}

let probeCount = 0;

/** Writes at `rate` for SECONDS with probes beside them; see the module comment. */
async function atRate(server: BenchServer, rate: number, round: string): Promise<RateResult> {
  // The load, the probes and the watcher each on connections of their own: a probe never waits
  // behind load writes in a client's queue.
  const c = client(server.base);
  const probes = client(server.base);
  const m = client(server.base);
  const committed = new Map<number, number>();
  const visible = new Map<number, number>();
  const outstanding: number[][] = Array.from({ length: PROBE_ENTITIES }, () => []);
  let refused = 0;
  let sent = 0;
  let answered = 0;
  let skipped = 0;
  let pending = 0;
  let lastAnswer = 0;
  let failed: unknown;
  const samples: { depth: number; lag: number; delivered: number }[] = [];
  // How long the watcher's searches took to answer: a probe counts as visible when the answer showing
  // it arrives, so a slow answer (a server busy with writes) is part of the latencies.
  const searchTimes: number[] = [];
  const before = await metrics(m);
  const start = performance.now();
  const end = start + SECONDS * 1000;
  const inFlight = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  let probesSent = 0;
  const writer = (async () => {
    while (performance.now() < end && !failed) {
      const now = performance.now();
      const due = Math.floor(((now - start) * rate) / 1000);
      for (; sent < due; sent++) {
        // Open-loop, but with a bound: past MAX_PENDING unanswered writes the server is not keeping up,
        // and the writes due are not sent (the rate reached says so).
        if (pending >= MAX_PENDING) {
          skipped++;
          continue;
        }
        pending++;
        track(
          loadWrite(c, round, sent).then(
            (r) => {
              answered++;
              pending--;
              lastAnswer = performance.now();
              if (r.status >= 300 && ++refused === 1) console.error(`a write was refused: HTTP ${r.status} ${r.text.slice(0, 300)}`);
            },
            (err: unknown) => (failed = err),
          ),
        );
      }
      for (; probesSent < Math.floor(((now - start) * PROBE_RATE) / 1000); probesSent++) {
        const k = ++probeCount;
        outstanding[k % PROBE_ENTITIES]!.push(k);
        track(
          probes.send('POST', `${aspectPath(probeUrn(k % PROBE_ENTITIES))}?createIfNotExists=false`, { value: { properties: [{ propertyUrn: P('probe'), values: [{ double: k }] }] } }).then(
            (r) => (r.status < 300 ? void committed.set(k, performance.now()) : (failed = new Error(`a probe was refused: HTTP ${r.status} ${r.text}`))),
            (err: unknown) => (failed = err),
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(inFlight);
  })();
  const sampler = setInterval(() => void metrics(m).then((s) => samples.push(s), () => undefined), 1000);
  // The watcher: the probe number each probe dataset shows in search now.
  const watchUntil = () => performance.now() < end + 60_000 && outstanding.some((o) => o.length > 0) || performance.now() < end;
  while (watchUntil() && !failed) {
    const asked = performance.now();
    const { status, text } = await m.send('GET', `/openapi/v3/entity/dataset?query=${encodeURIComponent('_exists_:structuredProperties.bench_probe')}&count=${PROBE_ENTITIES}&aspects=structuredProperties`);
    const at = performance.now();
    searchTimes.push(at - asked);
    if (status !== 200) throw new Error(`search failed: HTTP ${status} ${text.slice(0, 300)}`);
    for (const e of (JSON.parse(text) as { entities: { urn: string; structuredProperties?: { value: { properties: { propertyUrn: string; values: { double?: number }[] }[] } } }[] }).entities) {
      const shown = e.structuredProperties?.value.properties.find((p) => p.propertyUrn === P('probe'))?.values[0]?.double;
      const j = Number(e.urn.match(/,probe(\d+),/)?.[1]);
      if (shown === undefined || Number.isNaN(j)) continue;
      const waiting = outstanding[j]!;
      while (waiting.length && waiting[0]! <= shown) visible.set(waiting.shift()!, at);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  await writer;
  const writeSeconds = (lastAnswer - start) / 1000;
  clearInterval(sampler);
  const after = await metrics(m);
  c.close();
  probes.close();
  m.close();
  if (failed) throw failed;
  const latencies = [...visible].filter(([k]) => committed.has(k)).map(([k, at]) => Math.max(0, at - committed.get(k)!));
  const lost = outstanding.reduce((n, o) => n + o.length, 0);
  const depthEnd = samples.at(-1)?.depth ?? NaN;
  return {
    rate,
    // Answered writes over the time until the last answer (open-loop: what was sent is the schedule).
    reached: answered / Math.max(SECONDS, writeSeconds),
    skipped,
    refused,
    probes: probesSent,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: lost > 0 ? Infinity : Math.max(...latencies),
    searchP50: percentile(searchTimes, 50),
    searchP99: percentile(searchTimes, 99),
    deliveredPerSecond: (after.delivered - before.delivered) / ((performance.now() - start) / 1000),
    depthMax: Math.max(...samples.map((s) => s.depth)),
    depthEnd,
    lagMax: Math.max(...samples.map((s) => s.lag)),
    // Bounded: every probe seen within 10 s, and the oldest change waiting at the end younger than that.
    bounded: lost === 0 && Math.max(...latencies) <= 10_000 && (samples.at(-1)?.lag ?? Infinity) <= 10,
  };
}

/** Loads BULK datasets; the load's time and the time until all are searchable, both from the load's start. */
async function bulkLoad(server: BenchServer): Promise<{ loadSeconds: number; searchableSeconds: number; found: number }> {
  const c = client(server.base);
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let from = (next += 500) - 500; from < BULK; from = (next += 500) - 500) {
        const batch = Array.from({ length: Math.min(500, BULK - from) }, (_, k) => ({
          urn: dataset(`bulk${from + k}`),
          status: { value: { removed: false } },
          structuredProperties: { value: fiveValues(from + k) },
        }));
        const r = await c.send('POST', '/openapi/v3/entity/dataset?async=false', batch);
        if (r.status !== 200) throw new Error(`bulk load: HTTP ${r.status} ${r.text.slice(0, 300)}`);
      }
    }),
  );
  const loadSeconds = (performance.now() - start) / 1000;
  for (;;) {
    const s = await metrics(c);
    if (s.depth === 0 && s.lag === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // Delivered; searchable once the last entity written is found (OpenSearch refreshes within a second).
  const last = `/openapi/v3/entity/dataset?query=${encodeURIComponent(`name:bulk${BULK - 1}`)}&count=1`;
  while ((JSON.parse((await c.send('GET', last)).text) as { entities: unknown[] }).entities.length === 0) await new Promise((r) => setTimeout(r, 50));
  const searchableSeconds = (performance.now() - start) / 1000;
  // Then every one counted through search (not timed).
  let found = 0;
  let scrollId: string | undefined;
  do {
    const r = await c.send('GET', `/openapi/v3/entity/dataset?query=${encodeURIComponent('name:bulk*')}&count=1000${scrollId ? `&scrollId=${encodeURIComponent(scrollId)}` : ''}`);
    const page = JSON.parse(r.text) as { entities: unknown[]; scrollId?: string };
    found += page.entities.length;
    scrollId = page.scrollId;
  } while (scrollId);
  c.close();
  return { loadSeconds, searchableSeconds, found };
}

/**
 * Delivery of a backlog, nothing else running: every dataset queued again with its search tables (on
 * Postgres) emptied first, as `system-update --restore-indices` does after a loss, timed until the
 * outbox is empty. On Postgres the raw side inserts the same value and document rows, set-wise in one
 * statement each, into empty copies of the search tables with the same indexes.
 */
async function backlog(server: BenchServer, db: string, backend: string): Promise<{ entities: number; seconds: number; rawSeconds?: number }> {
  const sql = new pg.Client({ connectionString: db });
  await sql.connect();
  const c = client(server.base);
  try {
    if (backend === 'postgres') {
      await sql.query('CREATE TABLE raw_values AS SELECT * FROM search_values; CREATE TABLE raw_documents AS SELECT * FROM search_documents');
      await sql.query('TRUNCATE search_documents, search_values');
    }
    await sql.query('CHECKPOINT');
    const start = performance.now();
    const { rowCount } = await sql.query("INSERT INTO search_outbox (urn) SELECT urn FROM aspects WHERE version = 0 AND aspect = 'datasetKey' ORDER BY urn");
    for (;;) {
      const s = await metrics(c);
      if (s.depth === 0 && s.lag === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - start) / 1000;
    if (backend !== 'postgres') return { entities: rowCount ?? 0, seconds };
    await sql.query('CREATE TABLE raw_values_target (LIKE search_values INCLUDING ALL); CREATE TABLE raw_documents_target (LIKE search_documents INCLUDING ALL); CHECKPOINT');
    const raw = performance.now();
    await sql.query('INSERT INTO raw_documents_target SELECT * FROM raw_documents');
    await sql.query('INSERT INTO raw_values_target SELECT * FROM raw_values');
    const rawSeconds = (performance.now() - raw) / 1000;
    await sql.query('DROP TABLE raw_values, raw_documents, raw_values_target, raw_documents_target');
    return { entities: rowCount ?? 0, seconds, rawSeconds };
  } finally {
    c.close();
    await sql.end();
  }
}

const pgc = await benchPostgres();
const os = BACKENDS.includes('opensearch') ? await benchOpenSearch() : undefined;
const fmt = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : 'not all visible');
try {
  for (const backend of BACKENDS) {
    const db = await createDb(pgc.adminUrl);
    const env: Record<string, string> = { SEARCH_BACKEND: backend };
    if (backend === 'opensearch') Object.assign(env, { OPENSEARCH_URL: os!.url, INDEX_PREFIX: `lag${Date.now()}`, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0' });
    const server = await startBenchServer(db, 16, env);
    try {
      for (const name of PROPERTIES) {
        const valueType = name === 'retention' || name === 'probe' ? 'urn:li:dataType:svc.number' : 'urn:li:dataType:svc.string';
        await call(server.base, 'POST', `/openapi/v3/entity/structuredProperty/${encodeURIComponent(P(name))}/propertyDefinition`, {
          value: { qualifiedName: `bench.${name}`, valueType, entityTypes: ['urn:li:entityType:svc.dataset'] },
        });
      }
      for (let from = 0; from < PRELOAD; from += 1000) {
        const batch = Array.from({ length: Math.min(1000, PRELOAD - from) }, (_, k) => ({ urn: dataset(`t${from + k}`), status: { value: { removed: false } }, structuredProperties: { value: fiveValues(from + k) } }));
        await call(server.base, 'POST', '/openapi/v3/entity/dataset?async=false', batch);
      }
      await call(server.base, 'POST', '/openapi/v3/entity/dataset?async=false', Array.from({ length: PROBE_ENTITIES }, (_, j) => ({ urn: probeUrn(j), status: { value: { removed: false } } })));
      await untilSettled(db, 600_000);
      console.log(`\n${backend}: writes at fixed rates for ${SECONDS} s each (${PRELOAD} datasets preloaded; a third new datasets with 5 properties, a third sets of 5, a third patches), probes at ${PROBE_RATE}/s (Postgres: ${pgc.label})`);
      console.log('| rate | answered | not sent (512 unanswered) | refused | probe p50 | p99 | max | watcher search p50 / p99 | delivered entities/s | outbox depth max / end | svc_search_lag_seconds max | bounded |');
      console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
      let sustained = 0;
      for (const rate of RATES) {
        const r = await atRate(server, rate, `r${rate}`);
        if (r.bounded && r.reached >= rate * 0.95) sustained = rate;
        console.log(
          `| ${rate}/s | ${r.reached.toFixed(0)}/s | ${r.skipped} | ${r.refused} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${fmt(r.searchP50)} / ${fmt(r.searchP99)} | ${r.deliveredPerSecond.toFixed(0)} | ${r.depthMax} / ${r.depthEnd} | ${r.lagMax.toFixed(2)} s | ${r.bounded ? 'yes' : 'no'} |`,
        );
        await untilSettled(db, 1_800_000);
      }
      console.log(`highest rate with the lag bounded: ${sustained ? `${sustained}/s` : 'none of those tried'}`);
      if (BULK > 0) {
        const b = await bulkLoad(server);
        console.log(
          `bulk load of ${BULK} datasets × 5 properties: loaded in ${b.loadSeconds.toFixed(1)} s (${(BULK / b.loadSeconds).toFixed(0)}/s), all searchable after ${b.searchableSeconds.toFixed(1)} s (${b.found} found): **${(b.searchableSeconds / b.loadSeconds).toFixed(2)}** of the load's time`,
        );
        const d = await backlog(server, db, backend);
        const rate = d.entities / d.seconds;
        console.log(
          `backlog of ${d.entities} datasets delivered again, nothing else running: ${d.seconds.toFixed(1)} s, **${rate.toFixed(0)} entities/s**` +
            (d.rawSeconds === undefined ? '' : ` (raw inserts of the same rows into indexed copies: ${d.rawSeconds.toFixed(1)} s, ${(d.entities / d.rawSeconds).toFixed(0)} entities/s; svc/raw ${(d.rawSeconds / d.seconds).toFixed(2)})`),
        );
      }
    } finally {
      await server.stop();
    }
  }
} finally {
  await os?.stop();
  await pgc.stop();
}

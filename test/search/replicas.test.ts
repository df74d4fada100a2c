/**
 * Two server processes on one database (and one OpenSearch), as two replicas of the Deployment behind
 * one Service run: writes from several clients spread over both; a property hard delete's value cleanup
 * and a time series truncation, started on one replica, run once; one replica is killed (SIGKILL)
 * under load and the other serves on; in the end every acknowledged write is stored, no write is half
 * applied, and search (fed by both replicas' outbox, the killed one's leftovers delivered by the other)
 * finds each stored value. On both search backends.
 *
 * Seeded: `SVC_RELIABILITY_SEED=<seed>` replays the choices; `SVC_RELIABILITY_LONG=1` runs longer.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Client } from '@opensearch-project/opensearch';
import { startChildServer, type ChildServer } from '../support/childServer.ts';
import { assertSearchable, assertStoredAsModelled, pickWrite, prepareWorkload, rng, sendWrite, settleUnacknowledged, type Call } from '../support/mixedWrites.ts';
import { pollUntil } from '../support/poll.ts';
import { datasetUrn, definitionOf, propertyUrn } from '../support/structuredProperties.ts';
import { HARD_DELETE_TASK } from '../support/tasks.ts';
import { createTestDatabase, enc, sql } from '../support/testServer.ts';
import { opensearchUrl, searchBackends } from '../support/searchBackends.ts';

const LONG = process.env.SVC_RELIABILITY_LONG === '1';
const CLIENTS = LONG ? 6 : 3;
const WRITES_BEFORE_KILL = LONG ? 400 : 60;
const WRITES_AFTER_KILL = LONG ? 400 : 60;
const SEED = Number(process.env.SVC_RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const DAY = 86_400_000;

/** A call to one replica (`server` is its ChildServer), JSON unless told otherwise. */
function callOf(server: ChildServer): Call {
  return (path, init = {}) => {
    const { contentType, ...rest } = init;
    return server.remote.request(path, { ...rest, headers: { 'content-type': contentType ?? 'application/json' } });
  };
}

async function ok(res: Promise<Response>, what: string): Promise<unknown> {
  const r = await res;
  const body = await r.text();
  assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${body}`);
  return body ? JSON.parse(body) : undefined;
}

for (const backend of searchBackends()) {
  describe(`two replicas on one database, on ${backend.name}`, () => {
    const prefix = `rp${randomBytes(4).toString('hex')}`;
    const servers: ChildServer[] = [];
    after(async () => {
      for (const s of servers) await s.kill();
      if (backend.name === 'opensearch') {
        const client = new Client({ node: opensearchUrl() });
        await client.indices.delete({ index: `${prefix}_*`, expand_wildcards: 'all', ignore_unavailable: true });
        await client.close();
      }
    });

    test(`writes over both, tasks once, one replica killed under load: nothing lost, search has it all (seed ${SEED})`, { timeout: LONG ? 900_000 : 180_000 }, async () => {
      process.stdout.write(`# replicas on ${backend.name}: seed ${SEED} (replay: SVC_RELIABILITY_SEED=${SEED})\n`);
      const databaseUrl = await createTestDatabase();
      const env = { ...backend.env, DATABASE_URL: databaseUrl, INDEX_PREFIX: prefix, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0', SVC_DB_POOL_SIZE: '8' };
      // Both start at once: migrations and index creation race, as two pods of a rollout do.
      const [a, b] = await Promise.all([startChildServer(env), startChildServer(env)]);
      servers.push(a!, b!);
      const replicas = [callOf(a!), callOf(b!)];
      let alive = [0, 1];
      let turn = 0;
      const served = [0, 0];
      // Round robin over the live replicas, as a Service spreads requests.
      const call: Call = (path, init) => {
        const i = alive[turn++ % alive.length]!;
        served[i]!++;
        return replicas[i]!(path, init);
      };
      const survivor = replicas[1]!;

      // ---- tasks started on one replica, with both running: each runs once ----------------------
      const gone = propertyUrn(`${prefix}.gone`);
      await ok(replicas[0]!(`/openapi/v3/entity/structuredProperty/${enc(gone)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: definitionOf(`${prefix}.gone`) }) }), 'define');
      const holders = Array.from({ length: 12 }, (_, k) => datasetUrn(`${prefix}.holder${k}`));
      for (const [k, urn] of holders.entries()) {
        await ok(replicas[(k + 1) % 2]!(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 'create');
        await ok(replicas[k % 2]!(`/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { properties: [{ propertyUrn: gone, values: [{ string: `v${k}` }] }] } }) }), 'set');
      }
      // 3 of 10 entries old: fewer than half, so a delete by query on OpenSearch (not a reindex of the rest).
      const now = Date.now();
      const profiled = datasetUrn(`${prefix}.profiled`);
      for (let k = 0; k < 10; k++) {
        const timestampMillis = k < 3 ? now - 100 * DAY + k : now - 1000 + k;
        await ok(replicas[k % 2]!(`/openapi/v3/entity/dataset/${enc(profiled)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis, rowCount: k } }) }), 'profile');
      }
      await ok(replicas[0]!(`/openapi/v3/entity/structuredProperty/${enc(gone)}`, { method: 'DELETE' }), 'hard delete');
      const endTimeMillis = now - 30 * DAY;
      const t1 = (body: object) => replicas[1]!('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis, ...body }) });
      const dry = ((await ok(t1({ dryRun: true }), 'dry run')) as { value: string }).value;
      assert.match(dry, /^Delete 3 out of 10 rows/);
      const taskId = ((await ok(t1({ dryRun: false }), 'truncate')) as { value: string }).value;

      const cleanup = await pollUntil(
        'the value cleanup done',
        () => sql<{ state: string; attempts: number; failures: number }>(databaseUrl, 'SELECT state, attempts, failures FROM tasks WHERE kind = $1 AND subject = $2', [HARD_DELETE_TASK, gone]),
        (t) => t.length === 1 && t[0]!.state === 'SUCCEEDED',
        60_000,
      );
      assert.deepEqual(cleanup, [{ state: 'SUCCEEDED', attempts: 1, failures: 0 }], 'one run of the cleanup, by one replica');
      for (const urn of holders) {
        const res = await survivor(`/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties`);
        assert.ok(res.status === 404 || !(await res.text()).includes(gone), `${urn} still holds a value of the deleted property`);
      }
      const truncation = await pollUntil(
        'the truncation done',
        async () => JSON.parse(((await ok(replicas[0]!('/gms/operations?action=getEsTaskStatus', { method: 'POST', body: JSON.stringify({ task: taskId }) }), 'status')) as { value: string }).value) as { completed?: boolean; status?: { deleted?: number } },
        (s) => s.completed === true,
        60_000,
      );
      assert.equal(truncation.status?.deleted, 3, `the old entries deleted, once: ${JSON.stringify(truncation)}`);
      assert.match(((await ok(t1({ dryRun: true }), 'dry run after')) as { value: string }).value, /^Delete 0 out of 7 rows/);
      if (taskId.startsWith('svc:')) {
        const rows = await sql<{ attempts: number }>(databaseUrl, 'SELECT attempts FROM tasks WHERE id = $1', [Number(taskId.slice(4))]);
        assert.deepEqual(rows, [{ attempts: 1 }], 'one run of the truncation');
      }

      // ---- mixed writes over both; one replica killed in the middle -------------------------------
      const load = await prepareWorkload(call, prefix, CLIENTS);
      const counts = { acknowledged: 0, lost: 0, appliedAfterLoss: 0 };
      let written = 0;
      let killed: Promise<void> | undefined;
      const client = async (c: number) => {
        const random = rng(SEED + c + 1);
        for (let n = 0; written < WRITES_BEFORE_KILL + WRITES_AFTER_KILL; n++) {
          written++;
          if (written === WRITES_BEFORE_KILL) {
            // The kill lands while the other clients' requests are in flight on both replicas.
            killed = a!.kill().then(() => {
              alive = [1];
            });
          }
          const write = pickWrite(call, load, c, random, `c${c}n${n}`);
          if (await sendWrite(load, write)) {
            counts.acknowledged++;
            continue;
          }
          counts.lost++;
          await killed;
          if (await settleUnacknowledged(survivor, load, write)) counts.appliedAfterLoss++;
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      await killed;
      process.stdout.write(
        `# replicas on ${backend.name}: ${counts.acknowledged} writes acknowledged (${served[0]} requests to the killed replica, ${served[1]} to the other), ${counts.lost} answers lost to the kill (${counts.appliedAfterLoss} of those applied)\n`,
      );
      assert.ok(served[0]! > WRITES_BEFORE_KILL / 4 && served[1]! > WRITES_BEFORE_KILL / 4, 'writes went to both replicas');
      await assertStoredAsModelled(survivor, load);

      // ---- search: the survivor delivers what is left in the outbox, and finds every stored value --
      const checked = await assertSearchable(survivor, load, databaseUrl);
      assert.ok(checked > 0, 'some values to search for');
    });
  });
}

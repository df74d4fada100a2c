/**
 * Two server replicas of the chart on a real cluster, with the bundled Postgres: a task (a property hard
 * delete's value cleanup) runs once, search is fed once (each value found on exactly its entity), the
 * PodDisruptionBudget refuses a second eviction while the first pod is replaced; then Postgres's pod is
 * deleted and the StatefulSet starts it again on the same local volume, the data there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { CHART, helm } from '../support/chart.ts';
import { call, core, createNamespace, describePods, dropNamespace, expectOk as ok, podsOf, policy, psql, secretValue, serviceUrl, testValues, waitPodsReady } from '../support/cluster.ts';
import { pollUntil } from '../support/poll.ts';
import { datasetUrn, definitionOf, propertyUrn } from '../support/structuredProperties.ts';

const REL = 'rel';
const FULL = 'rel-svc';
const enc = encodeURIComponent;
let ns: string;
let base: string;
let token: string;

before(async () => {
  ns = await createNamespace('replicas');
});

after(async () => {
  if (ns) await dropNamespace(ns);
});

describe('two server replicas with the bundled Postgres', () => {
  test('helm install with server.replicas=2: both server pods Ready', async () => {
    await helm('install', REL, CHART, '--namespace', ns, ...testValues(ns), '--set', 'postgresql.enabled=true', '--set', 'server.replicas=2', '--wait', '--timeout', '300s').catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await describePods(ns)}`);
    });
    await waitPodsReady(ns, 'server', 2);
    base = await serviceUrl(ns, FULL);
    token = await secretValue(ns, `${FULL}-admin-token`, 'token');
  });

  test('two server replicas: a task runs once, search is fed once, the PodDisruptionBudget refuses a second eviction', async () => {
    const pods = await waitPodsReady(ns, 'server', 2);
    const [pg] = await waitPodsReady(ns, 'postgresql', 1);
    const prefix = `two${Date.now()}`;
    const kept = `${prefix}.kept`;
    const gone = `${prefix}.gone`;
    for (const qn of [kept, gone]) {
      await ok(call(base, token, `/openapi/v3/entity/structuredProperty/${enc(propertyUrn(qn))}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: definitionOf(qn) }) }), `define ${qn}`);
    }
    const datasets = Array.from({ length: 12 }, (_, k) => datasetUrn(`${prefix}.d${k}`));
    for (const [k, urn] of datasets.entries()) {
      await ok(call(base, token, `/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 'create');
      const properties = [
        { propertyUrn: propertyUrn(kept), values: [{ string: `${prefix}v${k}` }] },
        { propertyUrn: propertyUrn(gone), values: [{ string: `g${k}` }] },
      ];
      await ok(call(base, token, `/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { properties } }) }), 'set');
    }
    // A hard delete's value cleanup is a task: with two replicas claiming tasks, it runs once.
    await ok(call(base, token, `/openapi/v3/entity/structuredProperty/${enc(propertyUrn(gone))}`, { method: 'DELETE' }), 'hard delete');
    const task = await pollUntil(
      'the value cleanup done',
      () => psql(ns, pg!.metadata!.name!, `SELECT state, attempts, failures FROM tasks WHERE kind = 'property-hard-delete' AND subject = '${propertyUrn(gone)}'`),
      (rows) => rows.length === 1 && rows[0]![0] === 'SUCCEEDED',
      90_000,
    );
    assert.deepEqual(task, [['SUCCEEDED', '1', '0']], 'one run of the cleanup, by one replica');
    // Search: the outbox drained by the replicas, each value found on exactly its dataset.
    await pollUntil('the search outbox delivered', () => psql(ns, pg!.metadata!.name!, 'SELECT count(*) FROM search_outbox'), (rows) => rows[0]![0] === '0', 60_000);
    const field = `structuredProperties.${kept.replace(/\./g, '_')}`;
    for (const [k, urn] of datasets.entries()) {
      const found = await pollUntil(
        `search for ${field}:${prefix}v${k}`,
        async () => ((await ok(call(base, token, `/openapi/v3/entity/dataset?query=${enc(`${field}:${prefix}v${k}`)}&count=10`), 'search')) as { entities: { urn: string }[] }).entities.map((e) => e.urn),
        (urns) => urns.length === 1,
        15_000,
      );
      assert.deepEqual(found, [urn]);
    }
    // maxUnavailable 1: the first eviction is allowed, a second one while the first pod is replaced is not.
    const evict = (name: string) => core.createNamespacedPodEviction({ name, namespace: ns, body: { metadata: { name, namespace: ns } } });
    await evict(pods[0]!.metadata!.name!);
    const refused = await evict(pods[1]!.metadata!.name!).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof ApiException && refused.code === 429, `the second eviction is refused by the PodDisruptionBudget: ${String(refused)}`);
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name: FULL, namespace: ns });
    assert.equal(pdb.status!.disruptionsAllowed, 0);
    await waitPodsReady(ns, 'server', 2);
  });

  test("Postgres's pod deleted: the StatefulSet starts it again on the same local volume, the data is there, the server serves on", async () => {
    const urn = datasetUrn('cluster.survivor');
    await ok(call(base, token, `/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties`, { method: 'POST', body: JSON.stringify({ value: { description: 'kept' } }) }), 'write');
    const [before] = await waitPodsReady(ns, 'postgresql', 1);
    await core.deleteNamespacedPod({ name: before!.metadata!.name!, namespace: ns });
    const [after] = await pollUntil('a new Postgres pod', () => podsOf(ns, 'postgresql'), (ps) => ps.length === 1 && ps[0]!.metadata!.uid !== before!.metadata!.uid, 60_000);
    assert.equal(after!.spec!.volumes!.find((v) => v.name === 'data')!.persistentVolumeClaim!.claimName, `data-${FULL}-postgresql-0`);
    await waitPodsReady(ns, 'postgresql', 1);
    const read = await pollUntil(
      'the write read back through the server',
      async () => {
        const res = await call(base, token, `/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties`).catch(() => undefined);
        return res ? `${res.status} ${await res.text()}` : 'no answer';
      },
      (r) => r.startsWith('200 '),
      90_000,
    );
    assert.match(read, /"description":"kept"/);
  });
});

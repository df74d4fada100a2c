/**
 * The operator as it runs in a cluster: processes of its own (`operator/src/main.ts` compiled), two replicas on
 * one Lease (one acts, the other takes over when the leader is killed, a SIGTERM releases the Lease),
 * probes and metrics over HTTP, and watches that survive the API server dropping their connections.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { pollUntil } from '../support/poll.ts';
import { kubeProxy } from '../support/kubeProxy.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/testServer.ts';
import { createNamespace, createObject, installCrds, kc, readyNow, spawnOperator, startTestOperator, waitProperty, type OperatorProcess } from '../support/operator.ts';

const leases = kc.makeApiClient(CoordinationV1Api);
let server: TestServer;
const running: OperatorProcess[] = [];

before(async () => {
  await installCrds();
  server = await startTestServer();
});

after(async () => {
  await Promise.all(running.map((p) => p.kill()));
  await server?.close();
});

/** The port an operator process logged when it started. */
async function portOf(p: OperatorProcess): Promise<number> {
  const line = await pollUntil('the operator to start', async () => p.output(), (out) => /"port":\d+/.test(out) || p.child.exitCode !== null, 30_000);
  const m = /"port":(\d+)/.exec(line);
  assert.ok(m, `the operator did not start:\n${line}`);
  return Number(m[1]);
}

const get = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
};

const metric = (body: string, name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(body)?.[1] ?? NaN);

describe('two operator replicas', () => {
  test('one leads and acts, the other takes over when it is killed, and SIGTERM releases the Lease', async () => {
    const ns = await createNamespace('replicas');
    const env = (name: string) => ({
      SVC_GMS_URL: server.url,
      SVC_GMS_TOKEN: ADMIN_TOKEN,
      KUBECONFIG: process.env.KUBECONFIG!,
      SVC_OPERATOR_NAMESPACE: ns,
      SVC_OPERATOR_POD_NAMESPACE: ns,
      SVC_OPERATOR_LEASE_DURATION: '3',
      SVC_OPERATOR_RENEW_DEADLINE: '2',
      SVC_OPERATOR_RETRY_PERIOD: '0.5',
      POD_NAME: name,
    });
    const a = spawnOperator(env('replica-a'));
    const b = spawnOperator(env('replica-b'));
    running.push(a, b);
    const ports = { a: await portOf(a), b: await portOf(b) };
    const lease = await pollUntil('a leader', () => leases.readNamespacedLease({ name: 'svc-operator', namespace: ns }).catch(() => undefined), (l) => /^replica-[ab]_/.test(l?.spec?.holderIdentity ?? ''));
    const leaderName = lease!.spec!.holderIdentity!.startsWith('replica-a') ? 'a' : 'b';
    const [leader, follower] = leaderName === 'a' ? [a, b] : [b, a];
    const [leaderPort, followerPort] = leaderName === 'a' ? [ports.a, ports.b] : [ports.b, ports.a];

    await createObject(ns, 'structuredproperties', { metadata: { name: 'one' }, spec: { qualifiedName: `replicas.one.${Date.now()}`, valueType: 'string', entityTypes: ['dataset'] } });
    await waitProperty(ns, 'one', 'Ready', readyNow);

    for (const port of [leaderPort, followerPort]) {
      assert.equal((await get(port, '/healthz')).status, 200);
      assert.equal((await get(port, '/readyz')).status, 200, 'a standby is ready to take over');
    }
    const leaderMetrics = (await get(leaderPort, '/metrics')).body;
    const followerMetrics = (await get(followerPort, '/metrics')).body;
    assert.equal(metric(leaderMetrics, 'leader_election_master_status', 'name="svc-operator"'), 1);
    assert.equal(metric(followerMetrics, 'leader_election_master_status', 'name="svc-operator"'), 0);
    assert.ok(metric(leaderMetrics, 'controller_runtime_reconcile_total', 'controller="structuredproperty",result="requeue_after"') >= 1, leaderMetrics);
    assert.match(leaderMetrics, /^workqueue_depth\{.*name="structuredproperty".*\} \d+$/m);
    assert.match(leaderMetrics, /^controller_runtime_reconcile_time_seconds_bucket\{.*controller="structuredproperty".*\} \d+$/m);
    assert.ok(!(metric(followerMetrics, 'controller_runtime_reconcile_total', 'controller="structuredproperty",result="requeue_after"') > 0), 'the standby does not reconcile');

    // The leader dies without a word: the other replica takes over once the Lease expires.
    await leader.kill('SIGKILL');
    const followerPrefix = `replica-${leaderName === 'a' ? 'b' : 'a'}_`;
    const taken = await pollUntil('the takeover', () => leases.readNamespacedLease({ name: 'svc-operator', namespace: ns }), (l) => l.spec?.holderIdentity?.startsWith(followerPrefix) === true, 20_000);
    assert.ok((taken.spec!.leaseTransitions ?? 0) >= 1);
    await createObject(ns, 'structuredproperties', { metadata: { name: 'two' }, spec: { qualifiedName: `replicas.two.${Date.now()}`, valueType: 'string', entityTypes: ['dataset'] } });
    await waitProperty(ns, 'two', 'Ready', readyNow);

    // A graceful stop gives the Lease up at once.
    const exited = new Promise<number | null>((r) => follower.child.once('exit', (code) => r(code)));
    follower.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    const released = await leases.readNamespacedLease({ name: 'svc-operator', namespace: ns });
    assert.ok(!released.spec?.holderIdentity, `released: ${JSON.stringify(released.spec)}`);
  });
});

describe('watches', () => {
  test('survive the API server dropping their connections, and a partition of a few seconds', async () => {
    const ns = await createNamespace('watch');
    const proxy = await kubeProxy(kc);
    const operator = await startTestOperator(server.url, ns, {}, proxy.config);
    try {
      const property = (name: string) => createObject(ns, 'structuredproperties', { metadata: { name }, spec: { qualifiedName: `watch.${name}.${Date.now()}`, valueType: 'string', entityTypes: ['dataset'] } });
      await property('w1');
      await waitProperty(ns, 'w1', 'Ready', readyNow);
      proxy.drop();
      await property('w2');
      await waitProperty(ns, 'w2', 'Ready after the watch was dropped', readyNow);
      proxy.cut();
      await property('w3');
      await new Promise((r) => setTimeout(r, 3_000));
      proxy.heal();
      await waitProperty(ns, 'w3', 'Ready after the partition', readyNow, 60_000);
    } finally {
      await operator.stop();
      await proxy.close();
    }
  });
});

/**
 * The chart in `operator` mode against the harness's kube-apiserver: `helm install` and `helm upgrade`
 * run no hooks, and the operator, started with the environment the chart gives its Deployment and
 * acting as the chart's ServiceAccount (impersonated, so only the chart's RBAC applies), creates the
 * system-update Job of the installed revision and of the upgraded one, and reconciles a
 * StructuredProperty. The harness has no Deployment controller: the test raises the Deployment's
 * revision annotation itself, as that controller would after each rollout.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { AppsV1Api, KubeConfig, type V1Job } from '@kubernetes/client-node';
import { loadOperatorConfig } from '../../operator/src/config.ts';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { RESULT_ANNOTATION } from '../../operator/src/controllers/systemUpdate.ts';
import { CHART, envOf, helm } from '../support/chart.ts';
import { batch, core, createNamespace, createObject, eventReasons, finishJob, installCrds, kc, merge, readyNow, waitProperty } from '../support/operator.ts';
import { pollUntil } from '../support/poll.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/testServer.ts';

const apps = kc.makeApiClient(AppsV1Api);
let server: TestServer;
let operator: Operator | undefined;
let ns: string;

const values = () => ['--set', 'database.existingSecret=db', '--set', 'systemUpdate.mode=operator', '--set', `operator.watchNamespace=${ns}`];
const jobs = async () => (await batch.listNamespacedJob({ namespace: ns })).items.map((j: V1Job) => j.metadata!.name!).sort();
const job = (name: string) => batch.readNamespacedJob({ name, namespace: ns }).catch(() => undefined);

/** What the Deployment controller does after a rollout: raise the revision annotation. */
async function rolledOut(revision: string): Promise<void> {
  await apps.patchNamespacedDeployment({ name: 'rel-svc', namespace: ns, body: { metadata: { annotations: { 'deployment.kubernetes.io/revision': revision } } } }, merge);
}

/** The harness's kubeconfig, acting as the chart's operator ServiceAccount. */
function asServiceAccount(name: string): KubeConfig {
  const own = new KubeConfig();
  own.loadFromOptions({
    clusters: kc.clusters,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
    users: kc.users.map((u) => ({ ...u, impersonateUser: `system:serviceaccount:${ns}:${name}` })),
  });
  return own;
}

before(async () => {
  await installCrds();
  server = await startTestServer();
  ns = await createNamespace('chart-op');
  await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'db' }, stringData: { DATABASE_URL: 'postgres://svc@postgres:5432/svc' } } });
});

after(async () => {
  await operator?.stop();
  await server?.close();
});

describe('operator mode', () => {
  test('helm install runs no hook and creates no Job', async () => {
    await helm('install', 'rel', CHART, '--namespace', ns, ...values(), '--timeout', '60s');
    assert.equal(JSON.parse(await helm('status', 'rel', '--namespace', ns, '-o', 'json')).info.status, 'deployed');
    assert.deepEqual(await jobs(), []);
  });

  test('the operator, as the chart configures it and with only its RBAC, creates the Job of the installed revision', async () => {
    const deployment = await apps.readNamespacedDeployment({ name: 'rel-svc-operator', namespace: ns });
    const pod = deployment.spec!.template.spec!;
    const env = Object.fromEntries(Object.entries(envOf(pod.containers[0] as never)).filter(([, v]) => !/^(secret|field):/.test(v)));
    assert.equal(env.SVC_OPERATOR_SERVER_DEPLOYMENT, 'rel-svc');
    operator = await startOperator(
      loadOperatorConfig({
        ...env,
        // Reached from the test, not through the cluster's DNS; the token the Secret would give.
        SVC_GMS_URL: server.url,
        SVC_GMS_TOKEN: ADMIN_TOKEN,
        SVC_OPERATOR_POD_NAMESPACE: ns,
        SVC_OPERATOR_PORT: '0',
        SVC_OPERATOR_POLL_SECONDS: '0.2',
      }),
      pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? 'silent' }),
      asServiceAccount(pod.serviceAccountName!),
    );
    await rolledOut('1');
    const created = (await pollUntil('the Job of revision 1', () => job('rel-svc-system-update-op-1'), (j) => j !== undefined)) as V1Job;
    assert.equal(created.spec!.template.spec!.containers[0]!.image, 'ghcr.io/svc-dev/svc:0.1.0');
    assert.deepEqual(created.metadata!.ownerReferences!.map((o) => `${o.kind}/${o.name}`), ['Deployment/rel-svc']);
    // As the hook Job would be: the chart's systemUpdate values, no admin token, no service account token.
    assert.deepEqual([created.spec!.backoffLimit, created.spec!.activeDeadlineSeconds], [3, 1800]);
    const c = created.spec!.template.spec!.containers[0]!;
    assert.deepEqual([c.resources!.requests, c.resources!.limits], [{ cpu: '100m', memory: '256Mi' }, { memory: '1Gi' }]);
    assert.equal(envOf(c as never).SVC_ADMIN_TOKEN, undefined);
    assert.equal(envOf(c as never).DATABASE_URL, 'secret:db/DATABASE_URL');
    assert.equal(created.spec!.template.spec!.automountServiceAccountToken, false);
    await finishJob(ns, 'rel-svc-system-update-op-1', 'Complete');
    await pollUntil('the result on the Job', () => job('rel-svc-system-update-op-1'), (j) => j?.metadata?.annotations?.[RESULT_ANNOTATION] === 'Succeeded');
    assert.ok((await eventReasons(ns, 'rel-svc')).includes('SystemUpdateSucceeded'));
  });

  test('helm upgrade runs no hook; the new revision of the server gets its own Job, with the new image', async () => {
    await helm('upgrade', 'rel', CHART, '--namespace', ns, ...values(), '--set', 'image.tag=0.2.0', '--timeout', '60s');
    const s = JSON.parse(await helm('status', 'rel', '--namespace', ns, '-o', 'json')) as { version: number; info: { status: string } };
    assert.deepEqual([s.version, s.info.status], [2, 'deployed']);
    assert.deepEqual(await jobs(), ['rel-svc-system-update-op-1']);
    await rolledOut('2');
    const created = (await pollUntil('the Job of revision 2', () => job('rel-svc-system-update-op-2'), (j) => j !== undefined)) as V1Job;
    assert.equal(created.spec!.template.spec!.containers[0]!.image, 'ghcr.io/svc-dev/svc:0.2.0');
    assert.deepEqual(await jobs(), ['rel-svc-system-update-op-1', 'rel-svc-system-update-op-2']);
  });

  test('the chart RBAC lets the operator reconcile a StructuredProperty (status, finalizer, Events)', async () => {
    await createObject(ns, 'structuredproperties', { metadata: { name: 'owner' }, spec: { qualifiedName: `chart.owner.${ns.replace(/-/g, '_')}`, valueType: 'string', entityTypes: ['dataset'] } });
    const o = await waitProperty(ns, 'owner', 'Ready', readyNow);
    assert.ok(o.metadata.finalizers?.length);
    assert.ok((await eventReasons(ns, 'owner')).length > 0);
  });
});

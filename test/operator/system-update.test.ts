/**
 * System-update Jobs without Helm hooks, against the real kube-apiserver: one Job per revision of the
 * server Deployment, owned by it and running the server's image; its result reported on the Job and
 * as an Event; a failed Job reported and never created again. The harness has no controller-manager:
 * the test raises the Deployment's revision annotation and finishes Jobs through `/status` itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppsV1Api, BatchV1Api, type V1Deployment, type V1Job } from '@kubernetes/client-node';
import type { Operator } from '../../operator/src/operator.ts';
import { RESULT_ANNOTATION, SYSTEM_UPDATE_COMMAND } from '../../operator/src/controllers/systemUpdate.ts';
import { pollUntil } from '../support/poll.ts';
import { startTestServer, type TestServer } from '../support/testServer.ts';
import { createNamespace, eventReasons, finishJob, installCrds, kc, merge, startTestOperator } from '../support/operator.ts';

const apps = kc.makeApiClient(AppsV1Api);
const batch = kc.makeApiClient(BatchV1Api);
let server: TestServer;
let operator: Operator;
let ns: string;

function deployment(image: string): V1Deployment {
  return {
    metadata: { name: 'svc', annotations: { 'deployment.kubernetes.io/revision': '1' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'svc' } },
      template: {
        metadata: { labels: { app: 'svc' } },
        spec: {
          serviceAccountName: 'default',
          containers: [
            {
              name: 'svc',
              image,
              env: [{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'svc-db', key: 'DATABASE_URL' } } }],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
        },
      },
    },
  };
}

/** Sets a new revision the way the Deployment controller would, with a new image. */
async function rollOut(revision: string, image: string): Promise<void> {
  await apps.patchNamespacedDeployment(
    { name: 'svc', namespace: ns, body: { metadata: { annotations: { 'deployment.kubernetes.io/revision': revision } }, spec: { template: { spec: { containers: [{ name: 'svc', image }] } } } } },
    merge,
  );
}

const job = (name: string) => batch.readNamespacedJob({ name, namespace: ns }).catch(() => undefined);

const finish = (name: string, outcome: 'Complete' | 'Failed') => finishJob(ns, name, outcome);

before(async () => {
  await installCrds();
  server = await startTestServer();
  ns = await createNamespace('sysup');
  await apps.createNamespacedDeployment({ namespace: ns, body: deployment('registry.example/svc:1.0.0') });
  operator = await startTestOperator(server.url, ns, { SVC_OPERATOR_SERVER_DEPLOYMENT: 'svc', SVC_OPERATOR_RELEASE: 'rel' });
});

after(async () => {
  await operator?.stop();
  await server?.close();
});

describe('system update', () => {
  test('creates one Job for the revision, owned by the Deployment, with the server image and environment', async () => {
    const j = (await pollUntil('the Job of revision 1', () => job('rel-system-update-1'), (x) => x !== undefined)) as V1Job;
    const d = await apps.readNamespacedDeployment({ name: 'svc', namespace: ns });
    assert.deepEqual(
      j.metadata!.ownerReferences!.map((o) => [o.kind, o.name, o.uid]),
      [['Deployment', 'svc', d.metadata!.uid]],
    );
    const c = j.spec!.template.spec!.containers[0]!;
    assert.equal(c.image, 'registry.example/svc:1.0.0');
    assert.deepEqual(c.command, SYSTEM_UPDATE_COMMAND);
    assert.equal(c.env![0]!.valueFrom!.secretKeyRef!.name, 'svc-db');
    assert.deepEqual(c.volumeMounts?.map((v) => [v.name, v.mountPath]), [['data', '/data']]);
    assert.equal(j.spec!.template.spec!.restartPolicy, 'Never');
    assert.ok((await eventReasons(ns, 'svc')).includes('SystemUpdateStarted'));
  });

  test('reports a completed Job on it and as an Event, and a scale change runs nothing', async () => {
    await finish('rel-system-update-1', 'Complete');
    await pollUntil('the result on the Job', () => job('rel-system-update-1'), (x) => x?.metadata?.annotations?.[RESULT_ANNOTATION] === 'Succeeded');
    await pollUntil('the Event', () => eventReasons(ns, 'svc'), (r) => r.includes('SystemUpdateSucceeded'));
    await apps.patchNamespacedDeployment({ name: 'svc', namespace: ns, body: { spec: { replicas: 3 } } }, merge);
    await new Promise((r) => setTimeout(r, 1_500));
    const jobs = await batch.listNamespacedJob({ namespace: ns });
    assert.deepEqual(jobs.items.map((x) => x.metadata!.name), ['rel-system-update-1']);
  });

  test('a new revision gets its Job; a failed one is reported once and not created again', async () => {
    await rollOut('2', 'registry.example/svc:1.1.0');
    const j = (await pollUntil('the Job of revision 2', () => job('rel-system-update-2'), (x) => x !== undefined)) as V1Job;
    assert.equal(j.spec!.template.spec!.containers[0]!.image, 'registry.example/svc:1.1.0');
    await finish('rel-system-update-2', 'Failed');
    await pollUntil('the failure on the Job', () => job('rel-system-update-2'), (x) => x?.metadata?.annotations?.[RESULT_ANNOTATION] === 'Failed');
    await pollUntil('the Warning', () => eventReasons(ns, 'svc'), (r) => r.includes('SystemUpdateFailed'));
    // Restarting the operator does not bring a second Job for the same revision.
    await operator.stop();
    operator = await startTestOperator(server.url, ns, { SVC_OPERATOR_SERVER_DEPLOYMENT: 'svc', SVC_OPERATOR_RELEASE: 'rel' });
    await new Promise((r) => setTimeout(r, 1_500));
    const jobs = await batch.listNamespacedJob({ namespace: ns });
    assert.deepEqual(jobs.items.map((x) => x.metadata!.name).sort(), ['rel-system-update-1', 'rel-system-update-2']);
    assert.equal((await job('rel-system-update-2'))!.metadata!.uid, j.metadata!.uid, 'the failed Job is the same one');
  });
});

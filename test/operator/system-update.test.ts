/**
 * System-update Jobs without Helm hooks, against the real kube-apiserver: one Job per revision of the
 * server Deployment, owned by it and running the server's image, with the chart's limits and without the
 * admin token; its result reported on the Job and as an Event; a failed Job reported and never created
 * again; a Job of the same name that is not the operator's reported, not taken for its own; the
 * finished Jobs of earlier revisions deleted after ttlSecondsAfterFinished. The harness has no controller-manager:
 * the test raises the Deployment's revision annotation and finishes Jobs through `/status` itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppsV1Api, BatchV1Api, type V1Deployment, type V1Job } from '@kubernetes/client-node';
import type { Operator } from '../../operator/src/operator.ts';
import { JOB_SETTINGS_ANNOTATION, RESULT_ANNOTATION, SYSTEM_UPDATE_COMMAND } from '../../operator/src/controllers/systemUpdate.ts';
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
    metadata: {
      name: 'svc',
      annotations: {
        'deployment.kubernetes.io/revision': '1',
        // As the chart renders its systemUpdate values in operator mode.
        [JOB_SETTINGS_ANNOTATION]: JSON.stringify({ backoffLimit: 1, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: null, resources: { limits: { memory: '768Mi' } } }),
      },
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'svc' } },
      template: {
        metadata: { labels: { app: 'svc' } },
        spec: {
          serviceAccountName: 'default',
          automountServiceAccountToken: false,
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['catalog'] }] }] } } },
          containers: [
            {
              name: 'svc',
              image,
              env: [
                { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'svc-db', key: 'DATABASE_URL' } } },
                { name: 'SVC_ADMIN_TOKEN', valueFrom: { secretKeyRef: { name: 'svc-admin-token', key: 'token' } } },
              ],
              resources: { limits: { memory: '2Gi' } },
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
    const j = (await pollUntil('the Job of revision 1', () => job('rel-system-update-op-1'), (x) => x !== undefined)) as V1Job;
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

  test('the Job is the chart\'s hook Job: its limits and resources from the annotation, no admin token, the pod\'s token and affinity settings', async () => {
    const j = (await job('rel-system-update-op-1'))!;
    assert.deepEqual([j.spec!.backoffLimit, j.spec!.activeDeadlineSeconds, j.spec!.ttlSecondsAfterFinished], [1, 600, undefined]);
    const pod = j.spec!.template.spec!;
    const c = pod.containers[0]!;
    assert.deepEqual({ ...c.resources }, { limits: { memory: '768Mi' } }, 'systemUpdate.resources, not the server\'s');
    assert.deepEqual(c.env!.map((e) => e.name), ['DATABASE_URL'], 'system update does not get the admin token');
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(pod.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchExpressions![0]!.key, 'pool');
    assert.ok((await eventReasons(ns, 'svc')).includes('SystemUpdateStarted'));
  });

  test('reports a completed Job on it and as an Event, and a scale change runs nothing', async () => {
    await finish('rel-system-update-op-1', 'Complete');
    await pollUntil('the result on the Job', () => job('rel-system-update-op-1'), (x) => x?.metadata?.annotations?.[RESULT_ANNOTATION] === 'Succeeded');
    await pollUntil('the Event', () => eventReasons(ns, 'svc'), (r) => r.includes('SystemUpdateSucceeded'));
    await apps.patchNamespacedDeployment({ name: 'svc', namespace: ns, body: { spec: { replicas: 3 } } }, merge);
    await new Promise((r) => setTimeout(r, 1_500));
    const jobs = await batch.listNamespacedJob({ namespace: ns });
    assert.deepEqual(jobs.items.map((x) => x.metadata!.name), ['rel-system-update-op-1']);
  });

  test('a new revision gets its Job; a failed one is reported once and not created again', async () => {
    await rollOut('2', 'registry.example/svc:1.1.0');
    const j = (await pollUntil('the Job of revision 2', () => job('rel-system-update-op-2'), (x) => x !== undefined)) as V1Job;
    assert.equal(j.spec!.template.spec!.containers[0]!.image, 'registry.example/svc:1.1.0');
    await finish('rel-system-update-op-2', 'Failed');
    await pollUntil('the failure on the Job', () => job('rel-system-update-op-2'), (x) => x?.metadata?.annotations?.[RESULT_ANNOTATION] === 'Failed');
    await pollUntil('the Warning', () => eventReasons(ns, 'svc'), (r) => r.includes('SystemUpdateFailed'));
    // Restarting the operator does not bring a second Job for the same revision.
    await operator.stop();
    operator = await startTestOperator(server.url, ns, { SVC_OPERATOR_SERVER_DEPLOYMENT: 'svc', SVC_OPERATOR_RELEASE: 'rel' });
    await new Promise((r) => setTimeout(r, 1_500));
    const jobs = await batch.listNamespacedJob({ namespace: ns });
    assert.deepEqual(jobs.items.map((x) => x.metadata!.name).sort(), ['rel-system-update-op-1', 'rel-system-update-op-2']);
    assert.equal((await job('rel-system-update-op-2'))!.metadata!.uid, j.metadata!.uid, 'the failed Job is the same one');
  });

  test('a Job of the name that is not the operator\'s is reported as a Warning, not taken for its own; hook Jobs do not collide', async () => {
    const bare = (name: string): V1Job => ({
      metadata: { name },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'x', image: 'registry.example/other:1' }] } } },
    });
    // A hook Job of Helm revision 3, kept from hook mode, and someone's Job under the operator's name for revision 4.
    await batch.createNamespacedJob({ namespace: ns, body: bare('rel-system-update-3') });
    await rollOut('3', 'registry.example/svc:1.2.0');
    const three = (await pollUntil('the Job of revision 3', () => job('rel-system-update-op-3'), (x) => x !== undefined)) as V1Job;
    assert.equal(three.spec!.template.spec!.containers[0]!.image, 'registry.example/svc:1.2.0');
    await batch.createNamespacedJob({ namespace: ns, body: bare('rel-system-update-op-4') });
    await rollOut('4', 'registry.example/svc:1.3.0');
    await pollUntil('the Warning', () => eventReasons(ns, 'svc'), (r) => r.includes('SystemUpdateNameTaken'));
    assert.equal((await job('rel-system-update-op-4'))!.spec!.template.spec!.containers[0]!.image, 'registry.example/other:1', 'left as it was');
  });

  test('ttlSecondsAfterFinished deletes the finished Jobs of earlier revisions, never the current one', async () => {
    await finish('rel-system-update-op-3', 'Complete');
    await rollOut('5', 'registry.example/svc:1.4.0');
    await pollUntil('the Job of revision 5', () => job('rel-system-update-op-5'), (x) => x !== undefined);
    await finish('rel-system-update-op-5', 'Complete');
    await new Promise((r) => setTimeout(r, 1_100));
    const settings = JSON.stringify({ backoffLimit: 1, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 1 });
    await apps.patchNamespacedDeployment({ name: 'svc', namespace: ns, body: { metadata: { annotations: { [JOB_SETTINGS_ANNOTATION]: settings } } } }, merge);
    const names = async () => (await batch.listNamespacedJob({ namespace: ns })).items.map((x) => x.metadata!.name!).sort();
    // Revisions 1, 2 and 3 finished: deleted. 4 is not the operator's; 5 is the current revision's, its memory.
    // The operator deletes them one after the other: wait for the last, then look at what is left.
    await pollUntil('the expired Jobs deleted', names, (n) => !['rel-system-update-op-1', 'rel-system-update-op-2', 'rel-system-update-op-3'].some((x) => n.includes(x)));
    assert.deepEqual(await names(), ['rel-system-update-3', 'rel-system-update-op-4', 'rel-system-update-op-5']);
  });
});

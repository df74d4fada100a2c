/**
 * The Argo CD profile on a real cluster, applied as Argo CD applies it: `helm template` with
 * `values-argocd.yaml` and `systemUpdate.mode=operator`, then `kubectl apply` (no Helm release, no hook),
 * after the Secrets the profile names. The in-cluster operator creates the system-update Job of each
 * revision of the server Deployment, the Job controller runs it, and a new image tag is a new revision
 * with a Job of its own.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CHART, helm, kubectl } from '../support/chart.ts';
import { IMAGE, apps, call, core, createNamespace, dropNamespace, jobOf, serviceUrl, tagImage, testValues, waitJobComplete, waitPodsReady } from '../support/cluster.ts';
import { pollUntil } from '../support/poll.ts';

const FULL = 'rel-svc';
let ns: string;

/** What Argo CD renders and applies for the Application at this image tag. */
async function sync(tag: string): Promise<void> {
  const manifest = await helm(
    'template', 'rel', CHART, '--namespace', ns, '--include-crds',
    '-f', join(CHART, 'values-argocd.yaml'),
    ...testValues(ns),
    '--set', `image.tag=${tag}`,
    '--set', 'systemUpdate.mode=operator',
    '--set', 'postgresql.enabled=true',
    '--set', 'postgresql.existingSecret=svc-postgresql-password',
  );
  await kubectl(['apply', '--namespace', ns, '-f', '-'], manifest);
}

const revision = async () => (await apps.readNamespacedDeployment({ name: FULL, namespace: ns })).metadata!.annotations?.['deployment.kubernetes.io/revision'];

before(async () => {
  ns = await createNamespace('argo');
  await kubectl(['create', 'secret', 'generic', 'svc-admin-token', '-n', ns, '--from-literal=token=argo-admin-token-0123456789abcdef']);
  await kubectl(['create', 'secret', 'generic', 'svc-postgresql-password', '-n', ns, '--from-literal=password=argo-pg-password']);
});

after(async () => {
  if (ns) await dropNamespace(ns);
});

describe('the Argo CD profile in operator mode', () => {
  test('the operator creates the Job of the first revision, the Job controller runs it, the server answers', async () => {
    const started = Date.now();
    const since = () => `${Math.round((Date.now() - started) / 1000)} s`;
    await sync(IMAGE.tag);
    await pollUntil('revision 1 of the server Deployment', revision, (r) => r === '1', 60_000);
    await pollUntil('the Job of revision 1', () => jobOf(ns, `${FULL}-system-update-op-1`), (j) => j !== undefined, 120_000);
    const created = since();
    const job = await waitJobComplete(ns, `${FULL}-system-update-op-1`);
    const completed = since();
    assert.equal(job.spec!.template.spec!.containers[0]!.image, `${IMAGE.repository}:${IMAGE.tag}`);
    assert.deepEqual(job.metadata!.ownerReferences!.map((o) => `${o.kind}/${o.name}`), [`Deployment/${FULL}`]);
    const [server] = await waitPodsReady(ns, 'server', 1);
    await waitPodsReady(ns, 'operator', 1);
    process.stdout.write(`# first sync: Job created after ${created}, complete after ${completed}, server Ready after ${since()} (${server!.status!.containerStatuses![0]!.restartCount} restarts)\n`);
    const base = await serviceUrl(ns, FULL);
    assert.equal((await call(base, 'argo-admin-token-0123456789abcdef', '/openapi/v3/entity/dataset?count=1')).status, 200);
  });

  test('a sync with a new image tag is revision 2: the operator runs its Job with the new image', async () => {
    const tag = await tagImage(`${IMAGE.tag}-argo`);
    await sync(tag);
    await pollUntil('revision 2 of the server Deployment', revision, (r) => r === '2', 60_000);
    await pollUntil('the Job of revision 2', () => jobOf(ns, `${FULL}-system-update-op-2`), (j) => j !== undefined, 120_000);
    const job = await waitJobComplete(ns, `${FULL}-system-update-op-2`);
    assert.equal(job.spec!.template.spec!.containers[0]!.image, `${IMAGE.repository}:${tag}`);
    const [pod] = await waitPodsReady(ns, 'server', 1);
    assert.equal(pod!.spec!.containers[0]!.image, `${IMAGE.repository}:${tag}`);
    const jobs = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'job-name' })).items.map((p) => p.metadata!.labels!['job-name']).sort();
    assert.deepEqual([...new Set(jobs)], [`${FULL}-system-update-op-1`, `${FULL}-system-update-op-2`], 'one Job per revision, none for the unchanged sync');
  });
});

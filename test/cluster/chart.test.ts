/**
 * The chart on a real cluster, in hook mode with the bundled Postgres, one release through its life:
 * `helm install` (Postgres, server and operator pods Ready; the system-update Job run by the Job
 * controller; the server reached through its Service with the admin token, from the test and by the
 * `svc` CLI in a pod), custom resources reconciled by the in-cluster operator under the chart's RBAC,
 * `helm upgrade` to a new image tag (that revision's Job completes before the rollout; a client writing
 * through the Service during the rollout loses no acknowledged write), and `helm uninstall` (what
 * docs/helm.md says stays, stays). Two replicas and Postgres's pod replaced are replicas.test.ts's, on a
 * release of their own: each file stays well within the run's limit per file on a loaded machine.
 * Nothing is marked complete by the test: the cluster does it all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { CHART, helm, kubectl } from '../support/chart.ts';
import {
  IMAGE,
  apps,
  batch,
  call,
  core,
  createNamespace,
  describePods,
  dropNamespace,
  expectOk as ok,
  jobOf,
  objects,
  policy,
  podsOf,
  runClientPod,
  secretValue,
  serviceUrl,
  tagImage,
  testValues,
  waitJobComplete,
  waitPodsReady,
} from '../support/cluster.ts';
import { pollUntil } from '../support/poll.ts';
import { datasetUrn, propertyUrn } from '../support/structuredProperties.ts';

const REL = 'rel';
const FULL = 'rel-svc';
const enc = encodeURIComponent;
let ns: string;
let base: string;
let token: string;

const values = () => [...testValues(ns), '--set', 'postgresql.enabled=true'];
const deploymentImage = async () => (await apps.readNamespacedDeployment({ name: FULL, namespace: ns })).spec!.template.spec!.containers[0]!.image;

before(async () => {
  ns = await createNamespace('chart');
});

after(async () => {
  if (ns) await dropNamespace(ns);
});

describe('the chart in hook mode with the bundled Postgres', () => {
  test('helm install: Postgres, server and operator Ready, the system-update Job completed, the server answers through its Service', async () => {
    const started = Date.now();
    await helm('install', REL, CHART, '--namespace', ns, ...values(), '--wait', '--timeout', '300s').catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await describePods(ns)}`);
    });
    process.stdout.write(`# helm install --wait took ${Math.round((Date.now() - started) / 1000)} s\n`);
    await waitPodsReady(ns, 'postgresql', 1);
    await waitPodsReady(ns, 'server', 1);
    await waitPodsReady(ns, 'operator', 1);
    // The post-install hook: run by the Job controller on the node, not by the test.
    const job = await waitJobComplete(ns, `${FULL}-system-update-1`);
    assert.equal(job.status!.succeeded, 1);
    const [pod] = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app.kubernetes.io/component=system-update' })).items;
    assert.equal(pod!.status!.containerStatuses![0]!.state!.terminated!.exitCode, 0);
    // The Postgres volume is a real one, bound on the node.
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name: `data-${FULL}-postgresql-0`, namespace: ns });
    assert.equal(pvc.status!.phase, 'Bound');

    base = await serviceUrl(ns, FULL);
    token = await secretValue(ns, `${FULL}-admin-token`, 'token');
    assert.equal((await fetch(`${base}/ready`)).status, 200);
    assert.equal((await call(base, 'not-the-token', '/openapi/v3/entity/dataset?count=1')).status, 401);
    assert.equal((await call(base, token, '/openapi/v3/entity/dataset?count=1')).status, 200);

    // The svc CLI in a pod, reaching the server by its Service's DNS name (CoreDNS, kube-proxy).
    const qualifiedName = 'cluster.cli.owner';
    const script = `printf -- '- id: ${qualifiedName}\\n  type: string\\n  entity_types: [dataset]\\n' >/tmp/p.yaml && node bin/svc.mjs properties upsert -f /tmp/p.yaml && node bin/svc.mjs properties get --urn ${qualifiedName} --json`;
    const cli = await runClientPod(ns, 'cli', ['sh', '-c', script], [
      { name: 'SVC_GMS_URL', value: `http://${FULL}.${ns}.svc.cluster.local:8080` },
      { name: 'SVC_GMS_TOKEN', valueFrom: { secretKeyRef: { name: `${FULL}-admin-token`, key: 'token' } } },
      { name: 'HOME', value: '/tmp' },
    ]);
    assert.equal(cli.phase, 'Succeeded', cli.log);
    assert.match(cli.log, new RegExp(qualifiedName.replace(/\./g, '\\.')));
    const stored = await call(base, token, `/openapi/v3/entity/structuredProperty/${enc(propertyUrn(qualifiedName))}/propertyDefinition`);
    assert.equal(stored.status, 200, await stored.clone().text());
  });

  test('a StructuredProperty and a TruncationJob applied with kubectl are reconciled by the in-cluster operator, under the chart RBAC', async () => {
    const qualifiedName = 'cluster.owner';
    // Time series entries for the TruncationJob: 3 older than its cut-off, 2 newer.
    const profiled = datasetUrn('cluster.profiled');
    await ok(call(base, token, `/openapi/v3/entity/dataset/${enc(profiled)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 'create');
    const now = Date.now();
    for (const [k, age] of [100, 90, 60, 1, 0].entries()) {
      const value = { timestampMillis: now - age * 86_400_000 - k, rowCount: k };
      await ok(call(base, token, `/openapi/v3/entity/dataset/${enc(profiled)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 'profile');
    }
    await kubectl(['apply', '-n', ns, '-f', '-'], `
apiVersion: catalog.svc.dev/v1alpha1
kind: StructuredProperty
metadata: { name: owner }
spec: { qualifiedName: ${qualifiedName}, valueType: string, entityTypes: [dataset], displayName: Owner }
---
apiVersion: catalog.svc.dev/v1alpha1
kind: TruncationJob
metadata: { name: profiles }
spec: { entityType: dataset, aspect: datasetProfile, olderThan: 30d, dryRun: false }
`);
    type Obj = { metadata: { generation: number; finalizers?: string[] }; status?: { observedGeneration?: number; urn?: string; conditions?: { type: string; status: string; reason: string }[] } };
    const read = (plural: string, name: string) => objects.getNamespacedCustomObject({ group: 'catalog.svc.dev', version: 'v1alpha1', namespace: ns, plural, name }) as Promise<Obj>;
    const cond = (o: Obj, type: string) => o.status?.conditions?.find((c) => c.type === type);
    const property = await pollUntil('the StructuredProperty Ready', () => read('structuredproperties', 'owner'), (o) => cond(o, 'Ready')?.status === 'True' && o.status?.observedGeneration === o.metadata.generation, 60_000);
    assert.equal(property.status!.urn, propertyUrn(qualifiedName));
    assert.ok(property.metadata.finalizers?.length, 'the operator added its finalizer');
    const definition = (await ok(call(base, token, `/openapi/v3/entity/structuredProperty/${enc(propertyUrn(qualifiedName))}/propertyDefinition`), 'definition')) as { propertyDefinition: { value: { displayName: string } } };
    assert.equal(definition.propertyDefinition.value.displayName, 'Owner');
    const truncation = await pollUntil('the TruncationJob Complete', () => read('truncationjobs', 'profiles'), (o) => cond(o, 'Complete')?.status === 'True', 60_000);
    assert.equal(cond(truncation, 'Complete')!.reason, 'Completed', JSON.stringify(truncation.status));
    assert.equal((truncation.status as { counts?: { deleted?: number } }).counts?.deleted, 3, JSON.stringify(truncation.status));
    // It acted as the chart's ServiceAccount: the leader Lease is held by its pod.
    const [operatorPod] = await podsOf(ns, 'operator');
    assert.equal(operatorPod!.spec!.serviceAccountName, `${FULL}-operator`);
    const events = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=owner' }).catch(() => undefined);
    const eventsV1 = (await kubectl(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json'])).includes('"name": "owner"');
    assert.ok(eventsV1 || (events?.items.length ?? 0) > 0, 'the operator recorded Events on the StructuredProperty');
    // Deleting it goes through the operator's finalizer (deletionPolicy default: the definition is removed).
    await kubectl(['delete', '-n', ns, 'structuredproperty', 'owner', '--wait=true', '--timeout=60s']);
  });

  test('helm upgrade to a new image tag: that revision\'s Job completes before the rollout, and no acknowledged write is lost', async () => {
    const tag = await tagImage(`${IMAGE.tag}-next`);
    const oldImage = await deploymentImage();
    const prefix = `rollout${Date.now()}`;
    const acknowledged: string[] = [];
    let failed = 0;
    let stop = false;
    // One client writing through the Service (kube-proxy) the whole time, each write its own dataset.
    const writer = (async () => {
      for (let i = 0; !stop && i < 20_000; i++) {
        const urn = datasetUrn(`${prefix}.w${i}`);
        try {
          const res = await call(base, token, `/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties`, { method: 'POST', body: JSON.stringify({ value: { description: `w${i}` } }) });
          await res.text();
          if (res.status >= 200 && res.status < 300) acknowledged.push(urn);
          else failed++;
        } catch {
          failed++;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    })();
    try {
      await pollUntil('writes acknowledged before the upgrade', async () => acknowledged.length, (n) => n >= 10, 30_000);
      const upgrade = helm('upgrade', REL, CHART, '--namespace', ns, ...values(), '--set', `image.tag=${tag}`, '--wait', '--timeout', '300s');
      const job = (await pollUntil('the Job of revision 2', () => jobOf(ns, `${FULL}-system-update-2`), (j) => j !== undefined, 60_000)) as V1Job;
      assert.equal(job.spec!.template.spec!.containers[0]!.image, `${IMAGE.repository}:${tag}`, 'the Job runs the new image');
      assert.equal(await deploymentImage(), oldImage, 'pre-upgrade: the server is not changed before the Job completes');
      await upgrade.catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await describePods(ns)}`);
      });
      const completed = await waitJobComplete(ns, `${FULL}-system-update-2`);
      assert.equal(await deploymentImage(), `${IMAGE.repository}:${tag}`);
      const replicaSets = (await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: 'app.kubernetes.io/component=server' })).items;
      const next = replicaSets.find((rs) => rs.spec!.template!.spec!.containers[0]!.image === `${IMAGE.repository}:${tag}`)!;
      assert.ok(new Date(next.metadata!.creationTimestamp!).getTime() >= new Date(completed.status!.completionTime!).getTime(), 'the rollout began after the Job completed');
      const pods = await waitPodsReady(ns, 'server', 1);
      assert.equal(pods[0]!.spec!.containers[0]!.image, `${IMAGE.repository}:${tag}`);
      const before = acknowledged.length;
      await pollUntil('writes acknowledged by the new pod', async () => acknowledged.length, (n) => n >= before + 10, 30_000);
    } finally {
      stop = true;
      await writer;
    }
    process.stdout.write(`# rollout: ${acknowledged.length} writes acknowledged, ${failed} failed or refused\n`);
    const lost: string[] = [];
    for (const [i, urn] of acknowledged.entries()) {
      const res = await call(base, token, `/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties`);
      const body = await res.text();
      if (res.status !== 200 || !body.includes(`"description":"w${urn.match(/\.w(\d+),/)![1]}"`)) lost.push(`${i}: ${urn} → ${res.status} ${body.slice(0, 200)}`);
    }
    assert.deepEqual(lost, [], 'every acknowledged write is stored');
  });

  test('helm uninstall leaves what docs/helm.md says: the admin token and Postgres Secrets, the Postgres volume claim, the hook Jobs and the CRDs, and removes the rest', async () => {
    await helm('uninstall', REL, '--namespace', ns, '--wait', '--timeout', '120s');
    const names = async (list: Promise<{ items: { metadata?: { name?: string } }[] }>) => (await list).items.map((o) => o.metadata!.name!).sort();
    await pollUntil('the release pods gone', async () => (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app.kubernetes.io/instance=rel' })).items.filter((p) => p.status?.phase === 'Running').length, (n) => n === 0, 120_000);
    assert.deepEqual(await names(apps.listNamespacedDeployment({ namespace: ns })), []);
    assert.deepEqual(await names(apps.listNamespacedStatefulSet({ namespace: ns })), []);
    assert.deepEqual(await names(core.listNamespacedService({ namespace: ns })), []);
    assert.deepEqual((await names(core.listNamespacedServiceAccount({ namespace: ns }))).filter((n) => n !== 'default'), []);
    assert.deepEqual(await names(policy.listNamespacedPodDisruptionBudget({ namespace: ns })), []);
    const secrets = (await names(core.listNamespacedSecret({ namespace: ns }))).filter((n) => !n.startsWith('sh.helm.release'));
    assert.deepEqual(secrets, [`${FULL}-admin-token`, `${FULL}-postgresql`], 'the Secrets annotated helm.sh/resource-policy: keep');
    assert.deepEqual(await names(core.listNamespacedPersistentVolumeClaim({ namespace: ns })), [`data-${FULL}-postgresql-0`], "the StatefulSet's volume claim");
    const jobs = [`${FULL}-system-update-1`, `${FULL}-system-update-2`];
    assert.deepEqual(await names(batch.listNamespacedJob({ namespace: ns })), jobs, 'the hook Jobs, one per revision, for their logs');
    // docs/helm.md's clean slate, `kubectl delete secret,pvc,job -l app.kubernetes.io/instance=<release>`, finds them all.
    const labelled = (await kubectl(['get', 'secret,pvc,job', '-n', ns, '-l', `app.kubernetes.io/instance=${REL}`, '-o', 'name'])).trim().split('\n').sort();
    assert.deepEqual(labelled, [...jobs.map((j) => `job.batch/${j}`), `persistentvolumeclaim/data-${FULL}-postgresql-0`, ...secrets.map((n) => `secret/${n}`)].sort());
    const crds = JSON.parse(await kubectl(['get', 'crd', '-o', 'json'])) as { items: { metadata: { name: string } }[] };
    for (const crd of ['structuredproperties.catalog.svc.dev', 'truncationjobs.catalog.svc.dev']) assert.ok(crds.items.some((c) => c.metadata.name === crd), `${crd} kept`);
  });
});

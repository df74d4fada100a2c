/**
 * The chart against the harness's real kube-apiserver: the rendered objects of every profile pass
 * `kubectl apply --dry-run=server`; `helm install` and `helm upgrade` in hook mode run one
 * system-update Job per revision before the release's objects change (the harness runs no pods, so
 * the test finishes each Job through `/status`, as the Job controller would), keep the admin token,
 * and end `deployed`; a failed Job fails the upgrade and leaves the server as it was.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { AppsV1Api, type V1Job } from '@kubernetes/client-node';
import { CHART, helm, helmAsync, kubectl, parseManifests } from '../support/chart.ts';
import { batch, core, createNamespace, finishJob, kc } from '../support/operator.ts';
import { pollUntil } from '../support/poll.ts';

const apps = kc.makeApiClient(AppsV1Api);
const DB = ['--set', 'database.existingSecret=db'];

const job = (ns: string, name: string) => batch.readNamespacedJob({ name, namespace: ns }).catch(() => undefined);
const serverImage = (ns: string) =>
  apps.readNamespacedDeployment({ name: 'rel-svc', namespace: ns }).then(
    (d) => d.spec!.template.spec!.containers[0]!.image,
    () => undefined,
  );
const token = async (ns: string) => (await core.readNamespacedSecret({ name: 'rel-svc-admin-token', namespace: ns })).data!.token;
const status = async (ns: string) => JSON.parse(await helm('status', 'rel', '--namespace', ns, '-o', 'json')) as { version: number; info: { status: string } };

async function databaseSecret(ns: string): Promise<void> {
  await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'db' }, stringData: { DATABASE_URL: 'postgres://svc@postgres:5432/svc' } } });
}

describe('kubectl apply --dry-run=server', () => {
  const profiles: [string, string[]][] = [
    ['default values', DB],
    ['operator mode', [...DB, '--set', 'systemUpdate.mode=operator']],
    ['the Argo CD profile', [...DB, '-f', join(CHART, 'values-argocd.yaml')]],
    ['the bundled Postgres', ['--set', 'postgresql.enabled=true']],
    ['the Argo CD profile with the bundled Postgres, its password in a Secret', ['-f', join(CHART, 'values-argocd.yaml'), '--set', 'postgresql.enabled=true', '--set', 'postgresql.existingSecret=pg']],
    ['OpenSearch, an Ingress, one watched namespace', [...DB, '--set', 'search.backend=opensearch', '--set', 'search.opensearch.url=http://opensearch:9200', '--set', 'server.ingress.enabled=true', '--set', 'operator.watchNamespace=NS']],
  ];
  for (const [name, args] of profiles) {
    test(`accepts every object of ${name}`, async () => {
      const ns = await createNamespace('chart-dry');
      const manifest = await helm('template', 'rel', CHART, '--namespace', ns, '--include-crds', ...args.map((a) => a.replace('=NS', `=${ns}`)));
      const docs = parseManifests(manifest);
      assert.equal(docs.filter((d) => d.kind === 'CustomResourceDefinition').length, 2);
      const out = await kubectl(['apply', '--dry-run=server', '--namespace', ns, '-f', '-'], manifest);
      const accepted = out.trim().split('\n');
      assert.equal(accepted.length, docs.length, out);
      for (const line of accepted) assert.match(line, /(created|configured|unchanged) \(server dry run\)$/);
    });
  }
});

test('the notes say how to reach the server: the Ingress host, the Ingress without one, or a port-forward', async () => {
  const ns = await createNamespace('chart-notes');
  const notes = async (args: string[]) => {
    const out = await helm('install', 'rel', CHART, '--namespace', ns, '--dry-run=server', ...DB, ...args);
    return out.slice(out.indexOf('NOTES:'));
  };
  assert.match(await notes(['--set', 'server.ingress.enabled=true', '--set', 'server.ingress.host=catalog.example.com']), /Reach the server:\n {2}http:\/\/catalog\.example\.com\/\n/);
  const noHost = await notes(['--set', 'server.ingress.enabled=true']);
  assert.ok(!noHost.includes('http:///'), noHost);
  assert.match(noHost, new RegExp(`kubectl -n ${ns} get ingress rel-svc\n {2}then http://<that address>/\n`));
  assert.match(await notes([]), new RegExp(`kubectl -n ${ns} port-forward svc/rel-svc 8080:`));
});

describe('helm install and upgrade (hook mode)', () => {
  let ns: string;
  before(async () => {
    ns = await createNamespace('chart-hook');
    await databaseSecret(ns);
  });

  test('install runs the revision-1 Job before creating the server, and ends deployed', async () => {
    const install = helmAsync(['install', 'rel', CHART, '--namespace', ns, ...DB, '--timeout', '120s']);
    await pollUntil('the Job of revision 1', () => job(ns, 'rel-svc-system-update-1'), (j) => j !== undefined);
    assert.equal(await serverImage(ns), undefined, 'a pre-install hook runs before the server Deployment exists');
    await finishJob(ns, 'rel-svc-system-update-1', 'Complete');
    const { code, output } = await install;
    assert.equal(code, 0, output);
    const s = await status(ns);
    assert.deepEqual([s.version, s.info.status], [1, 'deployed']);
    assert.equal(await serverImage(ns), 'ghcr.io/svc-dev/svc:0.1.0');
  });

  test('upgrade runs one Job for revision 2 before rolling the server, and keeps the admin token', async () => {
    const before = await token(ns);
    const upgrade = helmAsync(['upgrade', 'rel', CHART, '--namespace', ns, ...DB, '--set', 'image.tag=0.2.0', '--timeout', '120s']);
    await pollUntil('the Job of revision 2', () => job(ns, 'rel-svc-system-update-2'), (j) => j !== undefined);
    assert.equal(await serverImage(ns), 'ghcr.io/svc-dev/svc:0.1.0', 'pre-upgrade: the server is not changed before the Job completes');
    assert.equal((await job(ns, 'rel-svc-system-update-2'))!.spec!.template.spec!.containers[0]!.image, 'ghcr.io/svc-dev/svc:0.2.0', 'the Job runs the new image');
    await finishJob(ns, 'rel-svc-system-update-2', 'Complete');
    const { code, output } = await upgrade;
    assert.equal(code, 0, output);
    const s = await status(ns);
    assert.deepEqual([s.version, s.info.status], [2, 'deployed']);
    assert.equal(await serverImage(ns), 'ghcr.io/svc-dev/svc:0.2.0');
    assert.equal(await token(ns), before, 'the generated admin token is kept across the upgrade');
    const jobs = await batch.listNamespacedJob({ namespace: ns, labelSelector: 'app.kubernetes.io/component=system-update' });
    assert.deepEqual(
      jobs.items.map((j: V1Job) => [j.metadata!.name, j.metadata!.labels!['catalog.svc.dev/revision'], j.status?.conditions?.find((c) => c.type === 'Complete')?.status]).sort(),
      [
        ['rel-svc-system-update-1', '1', 'True'],
        ['rel-svc-system-update-2', '2', 'True'],
      ],
      'one Job per revision, each kept after it finished',
    );
  });

  test('a failed Job fails the upgrade and leaves the server as it was; the next upgrade succeeds', async () => {
    const failing = helmAsync(['upgrade', 'rel', CHART, '--namespace', ns, ...DB, '--set', 'image.tag=0.3.0', '--timeout', '120s']);
    await pollUntil('the Job of revision 3', () => job(ns, 'rel-svc-system-update-3'), (j) => j !== undefined);
    await finishJob(ns, 'rel-svc-system-update-3', 'Failed');
    const failed = await failing;
    assert.notEqual(failed.code, 0);
    assert.match(failed.output, /pre-upgrade hooks failed.*rel-svc-system-update-3/s);
    const s = await status(ns);
    assert.deepEqual([s.version, s.info.status], [3, 'failed']);
    assert.equal(await serverImage(ns), 'ghcr.io/svc-dev/svc:0.2.0');
    const retry = helmAsync(['upgrade', 'rel', CHART, '--namespace', ns, ...DB, '--set', 'image.tag=0.3.0', '--timeout', '120s']);
    await pollUntil('the Job of revision 4', () => job(ns, 'rel-svc-system-update-4'), (j) => j !== undefined);
    await finishJob(ns, 'rel-svc-system-update-4', 'Complete');
    const { code, output } = await retry;
    assert.equal(code, 0, output);
    assert.equal(await serverImage(ns), 'ghcr.io/svc-dev/svc:0.3.0');
    assert.equal((await status(ns)).info.status, 'deployed');
  });
});

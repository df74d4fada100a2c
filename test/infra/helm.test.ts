/**
 * Smoke test of the helm binary the suite uses (`HELM_BIN`): the pinned version, rendering for the
 * Kubernetes version the tests run (not helm's built-in default of 1.20), values and helpers.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const helm = process.env.HELM_BIN;
if (!helm) throw new Error('HELM_BIN is not set: use test/harness/helm.ts');

const here = dirname(fileURLToPath(import.meta.url));
const chart = join(here, 'fixtures', 'smoke-chart');
const pinned = Object.fromEntries(
  readFileSync(join(here, 'versions.env'), 'utf8')
    .split('\n')
    .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1], m[2]]),
) as Record<string, string>;

const run = promisify(execFile);

async function helmRun(...args: string[]): Promise<string> {
  const { stdout } = await run(helm!, args, { env: process.env });
  return stdout;
}

type Manifest = {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
} & Record<string, any>;

async function render(...args: string[]): Promise<Manifest[]> {
  const out = await helmRun('template', 'smoke', chart, '--namespace', 'catalog', ...args);
  return parseAllDocuments(out)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
}

describe('helm', () => {
  it('is the pinned version', async () => {
    assert.equal(await helmRun('version', '--template', '{{.Version}}'), `v${pinned.HELM_VERSION}`);
  });

  it('renders a chart for the Kubernetes minor the tests run', async () => {
    const docs = await render();
    assert.deepEqual(
      docs.map((d) => `${d.kind}/${d.metadata.name}`),
      ['ConfigMap/smoke-settings', 'Deployment/smoke-server'],
    );
    const [configMap, deployment] = docs as [Manifest, Manifest];
    const minor = pinned.KUBE_VERSION!.split('.').slice(0, 2).join('.');
    assert.equal(configMap.data.kubeVersion, `v${minor}.0`);
    assert.equal(configMap.data.batchApi, 'batch/v1');
    assert.deepEqual(configMap.data.SEARCH_BACKEND, 'postgres');
    assert.equal(configMap.metadata.namespace, 'catalog');
    assert.deepEqual(configMap.metadata.labels, {
      'app.kubernetes.io/name': 'smoke-chart',
      'app.kubernetes.io/instance': 'smoke',
      'app.kubernetes.io/version': '1.2.3',
    });
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(deployment.spec.template.spec.containers[0].image, 'example.org/svc:1.2.3');
    assert.match(deployment.spec.template.metadata.annotations['checksum/settings'], /^[0-9a-f]{64}$/);
  });

  it('applies values given on the command line', async () => {
    const [configMap, deployment] = (await render(
      '--set',
      'replicas=3',
      '--set',
      'image.tag=9.9.9',
      '--set',
      'settings.SEARCH_BACKEND=opensearch',
    )) as [Manifest, Manifest];
    assert.equal(deployment.spec.replicas, 3);
    assert.equal(deployment.spec.template.spec.containers[0].image, 'example.org/svc:9.9.9');
    assert.equal(configMap.data.SEARCH_BACKEND, 'opensearch');
    const [, before] = (await render()) as [Manifest, Manifest];
    assert.notEqual(
      deployment.spec.template.metadata.annotations['checksum/settings'],
      before.spec.template.metadata.annotations['checksum/settings'],
      'a settings change must change the checksum annotation',
    );
  });

  it('enforces the chart kubeVersion constraint', async () => {
    await assert.rejects(render('--kube-version', '1.31.0'), /incompatible with Kubernetes v1\.31\.0/);
  });

  it('lints the chart', async () => {
    const out = await helmRun('lint', chart);
    assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });
});

/**
 * Smoke test of the real kube-apiserver the suite runs against (`KUBECONFIG`): what the operator
 * relies on — CRDs become Established, custom objects round-trip, spec changes bump the generation,
 * and `/status` is a subresource of its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiException, PatchStrategy, VersionApi, loadYaml, setHeaderOptions, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { kubeClients } from '../support/kubeClients.ts';

const { kc, extensions, objects } = kubeClients();

const group = 'smoke.svc.dev';
const version = 'v1';
const plural = 'gadgets';
const namespace = 'default';
const ref = { group, version, namespace, plural };

// Loaded through loadYaml on purpose: the typed client serializes model objects by their TypeScript
// field names (`_default`, `xKubernetesValidations`), so a plain object with `default:` would lose it.
const crd = loadYaml<V1CustomResourceDefinition>(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: ${plural}, singular: gadget, kind: Gadget, listKind: GadgetList }
  versions:
    - name: ${version}
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: { type: integer, minimum: 1 }
                colour: { type: string, default: grey }
            status:
              type: object
              properties:
                observedGeneration: { type: integer }
                phase: { type: string }
`);

type Gadget = {
  metadata: { name: string; generation?: number; resourceVersion?: string; labels?: Record<string, string> };
  spec: { size: number; colour?: string };
  status?: { observedGeneration?: number; phase?: string };
};

const asGadget = (o: unknown) => o as Gadget;

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (err) {
    if (err instanceof ApiException) return err.code;
    throw err;
  }
}

describe('kube-apiserver', () => {
  before(async () => {
    await extensions.createCustomResourceDefinition({ body: crd });
  });

  after(async () => {
    await extensions.deleteCustomResourceDefinition({ name: `${plural}.${group}` }).catch(() => undefined);
  });

  it('serves the pinned Kubernetes version', async () => {
    const info = await kc.makeApiClient(VersionApi).getCode();
    assert.equal(info.major, '1');
    assert.equal(info.minor, '32');
    assert.match(info.gitVersion, /^v1\.32\.\d+$/);
  });

  it('establishes a CRD', async () => {
    const deadline = Date.now() + 30_000;
    let conditions: { type: string; status: string }[] = [];
    while (Date.now() < deadline) {
      const current = await extensions.readCustomResourceDefinition({ name: `${plural}.${group}` });
      conditions = current.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(
      conditions.some((c) => c.type === 'Established' && c.status === 'True'),
      `not Established: ${JSON.stringify(conditions)}`,
    );
    assert.ok(conditions.some((c) => c.type === 'NamesAccepted' && c.status === 'True'));
    // Established can precede discovery by a moment; wait until the resource is actually served.
    const served = Date.now() + 30_000;
    while ((await statusOf(objects.listNamespacedCustomObject(ref))) !== 200 && Date.now() < served) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await statusOf(objects.listNamespacedCustomObject(ref)), 200);
  });

  it('round-trips a custom object with defaults, generations and a /status subresource', async () => {
    const created = asGadget(
      await objects.createNamespacedCustomObject({
        ...ref,
        body: {
          apiVersion: `${group}/${version}`,
          kind: 'Gadget',
          metadata: { name: 'one', labels: { tier: 'smoke' } },
          spec: { size: 3 },
          // Ignored: with a status subresource, the main resource does not write status.
          status: { phase: 'Bogus' },
        },
      }),
    );
    assert.equal(created.metadata.generation, 1);
    assert.deepEqual(created.spec, { size: 3, colour: 'grey' });
    assert.equal(created.status, undefined);

    // Custom resources reject strategic merge patch; a JSON merge patch works.
    const patched = asGadget(
      await objects.patchNamespacedCustomObject(
        { ...ref, name: 'one', body: { spec: { size: 5 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    assert.equal(patched.metadata.generation, 2);
    assert.equal(patched.spec.size, 5);

    const withStatus = asGadget(
      await objects.patchNamespacedCustomObjectStatus(
        { ...ref, name: 'one', body: { status: { observedGeneration: 2, phase: 'Ready' }, spec: { size: 99 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    assert.deepEqual(withStatus.status, { observedGeneration: 2, phase: 'Ready' });
    assert.equal(withStatus.spec.size, 5, 'the /status endpoint must not change spec');
    assert.equal(withStatus.metadata.generation, 2, 'a status write must not bump the generation');

    // Server-side apply by a second field manager.
    const applied = asGadget(
      await objects.patchNamespacedCustomObject(
        {
          ...ref,
          name: 'one',
          fieldManager: 'svc-smoke',
          force: true,
          body: { apiVersion: `${group}/${version}`, kind: 'Gadget', metadata: { name: 'one' }, spec: { size: 7 } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
    );
    assert.equal(applied.spec.size, 7);
    assert.equal(applied.metadata.generation, 3);

    const listed = (await objects.listNamespacedCustomObject({ ...ref, labelSelector: 'tier=smoke' })) as {
      items: Gadget[];
    };
    assert.deepEqual(
      listed.items.map((g) => [g.metadata.name, g.spec.size, g.status?.phase]),
      [['one', 7, 'Ready']],
    );

    const invalid = await statusOf(
      objects.createNamespacedCustomObject({
        ...ref,
        body: { apiVersion: `${group}/${version}`, kind: 'Gadget', metadata: { name: 'bad' }, spec: { size: 0 } },
      }),
    );
    assert.equal(invalid, 422);

    await objects.deleteNamespacedCustomObject({ ...ref, name: 'one' });
    assert.equal(await statusOf(objects.getNamespacedCustomObject({ ...ref, name: 'one' })), 404);
  });
});

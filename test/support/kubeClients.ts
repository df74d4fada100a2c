/** Clients of the real kube-apiserver the infra suite runs against (`KUBECONFIG`, set by test/harness/kube.ts). */
import { ApiException, ApiextensionsV1Api, CustomObjectsApi, KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';

export interface KubeClients {
  kc: KubeConfig;
  /** CustomResourceDefinitions. */
  extensions: ApiextensionsV1Api;
  /** Custom objects of any group. */
  objects: CustomObjectsApi;
}

/** Loads `KUBECONFIG` and makes the clients; throws when it is not set. */
export function kubeClients(): KubeClients {
  const kubeconfig = process.env.KUBECONFIG;
  if (!kubeconfig) throw new Error('KUBECONFIG is not set: start the API server with test/harness/kube.ts');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { kc, extensions: kc.makeApiClient(ApiextensionsV1Api), objects: kc.makeApiClient(CustomObjectsApi) };
}

/** Creates a CRD, or replaces it when a previous test run (or another test file) left one. */
export async function applyCrd(extensions: ApiextensionsV1Api, crd: V1CustomResourceDefinition): Promise<void> {
  try {
    await extensions.createCustomResourceDefinition({ body: crd });
  } catch (err) {
    if (!(err instanceof ApiException) || err.code !== 409) throw err;
    const current = await extensions.readCustomResourceDefinition({ name: crd.metadata!.name! });
    await extensions.replaceCustomResourceDefinition({ name: crd.metadata!.name!, body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata!.resourceVersion } } });
  }
}

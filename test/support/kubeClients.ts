/** Clients of the real kube-apiserver the infra suite runs against (`KUBECONFIG`, set by test/harness/kube.ts). */
import { ApiextensionsV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

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

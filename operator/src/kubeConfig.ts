/**
 * The operator's connection to the API server. client-node 1.4 builds a new `https.Agent` for every
 * API call (`KubeConfig.createAgent`), so each call opens a connection and makes a full TLS handshake
 * with the client certificate: measured with test/bench/operator.ts, most of the operator's CPU while
 * applying 1,000 objects. This copy of the configuration hands out one keep-alive agent per server
 * and credentials instead; new credentials (a rotated certificate) get a new agent.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Agent, type AgentOptions } from 'node:https';
import { KubeConfig, type Cluster } from '@kubernetes/client-node';
import { ConfigError } from './config.ts';

/**
 * `KUBECONFIG`, then ~/.kube/config, then the in-cluster service account. client-node falls back to
 * http://localhost:8080 when it finds none, which then fails every call with a TLS message: a
 * configuration error naming the three places is clearer.
 */
export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  if (!env.KUBECONFIG && !existsSync(join(homedir(), '.kube', 'config')) && !env.KUBERNETES_SERVICE_HOST) {
    throw new ConfigError('no Kubernetes configuration: set KUBECONFIG, write ~/.kube/config, or run in a cluster (service account)');
  }
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

type CreateAgent = (cluster: Cluster | null, options: AgentOptions) => unknown;

/** `kc`'s clusters, users and current context, with connections kept alive between API calls; `close()` ends them. */
export function keepAliveKubeConfig(kc: KubeConfig): { kc: KubeConfig; close(): void } {
  const own = new KubeConfig();
  own.loadFromOptions({ clusters: kc.clusters, users: kc.users, contexts: kc.contexts, currentContext: kc.getCurrentContext() });
  // createAgent is private in the typings: replaced on this instance only.
  const target = own as unknown as { createAgent: CreateAgent };
  const original = target.createAgent.bind(own);
  const agents = new Map<string, Agent>();
  target.createAgent = (cluster, options) => {
    if (!cluster?.server.startsWith('https:') || cluster.proxyUrl) return original(cluster, options);
    const key = createHash('sha256')
      .update(JSON.stringify([cluster.server, options.servername, options.rejectUnauthorized]))
      .update(String(options.ca ?? ''))
      .update(String(options.cert ?? ''))
      .update(String(options.key ?? ''))
      .digest('hex');
    let agent = agents.get(key);
    if (!agent) {
      agent = new Agent({ ...options, keepAlive: true, maxSockets: 32 });
      agents.set(key, agent);
    }
    return agent;
  };
  return {
    kc: own,
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

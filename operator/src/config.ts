/**
 * The operator's configuration: read from the environment once, validated, and documented here
 * (docs/operator.md mirrors this list). The server address and token use the CLI's names.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ConfigError, bool, int } from '../../server/src/config.ts';

export { ConfigError };

export interface OperatorConfig {
  /** `SVC_GMS_URL`: the catalog server's base URL (required), e.g. http://svc:8080. */
  server: string;
  /** `SVC_GMS_TOKEN`: a token of the server with the admin role (in a cluster, from a Secret). */
  token: string | undefined;
  /** `SVC_OPERATOR_NAMESPACE`: the namespace whose objects are reconciled; unset = all namespaces. */
  namespace: string | undefined;
  /** `SVC_OPERATOR_POD_NAMESPACE`: where the Lease and the server Deployment live (default: the pod's own namespace, else `default`). */
  podNamespace: string;
  /** `SVC_OPERATOR_PORT`: port of `/healthz`, `/readyz` and `/metrics` (default 8081; 0 picks a free one). */
  port: number;
  /** `SVC_OPERATOR_WORKERS`: reconciles running at once per controller (default 4). */
  workers: number;
  /** `SVC_OPERATOR_RESYNC_SECONDS`: how often a synced object is checked against the server for drift, and the watch relisted (default 300). */
  resyncSeconds: number;
  /** `SVC_OPERATOR_POLL_SECONDS`: how often a running truncation task is polled (default 5). */
  pollSeconds: number;
  /** `SVC_OPERATOR_LEADER_ELECTION`: take a Lease before acting, so that one of several replicas acts (default true). */
  leaderElection: boolean;
  /** `SVC_OPERATOR_LEASE_NAME`: name of that Lease (default `svc-operator`). */
  leaseName: string;
  /** `SVC_OPERATOR_LEASE_DURATION` / `_RENEW_DEADLINE` / `_RETRY_PERIOD`: seconds, controller-runtime's 15 / 10 / 2 by default. */
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  /** `POD_NAME` (from the downward API) or the host name, plus a random suffix: this replica's identity in the Lease. */
  identity: string;
  /** `SVC_OPERATOR_SERVER_DEPLOYMENT`: name of the server Deployment whose new revisions get a system-update Job; unset = none. */
  serverDeployment: string | undefined;
  /** `SVC_OPERATOR_RELEASE`: prefix of the Job names, `<release>-system-update-op-<revision>` (default: the Deployment's name). */
  release: string | undefined;
  /** `SVC_LOG_LEVEL`: pino log level (default `info`). */
  logLevel: string;
}

const SA_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

function seconds(name: string, raw: string | undefined, dflt: number): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 86_400) throw new ConfigError(`${name} must be a number of seconds between 0 and 86400, got "${raw}"`);
  return n;
}

function podNamespace(env: NodeJS.ProcessEnv): string {
  if (env.SVC_OPERATOR_POD_NAMESPACE) return env.SVC_OPERATOR_POD_NAMESPACE;
  try {
    return readFileSync(SA_NAMESPACE, 'utf8').trim() || 'default';
  } catch {
    return 'default';
  }
}

/** Reads and validates the configuration; throws {@link ConfigError} naming the bad setting. */
export function loadOperatorConfig(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const server = env.SVC_GMS_URL;
  if (!server) throw new ConfigError('SVC_GMS_URL must be set to the catalog server, e.g. http://svc:8080');
  if (!/^https?:\/\/[^/]/.test(server)) throw new ConfigError(`SVC_GMS_URL must be an http(s) URL, got "${server}"`);
  const leaseDurationSeconds = seconds('SVC_OPERATOR_LEASE_DURATION', env.SVC_OPERATOR_LEASE_DURATION, 15);
  const renewDeadlineSeconds = seconds('SVC_OPERATOR_RENEW_DEADLINE', env.SVC_OPERATOR_RENEW_DEADLINE, 10);
  const retryPeriodSeconds = seconds('SVC_OPERATOR_RETRY_PERIOD', env.SVC_OPERATOR_RETRY_PERIOD, 2);
  // client-go's rule: a replica must give up before another can see the lease expire.
  if (!(renewDeadlineSeconds < leaseDurationSeconds)) throw new ConfigError('SVC_OPERATOR_RENEW_DEADLINE must be shorter than SVC_OPERATOR_LEASE_DURATION');
  if (!(renewDeadlineSeconds > 1.2 * retryPeriodSeconds)) throw new ConfigError('SVC_OPERATOR_RENEW_DEADLINE must be more than 1.2 times SVC_OPERATOR_RETRY_PERIOD');
  return {
    server: server.replace(/\/+$/, ''),
    token: env.SVC_GMS_TOKEN || undefined,
    namespace: env.SVC_OPERATOR_NAMESPACE || undefined,
    podNamespace: podNamespace(env),
    port: int('SVC_OPERATOR_PORT', env.SVC_OPERATOR_PORT, 8081, 0, 65535),
    workers: int('SVC_OPERATOR_WORKERS', env.SVC_OPERATOR_WORKERS, 4, 1, 64),
    resyncSeconds: seconds('SVC_OPERATOR_RESYNC_SECONDS', env.SVC_OPERATOR_RESYNC_SECONDS, 300),
    pollSeconds: seconds('SVC_OPERATOR_POLL_SECONDS', env.SVC_OPERATOR_POLL_SECONDS, 5),
    leaderElection: bool('SVC_OPERATOR_LEADER_ELECTION', env.SVC_OPERATOR_LEADER_ELECTION, true),
    leaseName: env.SVC_OPERATOR_LEASE_NAME || 'svc-operator',
    leaseDurationSeconds,
    renewDeadlineSeconds,
    retryPeriodSeconds,
    identity: `${env.POD_NAME || hostname()}_${randomBytes(4).toString('hex')}`,
    serverDeployment: env.SVC_OPERATOR_SERVER_DEPLOYMENT || undefined,
    release: env.SVC_OPERATOR_RELEASE || undefined,
    logLevel: env.SVC_LOG_LEVEL || 'info',
  };
}

/**
 * Configuration: read from the environment once, validated, and documented here
 * (docs/reference/configuration.md mirrors this list).
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';

export interface Config {
  /** `PORT`: HTTP port (default 8080). */
  port: number;
  /** `SVC_DATA_DIR`: embedded Postgres data and generated secrets (default `./data`). */
  dataDir: string;
  /** `DATABASE_URL`: Postgres connection; unset means the embedded Postgres under `dataDir`. */
  databaseUrl: string | undefined;
  /** `SEARCH_BACKEND`: `postgres` (default) or `opensearch`. */
  searchBackend: 'postgres' | 'opensearch';
  /** `OPENSEARCH_URL`: OpenSearch endpoint, required when `searchBackend` is `opensearch`. */
  opensearchUrl: string | undefined;
  /** `INDEX_PREFIX`: prefix of the OpenSearch index names (`<prefix>_datasetindex_v2`), as DataHub's; default none. */
  indexPrefix: string;
  /** `ELASTICSEARCH_INDEX_BUILDER_NUM_SHARDS` / `…_NUM_REPLICAS`: shards and replicas of a new index (DataHub's names; default 1 and 1). */
  indexShards: number;
  indexReplicas: number;
  /**
   * `SVC_SEARCH_LINGER_MS`: while writes keep coming, how long the search dispatcher waits after a small
   * step before the next, to deliver the changes of that time together (default 100; 0: each at once).
   */
  searchLingerMs: number;
  /**
   * `SVC_WRITE_STRATEGY` and `SVC_WRITE_STATE_SOURCES`: how a write of an aspect with rules (e.g.
   * structured-property values) gets the state its rules check it against. `locked`: read under the
   * entity's lock, in the write's transaction. `checked` (the default): read without locks and written by
   * one statement that checks what was read still holds (prepared again when not); then the state may
   * also come from `grouped` reads (the reads of concurrent writes in one statement), `kept` (what the
   * entity's last write left), or a `guess` (what a first write most likely finds): a comma-separated
   * list, default `grouped,kept,guess`; `read` for none of them. Every choice gives the same answers;
   * each source stays while it earns at least 10% (docs/decisions/0033-write-state-sources.md).
   */
  writeStrategy: WriteStrategy;
  /** `SVC_AUTH_ENABLED`: require `Authorization: Bearer` on every API route (default true). */
  authEnabled: boolean;
  /** `SVC_ADMIN_TOKEN`: the root token; unset means generated on first start and saved under `dataDir`. */
  adminToken: string | undefined;
  /** `SVC_DB_POOL_SIZE`: maximum Postgres connections of the server (default 20). */
  dbPoolSize: number;
  /** `SVC_LOG_LEVEL`: pino log level (default `info`). */
  logLevel: string;
  /** `SVC_MAX_BODY_BYTES`: largest accepted request body (default 5 MB). */
  maxBodyBytes: number;
  /** `SVC_REQUEST_TIMEOUT_MS`: time a client has to send a whole request, headers and body (default 30 s). */
  requestTimeoutMs: number;
  /**
   * `SVC_KEEP_ALIVE_TIMEOUT_MS`: how long an idle keep-alive connection stays open (default 75 s, as
   * nginx's `keepalive_timeout`): longer than a load balancer's idle timeout (60 s for AWS's ALB and
   * most proxies), so that the balancer, not svc, closes an idle connection; one svc closed while the
   * balancer still held it turns into a 502 or a client's reset. Behind a balancer that keeps idle
   * connections longer (Google's: 600 s), set it above that balancer's.
   */
  keepAliveTimeoutMs: number;
  /** `SVC_SHUTDOWN_GRACE_MS`: on SIGTERM, time in-flight requests have before their connections are closed (default 20 s). */
  shutdownGraceMs: number;
  /** `SVC_WORKERS`: HTTP worker processes sharing the port (default 1; `auto` = one per CPU). */
  workers: number;
}

export class ConfigError extends Error {}

/** A boolean setting: true/1/yes or false/0/no; unset or empty is the default. */
export function bool(name: string, raw: string | undefined, dflt: boolean): boolean {
  if (raw === undefined || raw === '') return dflt;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** An integer setting within [min, max]; unset or empty is the default. */
export function int(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function indexPrefix(raw: string | undefined): string {
  const p = raw ?? '';
  // OpenSearch index names: lowercase, no spaces or any of \/*?"<>|,# and not starting with _ - +.
  if (p !== '' && !/^[a-z0-9][a-z0-9_.-]*$/.test(p)) throw new ConfigError(`INDEX_PREFIX must be lowercase letters, digits, _ . -, starting with a letter or digit, got "${p}"`);
  return p;
}

/** How writes of aspects with rules get the state they are checked against (see {@link Config.writeStrategy}). */
export interface WriteStrategy {
  /** Read without locks and checked by the write statement (else read under the entity's lock). */
  checked: boolean;
  grouped: boolean;
  kept: boolean;
  guess: boolean;
}

const STATE_SOURCES = ['grouped', 'kept', 'guess'] as const;

function writeStrategy(strategy: string | undefined, sources: string | undefined): WriteStrategy {
  const s = strategy || 'checked';
  if (s !== 'checked' && s !== 'locked') throw new ConfigError(`SVC_WRITE_STRATEGY must be "checked" or "locked", got "${s}"`);
  const list = (sources ?? STATE_SOURCES.join(',')).split(',').map((x) => x.trim()).filter((x) => x !== '' && x !== 'read');
  const unknown = list.filter((x) => !(STATE_SOURCES as readonly string[]).includes(x));
  if (unknown.length) throw new ConfigError(`SVC_WRITE_STATE_SOURCES takes read, or any of ${STATE_SOURCES.join(', ')} separated by commas; got "${unknown.join(', ')}"`);
  const checked = s === 'checked';
  return { checked, grouped: checked && list.includes('grouped'), kept: checked && list.includes('kept'), guess: checked && list.includes('guess') };
}

/** Reads and validates the configuration from `env`; throws {@link ConfigError} naming the bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const searchBackend = env.SEARCH_BACKEND || 'postgres';
  if (searchBackend !== 'postgres' && searchBackend !== 'opensearch') {
    throw new ConfigError(`SEARCH_BACKEND must be "postgres" or "opensearch", got "${searchBackend}"`);
  }
  const opensearchUrl = env.OPENSEARCH_URL || undefined;
  if (searchBackend === 'opensearch' && !opensearchUrl) {
    throw new ConfigError('SEARCH_BACKEND=opensearch needs OPENSEARCH_URL');
  }
  return {
    port: int('PORT', env.PORT, 8080, 0, 65535),
    dataDir: resolve(env.SVC_DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    searchBackend,
    opensearchUrl,
    indexPrefix: indexPrefix(env.INDEX_PREFIX),
    indexShards: int('ELASTICSEARCH_INDEX_BUILDER_NUM_SHARDS', env.ELASTICSEARCH_INDEX_BUILDER_NUM_SHARDS, 1, 1, 1024),
    indexReplicas: int('ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS', env.ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS, 1, 0, 16),
    searchLingerMs: int('SVC_SEARCH_LINGER_MS', env.SVC_SEARCH_LINGER_MS, 100, 0, 10_000),
    writeStrategy: writeStrategy(env.SVC_WRITE_STRATEGY, env.SVC_WRITE_STATE_SOURCES),
    authEnabled: bool('SVC_AUTH_ENABLED', env.SVC_AUTH_ENABLED, true),
    adminToken: env.SVC_ADMIN_TOKEN || undefined,
    dbPoolSize: int('SVC_DB_POOL_SIZE', env.SVC_DB_POOL_SIZE, 20, 1, 1000),
    logLevel: env.SVC_LOG_LEVEL || 'info',
    maxBodyBytes: int('SVC_MAX_BODY_BYTES', env.SVC_MAX_BODY_BYTES, 5 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    requestTimeoutMs: int('SVC_REQUEST_TIMEOUT_MS', env.SVC_REQUEST_TIMEOUT_MS, 30_000, 100, 3_600_000),
    keepAliveTimeoutMs: int('SVC_KEEP_ALIVE_TIMEOUT_MS', env.SVC_KEEP_ALIVE_TIMEOUT_MS, 75_000, 1_000, 3_600_000),
    shutdownGraceMs: int('SVC_SHUTDOWN_GRACE_MS', env.SVC_SHUTDOWN_GRACE_MS, 20_000, 0, 3_600_000),
    workers: env.SVC_WORKERS === 'auto' ? availableParallelism() : int('SVC_WORKERS', env.SVC_WORKERS, 1, 1, 256),
  };
}

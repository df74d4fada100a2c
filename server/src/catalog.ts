/**
 * The catalog: the whole domain (database, entity store, registry, structured properties, tasks and
 * tokens) as one object with no HTTP in it. The REST app, the cluster workers, and the GraphQL
 * endpoint, CLI tests and benchmarks to come build on it; every method of its services takes the
 * caller's principal.
 *
 *   const catalog = await createCatalog(loadConfig(), log);
 *   await catalog.entities.write(SYSTEM, [{ urn, aspect: 'status', value: { removed: false } }], 'upsert');
 *   await catalog.close();
 */
import type { Config } from './config.ts';
import { createPool, type Pool } from './db/pool.ts';
import { migrate, migrationsDone } from './db/migrate.ts';
import { openDatabase } from './db/embeddedPostgres.ts';
import { EntityService } from './entities/entityService.ts';
import { loadScrollSecret, ScrollIds } from './entities/scrollIds.ts';
import { SYSTEM } from './auth/authorize.ts';
import { rootToken, TokenService } from './auth/tokens.ts';
import { TaskRunner } from './tasks/taskRunner.ts';
import { TaskService } from './tasks/taskService.ts';
import { bootstrapAspects, structuredPropertyHooks } from './properties/propertyHooks.ts';
import { PropertyService } from './properties/propertyService.ts';
import { hardDeleteCleanup, staleValuesCleanup } from './properties/cleanup.ts';
import { shutdownStep, type Logger } from './shared/log.ts';
import type { SearchBackend } from './search/backend.ts';
import { SearchOutbox } from './search/outbox.ts';
import { PostgresBackend } from './search/postgresBackend.ts';
import { SearchDeliveryService } from './search/searchDeliveryService.ts';
import { SearchService } from './search/searchService.ts';
import { LineageService } from './lineage/lineage.ts';
import type { TaskHandler } from './tasks/taskRunner.ts';
import { TimeseriesService } from './timeseries/timeseriesService.ts';
import { TimelineService } from './timeline/timelineService.ts';
import { DefinitionCache } from './properties/definitionCache.ts';
import type { OpenSearchTimeseriesStore } from './timeseries/opensearchStore.ts';
import { PostgresTimeseriesStore } from './timeseries/postgresStore.ts';
import type { TimeseriesStore } from './timeseries/store.ts';
import { HARD_DELETE_TASK, INDEX_REBUILD_TASK, STALE_VALUES_TASK, TRUNCATE_TASK } from './contract/tasks.ts';

/** What the catalog needs of the configuration. */
export type CatalogConfig = Pick<
  Config,
  'databaseUrl' | 'dataDir' | 'dbPoolSize' | 'adminToken' | 'searchBackend' | 'opensearchUrl' | 'indexPrefix' | 'indexShards' | 'indexReplicas' | 'searchLingerMs' | 'writeStrategy'
>;

export interface Catalog {
  readonly entities: EntityService;
  /** Structured-property operations phrased as changes (create, append to a definition, upsert or remove values). */
  readonly properties: PropertyService;
  readonly tasks: TaskService;
  /** Operations on time series aspects: truncation, its task status, sizes. */
  readonly timeseries: TimeseriesService;
  /** What changed in an entity, computed from its aspects' versions (DataHub's timeline API). */
  readonly timeline: TimelineService;
  readonly tokens: TokenService;
  readonly search: SearchService;
  /** Upstream and downstream entities (GraphQL's scrollAcrossLineage). */
  readonly lineage: LineageService;
  /** The search outbox's dispatcher (see search/outbox.ts). */
  readonly searchOutbox: SearchOutbox;
  /** Search's lag and the entities failing delivery (`GET /api/search/delivery`). */
  readonly searchDelivery: SearchDeliveryService;
  /** The root token, and whether this start generated it (to be printed once). */
  readonly rootToken: { token: string; generated: boolean };
  /** Whether the database is embedded (started by the catalog) or external (`DATABASE_URL`). */
  readonly embeddedDatabase: boolean;
  /** The connection pool, for operational views (metrics). */
  readonly pool: Pool;
  /** Whether the database answers and every migration is applied; throws when the database does not answer. */
  ready(): Promise<boolean>;
  /** Whether the search backend answers (writes go on without it; search catches up when it is back). */
  searchReachable(): Promise<boolean>;
  /** Lets queued writes commit, stops the background tasks, closes the pool and stops an embedded Postgres. */
  close(): Promise<void>;
}

/**
 * `background: false` (system-update): no task runner and no outbox dispatcher loop in this process;
 * the outbox is delivered by calling `searchOutbox.deliverAll()`.
 */
export async function createCatalog(config: CatalogConfig, log: Logger, opts: { background?: boolean } = {}): Promise<Catalog> {
  const database = await openDatabase(config.databaseUrl, config.dataDir, log);
  const pool = createPool(database.url, config.dbPoolSize);
  let backend: SearchBackend | undefined;
  try {
    // Built without connecting: an unreachable OpenSearch does not stop the start (the outbox waits).
    const storage = await searchStorage(config, pool, log);
    backend = storage.backend;
    const { timeseries } = storage;
    const applied = await migrate(pool);
    if (applied.length) log.info({ applied }, 'migrations applied');
    const root = rootToken(config.adminToken, config.dataDir);
    const scrollIds = new ScrollIds(await loadScrollSecret(pool));
    const entities = new EntityService(pool, scrollIds, timeseries, config.writeStrategy);
    const searchOutbox = new SearchOutbox(pool, entities, backend, log, database.url, storage.shippedTimeseries, config.searchLingerMs);
    const runner = new TaskRunner(pool, log, { listenUrl: database.url });
    const definitions = new DefinitionCache(pool, database.url, log);
    entities.onCommitted((urns) => definitions.committed(urns));
    for (const hook of structuredPropertyHooks()) entities.addHook(hook);
    runner.register(HARD_DELETE_TASK, hardDeleteCleanup(pool, entities));
    runner.register(STALE_VALUES_TASK, staleValuesCleanup(pool, entities));
    runner.register(TRUNCATE_TASK, timeseries.taskHandler());
    if (storage.indexRebuild) runner.register(INDEX_REBUILD_TASK, storage.indexRebuild);
    const builtIn = bootstrapAspects();
    await entities.write(SYSTEM, builtIn, 'upsert');
    entities.protectBuiltIn(builtIn.map((a) => a.urn));
    definitions.start();
    if (opts.background !== false) {
      runner.start();
      searchOutbox.start();
    }
    let closing: Promise<void> | undefined;
    const search = new SearchService(backend, entities, scrollIds, definitions);
    return {
      entities,
      properties: new PropertyService(entities),
      tasks: new TaskService(pool),
      timeseries: new TimeseriesService(timeseries, scrollIds),
      timeline: new TimelineService(entities),
      tokens: new TokenService(pool, root.token),
      search,
      lineage: new LineageService(pool, entities, search),
      searchOutbox,
      searchDelivery: new SearchDeliveryService(pool),
      rootToken: root,
      embeddedDatabase: database.embedded,
      pool,
      ready: () => migrationsDone(pool),
      searchReachable: () => storage.backend.reachable(),
      close() {
        closing ??= (async () => {
          // Writes queued for the group commit are committed, also those whose clients went away.
          await shutdownStep(log, 'queued writes to commit', entities.drain());
          await shutdownStep(log, 'background tasks to stop', runner.stop());
          await shutdownStep(log, 'the search outbox to stop', searchOutbox.stop());
          await shutdownStep(log, 'the property listener to stop', definitions.stop());
          await shutdownStep(log, 'the search backend to close', storage.backend.close());
          await shutdownStep(log, 'database connections to be released', pool.end());
          await shutdownStep(log, 'the embedded Postgres to stop', database.stop());
        })();
        return closing;
      },
    };
  } catch (err) {
    await backend?.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await database.stop();
    throw err;
  }
}

/** The search backend the configuration names, its time series store, and what only OpenSearch has. */
interface SearchStorage {
  backend: SearchBackend;
  timeseries: TimeseriesStore;
  /** In `opensearch` mode, the store whose entries the outbox ships (timeseries/opensearchStore.ts). */
  shippedTimeseries?: OpenSearchTimeseriesStore;
  /** In `opensearch` mode, the task that rebuilds an index whose mapping must change. */
  indexRebuild?: TaskHandler;
}

/**
 * The search storage of the configuration. OpenSearch's modules, its client among them, are loaded only
 * in `opensearch` mode: a server in `postgres` mode never loads them.
 */
async function searchStorage(config: CatalogConfig, pool: Pool, log: Logger): Promise<SearchStorage> {
  if (config.searchBackend === 'postgres') return { backend: new PostgresBackend(pool), timeseries: new PostgresTimeseriesStore(pool) };
  const [{ OpenSearchBackend }, { OpenSearchTimeseriesStore }, { indexRebuild }] = await Promise.all([
    import('./search/opensearchBackend.ts'),
    import('./timeseries/opensearchStore.ts'),
    import('./search/indexRebuild.ts'),
  ]);
  const index = { prefix: config.indexPrefix, shards: config.indexShards, replicas: config.indexReplicas };
  const backend = new OpenSearchBackend(config.opensearchUrl!, index, pool, log);
  const timeseries = new OpenSearchTimeseriesStore(pool, backend.client, index, log);
  return { backend, timeseries, shippedTimeseries: timeseries, indexRebuild: indexRebuild(pool, backend, log) };
}

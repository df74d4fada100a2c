/**
 * `SVC_WORKERS > 1`: the primary process owns what must exist once (the embedded Postgres and its
 * directory lock, migrations, the root token) and forks HTTP workers that share the port; each worker
 * is a whole svc server on the primary's database. Durable tasks are safe to run in every worker
 * (claims use SKIP LOCKED and leases).
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.ts';
import { createPool } from './db/pool.ts';
import { migrate } from './db/migrate.ts';
import { openDatabase } from './db/embeddedPostgres.ts';
import { rootToken } from './auth/tokens.ts';
import type { Logger } from './shared/log.ts';

export interface Primary {
  /** Stops the workers (each finishes its in-flight requests), then the embedded Postgres. */
  stop(): Promise<void>;
  rootToken: { token: string; generated: boolean };
}

export async function startPrimary(config: Config, log: Logger): Promise<Primary> {
  const database = await openDatabase(config.databaseUrl, config.dataDir, log);
  const pool = createPool(database.url, 1);
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  const root = rootToken(config.adminToken, config.dataDir);
  const env = { DATABASE_URL: database.url, SVC_ADMIN_TOKEN: root.token };
  let stopping = false;
  const listening = new Set<Worker>();
  const fork = (): Worker => {
    const worker = cluster.fork(env);
    worker.once('listening', () => listening.add(worker));
    return worker;
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!listening.has(worker)) {
      // It never served (bad port, database gone…): starting it again would fail the same way.
      log.fatal({ pid: worker.process.pid, code }, 'a worker failed before listening; stopping');
      stopping = true;
      process.kill(process.pid, 'SIGTERM');
      return;
    }
    listening.delete(worker);
    log.error({ pid: worker.process.pid, code, signal }, 'worker exited; starting another');
    setTimeout(fork, 1000);
  });
  for (let i = 0; i < config.workers; i++) fork();
  log.info({ workers: config.workers, database: database.embedded ? 'embedded' : 'external' }, 'svc primary started');
  return {
    rootToken: root,
    async stop() {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              w.once('exit', () => resolve());
              w.process.kill('SIGTERM');
            }),
        ),
      );
      await database.stop();
    },
  };
}

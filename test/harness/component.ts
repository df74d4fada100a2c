/**
 * Shared pieces of the test harness: the shape every started component has, free loopback ports,
 * the unprivileged user that servers refusing root (Postgres, OpenSearch) run as, and readiness waits.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';
import { chownSync, mkdirSync, mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A component the harness started: the environment it hands to tests, and how to stop it. */
export interface Component {
  name: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface ServiceUser {
  name: string;
  uid: number;
  gid: number;
}

const SERVICE_USER = 'svctest';

/**
 * The user that servers run as. When the harness runs as root, an ordinary user is created once
 * (Postgres and OpenSearch refuse to run as root); otherwise the current user is used.
 */
export function serviceUser(): ServiceUser {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { name: process.env.USER ?? 'current', uid, gid: process.getgid?.() ?? uid };
  try {
    execFileSync('id', ['-u', SERVICE_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVICE_USER]);
  }
  const id = (flag: string) => Number(execFileSync('id', [flag, SERVICE_USER]).toString().trim());
  return { name: SERVICE_USER, uid: id('-u'), gid: id('-g') };
}

/** Directories made by serviceDir: removed when the harness exits, even if their component never finished starting. */
const madeDirs = new Set<string>();

/** A fresh directory owned by the service user, preferring tmpfs (/dev/shm) for speed. */
export function serviceDir(prefix: string): string {
  const base = process.env.SVC_TEST_TMP ?? (tryDir('/dev/shm') ?? tmpdir());
  const dir = mkdtempSync(join(base, `svc-${prefix}-`));
  if (madeDirs.size === 0) process.once('exit', () => madeDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  madeDirs.add(dir);
  const user = serviceUser();
  chownSync(dir, user.uid, user.gid);
  return dir;
}

function tryDir(path: string): string | undefined {
  try {
    mkdirSync(path, { recursive: true });
    return path;
  } catch {
    return undefined;
  }
}

/** Spawns a process as the service user (dropping root when the harness has it). */
export function spawnAsServiceUser(cmd: string, args: string[], opts: SpawnOptions = {}): ChildProcess {
  const user = serviceUser();
  const asRoot = (process.getuid?.() ?? 0) === 0;
  return spawn(cmd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...opts,
    ...(asRoot ? { uid: user.uid, gid: user.gid } : {}),
  });
}

/** Runs a command as the service user and waits for it; throws with its output when it fails. */
export function execAsServiceUser(cmd: string, args: string[], env?: NodeJS.ProcessEnv): string {
  const user = serviceUser();
  const asRoot = (process.getuid?.() ?? 0) === 0;
  return execFileSync(cmd, args, {
    env: env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asRoot ? { uid: user.uid, gid: user.gid } : {}),
  }).toString();
}

/** Polls `check` until it resolves true or the deadline passes. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: last });
}

/** Sends SIGTERM to a process (and SIGKILL after a grace period) and waits until it exits. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Reads a required environment variable (set from provision.sh's output); throws naming the variable. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run test/infra/provision.sh and export its output`);
  return value;
}

/** The last `lines` lines of a log file, for error messages when a server fails to start. */
export function logTail(path: string, lines = 40): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Whether the service user can reach and read `path` (a cache under root's home often is not). */
export function readableByServiceUser(path: string): boolean {
  try {
    execAsServiceUser('test', ['-r', path, '-a', '-x', path]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fails when `child` has exited, so a readiness wait stops at once instead of timing out
 * when the server died during start-up.
 */
export function assertRunning(child: ChildProcess, what: string, log?: string): void {
  if (child.exitCode !== null || child.signalCode !== null) {
    const how = child.signalCode ?? `code ${child.exitCode}`;
    throw new Error(`${what} exited during start-up (${how})${log ? `:\n${logTail(log)}` : ''}`);
  }
}

/**
 * Like `waitUntil`, but gives up as soon as `child` exits, with the tail of its log in the error.
 */
export async function waitWhileRunning(
  child: ChildProcess,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
  log?: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    assertRunning(child, what, log);
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const tail = log ? `:\n${logTail(log)}` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${tail}`, { cause: last });
}

const orphans = new Set<ChildProcess>();

/**
 * Makes sure `child` does not outlive the harness process when it exits without calling `stop()`
 * (a crash or `process.exit`). Returns the child for chaining.
 */
export function killOnExit(child: ChildProcess): ChildProcess {
  if (orphans.size === 0) {
    process.once('exit', () => {
      for (const c of orphans) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
  }
  orphans.add(child);
  child.once('exit', () => orphans.delete(child));
  return child;
}

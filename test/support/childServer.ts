/**
 * A svc server in a process of its own (`server/src/main.ts`), for the tests that kill it (SIGKILL)
 * in the middle of durable work and look at what a restart does, and those whose clients must not
 * share the server's event loop (what reaches a client over a connection depends on it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, type TestServer } from './testServer.ts';

const ROOT = resolve(import.meta.dirname, '../..');

export interface ChildServer {
  child: ChildProcess;
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Requests with the admin token, as {@link TestServer.request}. */
  remote: Pick<TestServer, 'request'>;
  /** SIGKILL, and waits for the process to be gone. */
  kill(): Promise<void>;
}

/** Starts the server with `env` (on top of the test's own) and resolves once it listens. */
export async function startChildServer(env: Record<string, string>): Promise<ChildServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-child-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  try {
    // The server logs its port once it listens.
    const port = await new Promise<number>((done, fail) => {
      let out = '';
      const listening = (c: Buffer) => {
        out += c.toString();
        const m = out.match(/"port":(\d+)/);
        if (!m) return;
        child.stdout!.off('data', listening);
        done(Number(m[1]));
      };
      child.stdout!.on('data', listening);
      child.on('exit', (code) => fail(new Error(`the server exited (${code}) before listening: ${out}`)));
    });
    child.stdout!.resume();
    const base = `http://127.0.0.1:${port}`;
    const remote = {
      request: (path: string, init: RequestInit & { token?: string | null } = {}) =>
        fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...(init.headers as object) } }),
    };
    return { child, url: base, remote, kill };
  } catch (err) {
    await kill();
    throw err;
  }
}

/**
 * The embedded default as a user meets it: `dist/server/src/main.js` (what `npm start` runs) with no
 * DATABASE_URL starts its own Postgres under SVC_DATA_DIR, keeps data across restarts, refuses a second
 * server on the same directory, runs Postgres as a non-root user, and stops cleanly on SIGTERM.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { freePort } from '../harness/component.ts';
import { builtEntry } from '../support/built.ts';
import { enc } from '../support/testServer.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** The server as `npm start` runs it: compiled (`server/src/main.ts` built into dist/). */
const MAIN = builtEntry('server/src/main.ts');
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,embedded_default,PROD)';
let dataDir: string;

before(() => {
  // /dev/shm is reachable by the unprivileged Postgres user (a root-only home directory would not be).
  dataDir = mkdtempSync(join('/dev/shm', 'svc-embedded-default-'));
});
after(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Starts the server's entry with node, or with `npm start` (the README's command) when `viaNpm`. */
async function startServer(port: number, extraEnv: Record<string, string> = {}, viaNpm = false): Promise<Running> {
  const [command, args] = viaNpm ? ['npm', ['start', '--silent']] : [process.execPath, [MAIN]];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir, PORT: String(port), SVC_ADMIN_TOKEN: '', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}): ${out}`);
    try {
      if ((await fetch(`${url}/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server not ready: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, output: () => out };
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

function postmasterPid(): number {
  return Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('starts with no database configured, keeps data across a restart, stops cleanly on SIGTERM', async () => {
  const port = await freePort();
  const first = await startServer(port);
  assert.match(first.output(), /svc generated the admin token/);
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const write = await fetch(`${first.url}/openapi/v3/entity/dataset/${enc(URN)}/status?createIfNotExists=false`, {
    method: 'POST',
    headers: auth,
    body: '{"value":{"removed":false}}',
  });
  assert.equal(write.status, 200);

  const pgPid = postmasterPid();
  if (process.getuid?.() === 0) {
    // Postgres refuses root; the embedded one runs as the system user "svc".
    assert.equal(execFileSync('ps', ['-o', 'user=', '-p', String(pgPid)]).toString().trim(), 'svc');
  }
  first.child.kill('SIGTERM');
  assert.equal(await exited(first.child), 0);
  assert.equal(alive(pgPid), false, 'the embedded Postgres must stop with the server');

  const second = await startServer(port);
  try {
    assert.doesNotMatch(second.output(), /generated the admin token/);
    const read = await fetch(`${second.url}/openapi/v3/entity/dataset/${enc(URN)}?aspects=status`, { headers: auth });
    assert.deepEqual(await read.json(), { urn: URN, status: { value: { removed: false } } });
  } finally {
    second.child.kill('SIGTERM');
    assert.equal(await exited(second.child), 0);
  }
});

test('SIGTERM to the `npm start` process stops the server and its Postgres (npm runs the server in its own place)', async () => {
  const running = await startServer(await freePort(), {}, true);
  const pgPid = postmasterPid();
  const serverPid = Number(execFileSync('pgrep', ['-P', String(running.child.pid)]).toString().trim());
  assert.match(readFileSync(`/proc/${serverPid}/cmdline`, 'utf8'), /dist\/server\/src\/main\.js/, 'npm\'s child is the server itself, not a shell');
  running.child.kill('SIGTERM');
  await exited(running.child);
  const deadline = Date.now() + 15_000;
  while ((alive(serverPid) || alive(pgPid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const orphaned = alive(serverPid);
  if (orphaned) process.kill(serverPid, 'SIGKILL'); // so that a failure here leaves nothing running
  assert.equal(orphaned, false, 'the server stopped');
  assert.equal(alive(pgPid), false, 'its Postgres stopped');
  assert.match(running.output(), /shutting down: finishing in-flight requests/);
});

test('the image runs the server with the command `npm start` runs (the same Node options)', () => {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const cmd = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').match(/^CMD (\[.*\])$/m);
  assert.ok(cmd, 'the Dockerfile has a CMD in exec form');
  assert.deepEqual(JSON.parse(cmd[1]!), start.replace(/^exec /, '').split(/\s+/));
});

test('a second server on the same data directory refuses to start with a clear message', async () => {
  const first = await startServer(await freePort());
  try {
    const second = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir, PORT: String(await freePort()) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    second.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    second.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    assert.equal(await exited(second), 1);
    assert.match(out, /SVC_DATA_DIR .* is in use by another svc server \(pid \d+\)/);
    assert.equal((await fetch(`${first.url}/ready`)).status, 200, 'the first server is unharmed');
  } finally {
    first.child.kill('SIGTERM');
    await exited(first.child);
  }
});

test('after the server is killed (kill -9), the next start takes over its Postgres and data', async () => {
  const port = await freePort();
  const first = await startServer(port);
  const orphan = postmasterPid();
  first.child.kill('SIGKILL');
  await exited(first.child);
  assert.equal(alive(orphan), true, 'a killed server leaves its detached Postgres behind');
  const second = await startServer(port);
  try {
    assert.equal(alive(orphan), false, 'the orphaned Postgres was stopped');
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const read = await fetch(`${second.url}/openapi/v3/entity/dataset/${enc(URN)}?aspects=status`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.status, 200);
  } finally {
    second.child.kill('SIGTERM');
    await exited(second.child);
  }
});

test('with SVC_WORKERS=2 two worker processes serve one port on the primary\'s embedded Postgres, and all stop on SIGTERM', async () => {
  const port = await freePort();
  const running = await startServer(port, { SVC_WORKERS: '2' });
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const pgPid = postmasterPid();
  try {
    const workers = execFileSync('pgrep', ['-P', String(running.child.pid)]).toString().trim().split('\n').map(Number);
    const nodeWorkers = workers.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.js'));
    assert.equal(nodeWorkers.length, 2);
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,clustered,PROD)';
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${running.url}/openapi/v3/entity/dataset/${enc(urn)}/subTypes?createIfNotExists=false`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify({ value: { typeNames: [`t${i}`] } }),
        }).then((r) => r.status),
      ),
    );
    assert.deepEqual([...new Set(results)], [200]);
    const read = await fetch(`${running.url}/openapi/v3/entity/dataset/${enc(URN)}?aspects=status`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.status, 200, 'data written by earlier single-process runs is there');
  } finally {
    running.child.kill('SIGTERM');
    assert.equal(await exited(running.child), 0);
  }
  assert.equal(alive(pgPid), false, 'the primary stops the embedded Postgres after its workers');
});

test('a port already in use stops the start with a message naming it', async () => {
  const port = await freePort();
  const blocker = createServer().listen(port, '0.0.0.0');
  await new Promise((r) => blocker.once('listening', r));
  try {
    const child = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    assert.equal(await exited(child), 1);
    assert.match(out, new RegExp(`port ${port} is already in use`));
  } finally {
    blocker.close();
  }
});

/**
 * What a start loads (a test of the mechanism, docs/decisions/0034-compiled-start.md): the server as
 * `npm start` runs it, on the embedded default in `postgres` mode, is ready without having loaded
 * OpenSearch's client or GraphQL's libraries; its first GraphQL request loads GraphQL. The packages
 * loaded are reported by a module hook that the server's Node is started with.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../harness/component.ts';
import { builtEntry } from '../support/built.ts';

const MAIN = builtEntry('server/src/main.ts');
const TOKEN = 'start-loads-token';

/** Registers a hook that writes `svc-test-loaded <package>` to stderr for each package first loaded. */
const HOOKS = `
const seen = new Set();
export async function load(url, context, next) {
  const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url);
  if (m && !seen.has(m[1])) {
    seen.add(m[1]);
    process.stderr.write('svc-test-loaded ' + m[1] + '\\n');
  }
  return next(url, context);
}`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

let dataDir: string;
let child: ChildProcess;
let url: string;
let stderr = '';

before(async () => {
  // /dev/shm is reachable by the unprivileged Postgres user (a root-only home directory would not be).
  dataDir = mkdtempSync(join('/dev/shm', 'svc-start-loads-'));
  const port = await freePort();
  child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, MAIN], {
    env: { ...process.env, DATABASE_URL: '', SEARCH_BACKEND: 'postgres', SVC_DATA_DIR: dataDir, PORT: String(port), SVC_ADMIN_TOKEN: TOKEN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}): ${stderr}`);
    try {
      if ((await fetch(`${url}/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server not ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

after(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const loaded = () => new Set([...stderr.matchAll(/^svc-test-loaded (\S+)$/gm)].map((m) => m[1]!));

test('a server in postgres mode is ready without OpenSearch\'s client or GraphQL; its first GraphQL request loads GraphQL', async () => {
  const atReady = loaded();
  assert.ok(atReady.has('pg') && atReady.has('express'), `the hook reports what the start loaded: ${[...atReady].join(', ')}`);
  for (const pkg of ['@opensearch-project/opensearch', 'graphql', 'graphql-yoga', '@graphql-yoga/render-graphiql']) {
    assert.ok(!atReady.has(pkg), `${pkg} not loaded by the start`);
  }
  const res = await fetch(`${url}/api/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  assert.deepEqual(await res.json(), { data: { __typename: 'Query' }, extensions: {} });
  const afterQuery = loaded();
  assert.ok(afterQuery.has('graphql') && afterQuery.has('graphql-yoga'), 'GraphQL loaded by its first request');
  assert.ok(!afterQuery.has('@opensearch-project/opensearch'), 'still no OpenSearch client in postgres mode');
});

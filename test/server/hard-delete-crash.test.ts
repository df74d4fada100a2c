/**
 * Durability of the hard-delete cleanup: the server is killed (SIGKILL) in the middle of removing a
 * property's values from 10,000 entities; once started again it resumes the task, and in the end no
 * value of that property is left while every other property is intact.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from '../harness/component.ts';
import { createTestDatabase, enc, sql, expectMissing } from '../support/testServer.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TOKEN = 'crash-test-token';
const N = 10_000;
const DOOMED = 'urn:li:structuredProperty:crash.doomed';
const KEPT = 'urn:li:structuredProperty:crash.kept';
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,crash.t${String(i).padStart(5, '0')},PROD)`;

let databaseUrl: string;
let port: number;
let server: ChildProcess | undefined;

async function startServer(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'server/src/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), SVC_ADMIN_TOKEN: TOKEN, SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/ready`)).ok) return child;
    } catch {
      // starting
    }
    if (i > 600) throw new Error('server did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });
}

async function count(text: string, params: unknown[]): Promise<number> {
  const [row] = await sql<{ n: number }>(databaseUrl, text, params);
  return row!.n;
}

interface TaskView {
  id: number;
  state: string;
  done: number;
  total: number | null;
  attempts: number;
}

async function cleanupTask(): Promise<TaskView | undefined> {
  const res = await call(`/api/tasks?subject=${encodeURIComponent(DOOMED)}&kind=property-hard-delete`);
  return ((await res.json()) as { tasks: TaskView[] }).tasks[0];
}

before(async () => {
  databaseUrl = await createTestDatabase();
  port = await freePort();
  server = await startServer();
  for (const [urn, name, valueType] of [[DOOMED, 'crash.doomed', 'number'], [KEPT, 'crash.kept', 'string']] as const) {
    const res = await call(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition`, {
      method: 'POST',
      body: JSON.stringify({ value: { qualifiedName: name, valueType: `urn:li:dataType:svc.${valueType}`, entityTypes: ['urn:li:entityType:svc.dataset'] } }),
    });
    assert.equal(res.status, 200);
  }
  for (let start = 0; start < N; start += 500) {
    const batch = Array.from({ length: 500 }, (_, k) => start + k).map((i) => ({
      urn: urnOf(i),
      status: { value: { removed: false } },
      structuredProperties: { value: { properties: [{ propertyUrn: DOOMED, values: [{ double: i }] }, { propertyUrn: KEPT, values: [{ string: `keep-${i}` }] }] } },
    }));
    const res = await call('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify(batch) });
    assert.equal(res.status, 200, await res.text());
  }
});

after(async () => {
  server?.kill('SIGTERM');
  if (server && server.exitCode === null) await new Promise((r) => server!.once('exit', r));
});

test('a hard-delete cleanup killed mid-way resumes after a restart and removes every value of the property, and only it', async () => {
  const before = await count('SELECT count(*)::int AS n FROM structured_property_assignments WHERE property_urn = $1', [DOOMED]);
  assert.equal(before, N);

  assert.equal((await call(`/openapi/v3/entity/structuredProperty/${enc(DOOMED)}`, { method: 'DELETE' })).status, 200);
  // The definition is gone at once.
  await expectMissing(call(`/openapi/v3/entity/structuredProperty/${enc(DOOMED)}/propertyDefinition`));

  // Wait until the cleanup is under way, then kill the server without warning.
  for (let i = 0; ; i++) {
    const task = await cleanupTask();
    if (task && task.state === 'RUNNING' && task.done >= 200) break;
    assert.ok(i < 2000, `the cleanup did not start: ${JSON.stringify(task)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  server!.kill('SIGKILL');
  await new Promise((r) => server!.once('exit', r));
  // A kill between a transaction's commit and its count loses that count: made certain here by taking
  // back one transaction's worth, which the resumed task must count again from what is left.
  await sql(databaseUrl, "UPDATE tasks SET done = done - 50 WHERE kind = 'property-hard-delete' AND done >= 50");
  const left = await count('SELECT count(*)::int AS n FROM structured_property_assignments WHERE property_urn = $1', [DOOMED]);
  assert.ok(left > 0 && left < N, `killed mid-way: ${left} of ${N} entities still hold the value`);

  // Re-creating the property is refused while its values are being removed (checked by the restarted server).
  server = await startServer();
  const recreate = await call(`/openapi/v3/entity/structuredProperty/${enc(DOOMED)}/propertyDefinition`, {
    method: 'POST',
    body: JSON.stringify({ value: { qualifiedName: 'crash.doomed', valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'] } }),
  });
  if (recreate.status !== 409) {
    // The resumed task may already have finished on a fast machine; then the re-create succeeds.
    assert.equal(recreate.status, 200);
    assert.equal((await cleanupTask())?.state, 'SUCCEEDED');
  }

  let task: TaskView | undefined;
  for (let i = 0; ; i++) {
    task = await cleanupTask();
    if (task?.state === 'SUCCEEDED') break;
    assert.ok(i < 1200, `the cleanup did not finish: ${JSON.stringify(task)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(task.attempts >= 2, 'the task was resumed by the restarted server');
  // Entities cleaned before the kill but after the last count are counted too (the count fell short).
  assert.deepEqual([task.done, task.total], [N, N], 'every entity counted once');

  const rows = await count('SELECT count(*)::int AS n FROM structured_property_assignments WHERE property_urn = $1', [DOOMED]);
  assert.equal(rows, 0);
  const aspects = await count(
    "SELECT count(*)::int AS n FROM aspects WHERE aspect = 'structuredProperties' AND version = 0 AND metadata::text LIKE '%' || $1 || '%'",
    [DOOMED],
  );
  assert.equal(aspects, 0, 'no stored aspect still carries a value of the deleted property');

  const kept = await sql<{ entity_urn: string }>(databaseUrl, 'SELECT entity_urn FROM structured_property_assignments WHERE property_urn = $1', [KEPT]);
  assert.equal(kept.length, N);
  const keptAspects = await count(
    "SELECT count(*)::int AS n FROM aspects WHERE aspect = 'structuredProperties' AND version = 0 AND metadata::text LIKE '%' || $1 || '%'",
    [KEPT],
  );
  assert.equal(keptAspects, N);
  for (const i of [0, 1234, N - 1]) {
    const res = await call(`/openapi/v3/entity/dataset/${enc(urnOf(i))}/structuredProperties`);
    assert.deepEqual(await res.json(), { urn: urnOf(i), structuredProperties: { value: { properties: [{ propertyUrn: KEPT, values: [{ string: `keep-${i}` }] }] } } });
  }
});

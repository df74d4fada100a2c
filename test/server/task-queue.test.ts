/**
 * The durable task queue on a real Postgres: a claim is exclusive while its lease runs, an expired
 * lease lets another runner take over and fences the old one out, a failure backs off, a release
 * hands the task on at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPool, type Pool } from '../../server/src/db/pool.ts';
import { migrate } from '../../server/src/db/migrate.ts';
import { claimTask, enqueueTask, finishTask, getTask, releaseTask, renewLease, reportProgress } from '../../server/src/tasks/taskQueue.ts';
import { createTestDatabase } from '../support/testServer.ts';

let pool: Pool;
before(async () => {
  pool = createPool(await createTestDatabase(), 4);
  await migrate(pool);
});
after(async () => {
  await pool.end();
});

const expireLease = (id: number) => pool.query("UPDATE tasks SET lease_until = now() - interval '1 second' WHERE id = $1", [id]);

test('a claim is exclusive while its lease runs', async () => {
  const task = await enqueueTask(pool, 'kind-a', 'subject-a');
  const claim = await claimTask(pool, ['kind-a']);
  assert.equal(claim?.task.id, task.id);
  assert.equal(claim?.task.state, 'RUNNING');
  assert.equal(await claimTask(pool, ['kind-a']), undefined);
  await finishTask(pool, claim!);
  assert.equal((await getTask(pool, task.id)).state, 'SUCCEEDED');
  assert.equal(await renewLease(pool, claim!), false, 'a finished claim cannot be renewed');
});

test('after the lease expires another runner takes over and the first one is fenced out', async () => {
  const task = await enqueueTask(pool, 'kind-b', 'subject-b');
  const first = (await claimTask(pool, ['kind-b']))!;
  assert.equal(await reportProgress(pool, first, { total: 10, doneDelta: 3 }), true);
  await expireLease(task.id);
  const second = (await claimTask(pool, ['kind-b']))!;
  assert.equal(second.task.id, task.id);
  assert.equal(second.task.attempts, 2);
  assert.equal(await reportProgress(pool, first, { doneDelta: 5 }), false, 'the old runner lost its claim');
  await finishTask(pool, first);
  assert.equal((await getTask(pool, task.id)).state, 'RUNNING', 'the old runner cannot finish the task');
  assert.equal(await reportProgress(pool, second, { doneDelta: 7 }), true);
  await finishTask(pool, second);
  const done = await getTask(pool, task.id);
  assert.deepEqual([done.state, done.total, done.done], ['SUCCEEDED', 10, 10]);
});

test('a failure counts, backs off, and the task is claimed again once the backoff is over', async () => {
  const task = await enqueueTask(pool, 'kind-c', 'subject-c');
  const claim = (await claimTask(pool, ['kind-c']))!;
  await finishTask(pool, claim, 'disk on fire');
  const failed = await getTask(pool, task.id);
  assert.deepEqual([failed.state, failed.failures, failed.error], ['PENDING', 1, 'disk on fire']);
  assert.equal(await renewLease(pool, claim), false, 'a heartbeat after the failure cannot cut the backoff short');
  assert.equal(await claimTask(pool, ['kind-c']), undefined, 'not before the backoff is over');
  await expireLease(task.id);
  const again = (await claimTask(pool, ['kind-c']))!;
  assert.equal(again.task.id, task.id);
  await finishTask(pool, again);
  assert.equal((await getTask(pool, task.id)).state, 'SUCCEEDED');
});

test('a released task is claimed again at once', async () => {
  const task = await enqueueTask(pool, 'kind-d', 'subject-d');
  const claim = (await claimTask(pool, ['kind-d']))!;
  await releaseTask(pool, claim);
  const next = await claimTask(pool, ['kind-d']);
  assert.equal(next?.task.id, task.id);
  await finishTask(pool, next!);
});

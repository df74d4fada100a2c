/**
 * The durable task queue on a real Postgres: a claim is exclusive while its lease runs, an expired
 * lease lets another runner take over and fences the old one out, a failure backs off, a release
 * hands the task on at once. The runner is woken by the commit that queues a task, runs kinds side by
 * side, and listens again after losing its connection.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createPool, inTransaction, type Pool } from '../../server/src/db/pool.ts';
import { migrate } from '../../server/src/db/migrate.ts';
import { claimTask, enqueueTask, finishTask, getTask, releaseTask, renewLease, reportProgress } from '../../server/src/tasks/taskQueue.ts';
import { TaskRunner } from '../../server/src/tasks/taskRunner.ts';
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

describe('the runner', () => {
  let databaseUrl: string;
  let runnerPool: Pool;
  before(async () => {
    databaseUrl = await createTestDatabase();
    runnerPool = createPool(databaseUrl, 4);
    await migrate(runnerPool);
  });
  after(async () => {
    await runnerPool.end();
  });

  /** A runner that never polls (once an hour): only a NOTIFY makes it look for tasks. */
  const notifiedOnly = () => new TaskRunner(runnerPool, pino({ level: 'silent' }), { listenUrl: databaseUrl, pollMs: 3_600_000 });
  /** Waits for a task to succeed; fails (rather than hanging) if it has not after 30 s. */
  const finished = async (id: number) => {
    const deadline = Date.now() + 30_000;
    while ((await getTask(runnerPool, id)).state !== 'SUCCEEDED') {
      if (Date.now() > deadline) assert.fail(`task ${id} did not run`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  test('a queued task wakes the runner of its kind when the queuing transaction commits', async () => {
    const runner = notifiedOnly();
    const ran: string[] = [];
    runner.register('woken', async (ctx) => void ran.push(ctx.task.subject));
    runner.start();
    try {
      await new Promise((r) => setTimeout(r, 200)); // listening, and the first look found nothing
      const task = await inTransaction(runnerPool, (tx) => enqueueTask(tx, 'woken', 'by-notify'));
      await finished(task.id);
      assert.deepEqual(ran, ['by-notify']);
    } finally {
      await runner.stop();
    }
  });

  test('a runner stopped while its listening connection is still opening stops (no hang)', async () => {
    // Stopping 0..40 ms after start covers stops before, during and after connect and LISTEN.
    for (let delay = 0; delay <= 40; delay += 4) {
      const runner = notifiedOnly();
      runner.register('early-stop', async () => undefined);
      runner.start();
      await new Promise((r) => setTimeout(r, delay));
      const stopped = await Promise.race([runner.stop().then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 10_000))]);
      assert.ok(stopped, `the runner stopped ${delay} ms after start did not stop`);
      const listening = await runnerPool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'svc-tasks' AND datname = current_database()");
      assert.equal(listening.rows[0].n, 0, `a listening connection was left open (stop after ${delay} ms)`);
    }
  });

  test('tasks of different kinds run at the same time: a long one does not hold up another', async () => {
    const runner = notifiedOnly();
    let releaseLong!: () => void;
    const longRunning = new Promise<void>((r) => (releaseLong = r));
    runner.register('long', async () => longRunning);
    runner.register('short', async () => undefined);
    runner.start();
    try {
      const long = await enqueueTask(runnerPool, 'long', 'slow-subject');
      // The long one has started (is held) before the short one is queued.
      const deadline = Date.now() + 30_000;
      while ((await getTask(runnerPool, long.id)).state !== 'RUNNING') {
        if (Date.now() > deadline) assert.fail('the long task did not start');
        await new Promise((r) => setTimeout(r, 20));
      }
      const short = await enqueueTask(runnerPool, 'short', 'quick-subject');
      await finished(short.id);
      assert.equal((await getTask(runnerPool, long.id)).state, 'RUNNING', 'the long task was still running');
      releaseLong();
      await finished(long.id);
    } finally {
      releaseLong();
      await runner.stop();
    }
  });

  test('a step that records its progress in its own transaction commits with it, and is rolled back once the lease is lost', async () => {
    const runner = notifiedOnly();
    await runnerPool.query('CREATE TABLE step_log (task bigint, step int)');
    let stolen!: () => void;
    const stealNow = new Promise<void>((r) => (stolen = r));
    let secondStep: Promise<unknown> | undefined;
    runner.register('fenced-steps', async (ctx) => {
      const step = (n: number) =>
        inTransaction(runnerPool, async (tx) => {
          await tx.query('INSERT INTO step_log VALUES ($1, $2)', [ctx.task.id, n]);
          await ctx.progress({ total: 2, doneDelta: 1 }, tx);
        });
      await step(1);
      await stealNow;
      secondStep = step(2);
      await secondStep;
    });
    runner.start();
    try {
      const task = await enqueueTask(runnerPool, 'fenced-steps', 'fenced');
      const deadline = Date.now() + 30_000;
      while ((await getTask(runnerPool, task.id)).done < 1) {
        if (Date.now() > deadline) assert.fail('the first step did not commit');
        await new Promise((r) => setTimeout(r, 20));
      }
      // Another runner takes the task over; the first one's next step must not land.
      await runnerPool.query("UPDATE tasks SET lease_until = now() - interval '1 second' WHERE id = $1", [task.id]);
      const other = (await claimTask(runnerPool, ['fenced-steps']))!;
      assert.equal(other.task.id, task.id);
      stolen();
      while (!secondStep) await new Promise((r) => setTimeout(r, 10));
      await assert.rejects(secondStep, /lost the lease/);
      const steps = await runnerPool.query('SELECT step FROM step_log WHERE task = $1 ORDER BY step', [task.id]);
      assert.deepEqual(steps.rows.map((r: { step: number }) => r.step), [1], 'the fenced step was rolled back');
      const after = await getTask(runnerPool, task.id);
      assert.deepEqual([after.state, after.done, after.total, after.failures, after.error], ['RUNNING', 1, 2, 0, null], 'the new claim is untouched');
    } finally {
      stolen();
      await runner.stop();
    }
  });

  test('listening resumes after its connection is lost, and what was queued meanwhile runs', async () => {
    const runner = notifiedOnly();
    const ran: string[] = [];
    runner.register('relisten', async (ctx) => void ran.push(ctx.task.subject));
    runner.start();
    try {
      await new Promise((r) => setTimeout(r, 200));
      const killed = await runnerPool.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'svc-tasks' AND datname = current_database()",
      );
      assert.equal(killed.rowCount, 1);
      const task = await enqueueTask(runnerPool, 'relisten', 'after-reconnect');
      await finished(task.id);
      assert.deepEqual(ran, ['after-reconnect']);
    } finally {
      await runner.stop();
    }
  });
});

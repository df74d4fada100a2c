/**
 * The TruncationJob controller against the real kube-apiserver and a real svc server (Postgres): a
 * dry run, a run once, a schedule (six-field cron, every two seconds), a run interrupted by an
 * operator restart that resumes from the task id in status without starting again (as a status left
 * behind, and with an operator process killed mid-run), and a run recorded without its task id that is
 * launched with its recorded cut-off; a spec changed while a run's task works, run once that task has
 * ended, each run's conditions and lastRun its own; a run message longer than the CRD takes, cut to fit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { statusFacts } from '../../operator/src/controllers/truncationJob.ts';
import type { TruncationJob } from '../../operator/src/resources.ts';
import type { Operator } from '../../operator/src/operator.ts';
import { datasetUrn } from '../support/structuredProperties.ts';
import { ADMIN_TOKEN, enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';
import { condition, createNamespace, createObject, deleteObject, eventReasons, getObject, installCrds, objects, merge, patchObject, spawnOperator, startTestOperator, waitJob } from '../support/operator.ts';
import { GROUP, VERSION } from '../../operator/src/resources.ts';

const TJ = 'truncationjobs';
const DAY = 86_400_000;
let server: TestServer;
let operator: Operator;
let ns: string;
let seq = 0;

/** Writes `old` datasetProfile entries 100 days old and `recent` ones from today, on a dataset of its own; returns the aspect. */
async function entries(old: number, recent: number, aspect = 'datasetProfile'): Promise<void> {
  const urn = datasetUrn(`tj_${++seq}_${Date.now()}`);
  const now = Date.now();
  const times = [...Array.from({ length: old }, (_, i) => now - 100 * DAY + i), ...Array.from({ length: recent }, (_, i) => now - 1000 + i)];
  for (const t of times) {
    await text(await server.request(`/openapi/v3/entity/dataset/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t } }) }), 200);
  }
}

/** How many entries of the aspect the server holds: the dry run's total. */
async function total(aspect = 'datasetProfile'): Promise<number> {
  const res = await server.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect, endTimeMillis: 0, dryRun: true }) });
  const value = (JSON.parse(await text(res, 200)) as { value: string }).value;
  return Number(/out of (\d+) rows/.exec(value)![1]);
}

/** How many entries of the aspect are at or before `endTimeMillis`: the dry run's count. */
async function atOrBefore(endTimeMillis: number, aspect: string): Promise<number> {
  const res = await server.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect, endTimeMillis, dryRun: true }) });
  return Number(/^Delete (\d+) out of/.exec((JSON.parse(await text(res, 200)) as { value: string }).value)![1]);
}

async function truncationTasks(): Promise<{ id: number; state: string }[]> {
  return ((await (await server.request('/api/tasks?kind=timeseries-truncate')).json()) as { tasks: { id: number; state: string }[] }).tasks;
}

/** A real truncation of datasetProfile started on the server, as an earlier operator started it; its task id. */
async function truncationStartedBefore(endTimeMillis: number): Promise<string> {
  const res = await server.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis, dryRun: false }) });
  return (JSON.parse(await text(res, 200)) as { value: string }).value;
}

/** Writes a job's status as an earlier operator left it. */
async function setStatus(namespace: string, name: string, status: TruncationJob['status']): Promise<void> {
  await objects.patchNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace, plural: TJ, name, body: { status } }, merge);
}

function job(name: string, spec: Record<string, unknown>, namespace = ns): Promise<TruncationJob> {
  return createObject<TruncationJob>(namespace, TJ, { metadata: { name }, spec: { entityType: 'dataset', ...spec } });
}

before(async () => {
  await installCrds();
  server = await startTestServer();
  ns = await createNamespace('tj');
  operator = await startTestOperator(server.url, ns);
});

after(async () => {
  await operator?.stop();
  await server?.close();
});

describe('TruncationJob', () => {
  test('a dry run (the default) reports the server message and counts, and deletes nothing', async () => {
    await entries(6, 4, 'datasetUsageStatistics');
    const before = await total('datasetUsageStatistics');
    await job('dry', { aspect: 'datasetUsageStatistics', olderThan: '30d' });
    const o = await waitJob(ns, 'dry', 'Complete', (x) => condition(x, 'Complete')?.status === 'True');
    assert.equal(condition(o, 'Complete')!.reason, 'DryRun');
    assert.equal(o.status!.counts!.toDelete, 6);
    assert.equal(o.status!.counts!.total, before);
    assert.equal(o.status!.counts!.deleted, 0);
    assert.match(o.status!.lastRun!.message!, /^Delete 6 out of \d+ rows \(.*\)\. .*This was a dry run/);
    assert.equal(o.status!.taskId, undefined);
    assert.ok(o.status!.lastRun!.endTimeMillis! < Date.now() - 29 * DAY && o.status!.lastRun!.endTimeMillis! > Date.now() - 31 * DAY);
    assert.equal(await total('datasetUsageStatistics'), before);
  });

  test('a run deletes the entries older than the cut-off once, following its task to completion', async () => {
    await entries(5, 3);
    const before = await total();
    const tasksBefore = (await truncationTasks()).length;
    await job('once', { aspect: 'datasetProfile', olderThan: '30d', dryRun: false, batchSize: 2 });
    const o = await waitJob(ns, 'once', 'Complete', (x) => condition(x, 'Complete')?.status === 'True');
    assert.equal(condition(o, 'Complete')!.reason, 'Completed');
    assert.equal(condition(o, 'Failed')!.status, 'False');
    assert.match(o.status!.taskId!, /^svc:\d+$/);
    assert.equal(o.status!.counts!.toDelete, 5);
    assert.equal(o.status!.counts!.deleted, 5);
    assert.ok(o.status!.lastRun!.completionTime);
    assert.equal(await total(), before - 5);
    assert.ok((await eventReasons(ns, 'once')).includes('Completed'));
    // Once means once: a later look does not run it again.
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal((await truncationTasks()).length, tasksBefore + 1);
    assert.equal((await getObject<TruncationJob>(ns, TJ, 'once'))!.status!.lastRun!.startTime, o.status!.lastRun!.startTime);
  });

  test('a scheduled job runs at each time of its schedule, with nextRun in status', async () => {
    await entries(2, 1, 'datasetProfile');
    await job('every2s', { aspect: 'datasetProfile', olderThan: '30d', dryRun: false, schedule: '*/2 * * * * *' });
    const first = await waitJob(ns, 'every2s', 'a first run', (x) => condition(x, 'Complete')?.status === 'True' && x.status?.nextRun !== undefined, 20_000);
    assert.ok(Date.parse(first.status!.nextRun!) > Date.parse(first.status!.lastRun!.startTime!));
    await entries(3, 0, 'datasetProfile');
    // A run that started once the entries were all written (one may have started in the middle).
    const written = Date.now();
    const second = await waitJob(ns, 'every2s', 'a run after the writes', (x) => Date.parse(x.status?.lastRun?.startTime ?? '') > written && condition(x, 'Complete')?.status === 'True' && x.status?.lastRun?.completionTime !== undefined, 20_000);
    assert.ok(Date.parse(second.status!.lastRun!.startTime!) >= Date.parse(first.status!.nextRun!), 'not before its time');
    // Its own task followed to the end: a run's status never shows the completion of the one before.
    assert.equal(condition(second, 'Complete')!.reason, 'Completed');
    assert.ok(second.status!.counts!.toDelete! >= 3);
    assert.equal(second.status!.counts!.deleted, second.status!.counts!.toDelete);
    const oldLeft = await server.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: Date.now() - 30 * DAY, dryRun: true }) });
    assert.match(JSON.parse(await text(oldLeft, 200)).value, /^Delete 0 out of/);
    // Stopped here so that its runs do not touch the entries of the next tests.
    await deleteObject(ns, TJ, 'every2s');
  });

  test('an invalid cron expression is reported, not retried', async () => {
    await job('badcron', { aspect: 'datasetProfile', olderThan: '30d', schedule: '99 * * * *' });
    const o = await waitJob(ns, 'badcron', 'InvalidSchedule', (x) => condition(x, 'Ready')?.reason === 'InvalidSchedule');
    assert.equal(condition(o, 'Ready')!.status, 'False');
  });

  test('a run message longer than the CRD takes is cut to its first 32,768 characters, and the API server takes the status', async () => {
    // No answer of the server is that long (its refusals name at most the spec's 200-character entity type
    // and aspect): the status is built from such a run as the reconciler builds it, and written to the API server.
    const ns9 = await createNamespace('tj-long-message');
    const created = await job('long', { aspect: 'datasetProfile', olderThan: '30d' }, ns9);
    const kept = 'Delete 1 out of 2 rows (50.00%). '.padEnd(32_768, 'x');
    const now = new Date().toISOString();
    const lastRun = { startTime: now, completionTime: now, endTimeMillis: Date.now() - 30 * DAY, dryRun: true, message: `${kept} and what the CRD does not take`, generation: created.metadata.generation };
    const facts = statusFacts(created, { lastRun, counts: { toDelete: 1, total: 2, deleted: 0 }, taskId: undefined });
    assert.equal(facts.lastRun!.message!.length, 32_768, 'cut to what the CRD takes');
    assert.ok(facts.lastRun!.message === kept, 'its first 32,768 characters kept');
    // The API server refuses the whole message (the status write would fail at every reconcile), and takes it cut.
    await assert.rejects(setStatus(ns9, 'long', { lastRun }), (err) => err instanceof ApiException && err.code === 422);
    await setStatus(ns9, 'long', { observedGeneration: created.metadata.generation, ...facts });
    assert.ok((await getObject<TruncationJob>(ns9, TJ, 'long'))!.status!.lastRun!.message === kept, 'the status stored holds the cut message');
  });
});

describe('TruncationJob across an operator restart', () => {
  test('a run found in status with its task id is followed, not started again', async () => {
    const ns2 = await createNamespace('tj-restart');
    await entries(4, 1, 'datasetProfile');
    const endTimeMillis = Date.now() - 30 * DAY;
    // The run the previous operator started: its task on the server, its id in status.
    const taskId = await truncationStartedBefore(endTimeMillis);
    const tasksBefore = (await truncationTasks()).length;
    const created = await job('resumed', { aspect: 'datasetProfile', endTimeMillis, dryRun: false }, ns2);
    await setStatus(ns2, 'resumed', { observedGeneration: created.metadata.generation, taskId, counts: { toDelete: 4, total: 99 }, lastRun: { startTime: new Date().toISOString(), endTimeMillis, dryRun: false, message: 'started before the restart' } });
    const restarted = await startTestOperator(server.url, ns2);
    try {
      const o = await waitJob(ns2, 'resumed', 'Complete', (x) => condition(x, 'Complete')?.status === 'True');
      assert.equal(o.status!.taskId, taskId);
      assert.equal(condition(o, 'Complete')!.reason, 'Completed');
      assert.equal(o.status!.lastRun!.message, 'started before the restart');
      assert.equal((await truncationTasks()).length, tasksBefore, 'no second run');
    } finally {
      await restarted.stop();
    }
  });

  test('a run whose task stopped at timeoutSeconds with entries left completes as StoppedAtTimeout, with a Warning', async () => {
    const ns2 = await createNamespace('tj-timeout');
    const endTimeMillis = Date.now() - 30 * DAY;
    // The server's task as a truncation stopped by its timeout leaves it: done, 3 of its 10 entries deleted.
    const [row] = await sql<{ id: string }>(
      server.databaseUrl,
      "INSERT INTO tasks (kind, subject, params, state, total, done, finished_at) VALUES ('timeseries-truncate', 'dataset_datasetprofileaspect_v1', $1, 'SUCCEEDED', 10, 3, now()) RETURNING id",
      [JSON.stringify({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis, batchSize: 1, timeoutSeconds: 1 })],
    );
    const taskId = `svc:${row!.id}`;
    const created = await job('stopped', { aspect: 'datasetProfile', endTimeMillis, dryRun: false, batchSize: 1, timeoutSeconds: 1 }, ns2);
    await setStatus(ns2, 'stopped', { observedGeneration: created.metadata.generation, taskId, counts: { toDelete: 10, total: 20 }, lastRun: { startTime: new Date().toISOString(), endTimeMillis, dryRun: false, message: 'started' } });
    const restarted = await startTestOperator(server.url, ns2);
    try {
      const o = await waitJob(ns2, 'stopped', 'Complete', (x) => condition(x, 'Complete')?.status === 'True');
      assert.equal(condition(o, 'Complete')!.reason, 'StoppedAtTimeout');
      assert.equal(condition(o, 'Complete')!.message, `task ${taskId} deleted 3 of 10 entries: it stopped at timeoutSeconds (1), leaving the rest`);
      assert.equal(o.status!.counts!.deleted, 3);
      assert.ok((await eventReasons(ns2, 'stopped')).includes('StoppedAtTimeout'));
    } finally {
      await restarted.stop();
    }
  });

  test('a run recorded without its task id (the server was down, or a restart came in between) is launched with its recorded cut-off', async () => {
    const ns3 = await createNamespace('tj-relaunch');
    await entries(3, 2, 'datasetUsageStatistics');
    const endTimeMillis = Date.now() - 30 * DAY;
    const totalBefore = await total('datasetUsageStatistics');
    const old = await atOrBefore(endTimeMillis, 'datasetUsageStatistics');
    assert.ok(old >= 3 && old < totalBefore);
    const tasksBefore = (await truncationTasks()).length;
    const created = await job('relaunched', { aspect: 'datasetUsageStatistics', olderThan: '1d', dryRun: false }, ns3);
    // What the previous operator recorded before the server accepted the run (its cut-off: 30 days,
    // not the spec's 1 day, so the entries of today are kept).
    await setStatus(ns3, 'relaunched', { observedGeneration: created.metadata.generation, counts: { toDelete: old, total: totalBefore }, lastRun: { startTime: new Date().toISOString(), endTimeMillis, dryRun: false, message: 'recorded before the restart' } });
    const restarted = await startTestOperator(server.url, ns3);
    try {
      const o = await waitJob(ns3, 'relaunched', 'Complete', (x) => condition(x, 'Complete')?.status === 'True');
      assert.equal(condition(o, 'Complete')!.reason, 'Completed');
      assert.equal(o.status!.lastRun!.endTimeMillis, endTimeMillis, 'the recorded cut-off');
      assert.equal(o.status!.counts!.deleted, old);
      assert.ok(o.status!.taskId);
      assert.equal(await atOrBefore(endTimeMillis, 'datasetUsageStatistics'), 0);
      assert.equal(await total('datasetUsageStatistics'), totalBefore - old, 'the entries after the cut-off are kept');
      assert.equal((await truncationTasks()).length, tasksBefore + 1, 'one run launched');
    } finally {
      await restarted.stop();
    }
  });

  test('a run recorded for an earlier spec and never launched is closed as Superseded, not launched', async () => {
    const ns7 = await createNamespace('tj-superseded');
    await entries(2, 1, 'datasetUsageStatistics');
    const endTimeMillis = Date.now() - 30 * DAY;
    const before = await atOrBefore(endTimeMillis, 'datasetUsageStatistics');
    const tasksBefore = (await truncationTasks()).length;
    const created = await job('superseded', { aspect: 'datasetUsageStatistics', olderThan: '30d', dryRun: false }, ns7);
    await setStatus(ns7, 'superseded', { observedGeneration: created.metadata.generation, counts: { toDelete: before, total: 99 }, lastRun: { startTime: new Date().toISOString(), endTimeMillis, dryRun: false, message: 'recorded, never launched', generation: created.metadata.generation } });
    await patchObject(ns7, TJ, 'superseded', { spec: { dryRun: true } });
    const next = await startTestOperator(server.url, ns7);
    try {
      const o = await waitJob(ns7, 'superseded', 'the run of generation 2', (x) => x.status?.lastRun?.generation === 2 && condition(x, 'Complete')?.status === 'True');
      assert.equal(condition(o, 'Complete')!.reason, 'DryRun');
      assert.ok((await eventReasons(ns7, 'superseded')).includes('Superseded'));
      assert.equal((await truncationTasks()).length, tasksBefore, 'the recorded real run was not launched');
      assert.equal(await atOrBefore(endTimeMillis, 'datasetUsageStatistics'), before, 'nothing deleted');
    } finally {
      await next.stop();
    }
  });

  test('a schedule changed while a run works to one the cron package refuses: the run is recorded, then InvalidSchedule', async () => {
    const ns8 = await createNamespace('tj-reschedule');
    await entries(2, 1, 'datasetProfile');
    const endTimeMillis = Date.now() - 30 * DAY;
    const taskId = await truncationStartedBefore(endTimeMillis);
    const created = await job('rescheduled', { aspect: 'datasetProfile', olderThan: '30d', dryRun: false, schedule: '0 3 * * *' }, ns8);
    await setStatus(ns8, 'rescheduled', { observedGeneration: created.metadata.generation, taskId, counts: { toDelete: 2, total: 99 }, lastRun: { startTime: new Date().toISOString(), endTimeMillis, dryRun: false, message: 'running', generation: created.metadata.generation } });
    // Five fields of cron characters (the CRD takes it); the cron package has no "L".
    await patchObject(ns8, TJ, 'rescheduled', { spec: { schedule: '0 3 L * *' } });
    const next = await startTestOperator(server.url, ns8);
    try {
      const o = await waitJob(ns8, 'rescheduled', 'the run recorded, the schedule refused', (x) => condition(x, 'Complete')?.status === 'True' && condition(x, 'Ready')?.reason === 'InvalidSchedule');
      assert.equal(condition(o, 'Complete')!.reason, 'Completed');
      assert.ok(o.status!.lastRun!.completionTime);
      assert.equal(condition(o, 'Ready')!.status, 'False');
      assert.match(condition(o, 'Ready')!.message, /schedule 0 3 L \* \* is not a cron expression/);
    } finally {
      await next.stop();
    }
  });

  test('an operator process killed (SIGKILL) mid-run: the next one follows the run it started, and starts no second one', async () => {
    const ns4 = await createNamespace('tj-killed');
    await entries(3, 1, 'datasetProfile');
    const tasksBefore = (await truncationTasks()).length;
    // This operator never polls its task (every 10 min): it is killed with the run started, not followed.
    const first = spawnOperator({
      SVC_GMS_URL: server.url,
      SVC_GMS_TOKEN: ADMIN_TOKEN,
      KUBECONFIG: process.env.KUBECONFIG!,
      SVC_OPERATOR_NAMESPACE: ns4,
      SVC_OPERATOR_POD_NAMESPACE: ns4,
      SVC_OPERATOR_LEADER_ELECTION: 'false',
      SVC_OPERATOR_POLL_SECONDS: '600',
    });
    let started: TruncationJob;
    try {
      await job('killed', { aspect: 'datasetProfile', olderThan: '30d', dryRun: false }, ns4);
      started = await waitJob(ns4, 'killed', 'its task started', (x) => !!x.status?.taskId);
    } finally {
      await first.kill('SIGKILL');
    }
    assert.equal(condition(started, 'Complete')?.reason, 'Running', 'not followed to its end by the killed operator');
    const next = await startTestOperator(server.url, ns4);
    try {
      const o = await waitJob(ns4, 'killed', 'Complete', (x) => condition(x, 'Complete')?.status === 'True');
      assert.equal(o.status!.taskId, started.status!.taskId, 'the same task');
      assert.equal(o.status!.lastRun!.startTime, started.status!.lastRun!.startTime, 'the same run');
      assert.equal(condition(o, 'Complete')!.reason, 'Completed');
      assert.equal((await truncationTasks()).length, tasksBefore + 1, 'one run in all');
    } finally {
      await next.stop();
    }
  });

  test('a status from an operator before lastRun.generation: a spec changed during its run is still run once the run has ended', async () => {
    const ns6 = await createNamespace('tj-upgrade');
    await entries(3, 1, 'datasetProfile');
    const endTimeMillis = Date.now() - 30 * DAY;
    const taskId = await truncationStartedBefore(endTimeMillis);
    const tasksBefore = (await truncationTasks()).length;
    const created = await job('upgraded', { aspect: 'datasetProfile', endTimeMillis, dryRun: false }, ns6);
    // What the earlier operator wrote: its run of generation 1, without lastRun.generation.
    await setStatus(ns6, 'upgraded', { observedGeneration: created.metadata.generation, taskId, counts: { toDelete: 3, total: 99 }, lastRun: { startTime: new Date().toISOString(), endTimeMillis, dryRun: false, message: 'started before the upgrade' } });
    await patchObject(ns6, TJ, 'upgraded', { spec: { dryRun: true } });
    const upgraded = await startTestOperator(server.url, ns6);
    try {
      const o = await waitJob(ns6, 'upgraded', 'the run of generation 2', (x) => x.status?.lastRun?.generation === 2 && condition(x, 'Complete')?.status === 'True');
      assert.equal(condition(o, 'Complete')!.reason, 'DryRun');
      assert.ok((await eventReasons(ns6, 'upgraded')).includes('Completed'), 'the run of generation 1 was followed to its end');
      assert.equal((await truncationTasks()).length, tasksBefore, 'no real run started: generation 2 is a dry run');
    } finally {
      await upgraded.stop();
    }
  });

  test('a spec changed while a run works is run once that run has ended; each run shows its own conditions and lastRun', async () => {
    const ns5 = await createNamespace('tj-regen');
    await entries(3, 1, 'datasetProfile');
    const tasksBefore = (await truncationTasks()).length;
    // This operator never polls its task (every 10 min): the run it starts stays running in status.
    const first = await startTestOperator(server.url, ns5, { SVC_OPERATOR_POLL_SECONDS: '600' });
    let running: TruncationJob;
    try {
      await job('regen', { aspect: 'datasetProfile', olderThan: '30d' }, ns5);
      const dry = await waitJob(ns5, 'regen', 'the dry run', (x) => condition(x, 'Complete')?.status === 'True');
      assert.equal(condition(dry, 'Complete')!.reason, 'DryRun');
      assert.equal(dry.status!.lastRun!.generation, 1);
      await patchObject(ns5, TJ, 'regen', { spec: { dryRun: false } });
      running = await waitJob(ns5, 'regen', 'the real run started', (x) => !!x.status?.taskId && x.status.lastRun?.generation === 2);
      // The dry run's Complete=True does not stay on while the real run works.
      assert.equal(condition(running, 'Complete')!.status, 'False');
      assert.equal(condition(running, 'Complete')!.reason, 'Running');
      assert.equal(running.status!.lastRun!.dryRun, false);
      // Changed while the task works: a dry run with another cut-off.
      await patchObject(ns5, TJ, 'regen', { spec: { dryRun: true, olderThan: '40d' } });
    } finally {
      await first.stop();
    }
    const next = await startTestOperator(server.url, ns5);
    try {
      const o = await waitJob(ns5, 'regen', 'generation 3 run', (x) => x.status?.lastRun?.generation === 3 && condition(x, 'Complete')?.status === 'True');
      assert.equal(condition(o, 'Complete')!.reason, 'DryRun');
      assert.equal(o.status!.lastRun!.dryRun, true);
      assert.ok(o.status!.lastRun!.endTimeMillis! < Date.now() - 39 * DAY, 'the new cut-off');
      assert.ok((await eventReasons(ns5, 'regen')).includes('Completed'), 'the run of generation 2 was followed to its end');
      assert.equal((await truncationTasks()).length, tasksBefore + 1, 'one real run: generation 2');
      // A refused run replaces the last one in status: its time, its message, no counts of the one before.
      await patchObject(ns5, TJ, 'regen', { spec: { aspect: 'noSuchAspect' } });
      const refused = await waitJob(ns5, 'regen', 'refused', (x) => x.status?.lastRun?.generation === 4 && condition(x, 'Failed')?.status === 'True');
      assert.equal(condition(refused, 'Failed')!.reason, 'Rejected');
      assert.equal(condition(refused, 'Complete')!.status, 'False');
      assert.equal(refused.status!.counts, undefined);
      assert.ok(Date.parse(refused.status!.lastRun!.startTime!) > Date.parse(o.status!.lastRun!.startTime!));
      assert.equal(refused.status!.lastRun!.message, condition(refused, 'Failed')!.message);
      assert.doesNotMatch(refused.status!.lastRun!.message!, /^Delete \d+ out of/);
    } finally {
      await next.stop();
    }
  });
});

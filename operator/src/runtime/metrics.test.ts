import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorMetrics } from './metrics.ts';
import { WorkQueue } from './workQueue.ts';

/** The value of the series `name` whose labels include `labels`, from a text exposition; undefined when absent. */
function sample(body: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of body.split('\n')) {
    const m = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('OperatorMetrics', () => {
  it('exposes a work queue under client-go workqueue_* names', async () => {
    const metrics = new OperatorMetrics();
    let t = 1_000_000;
    const queue = new WorkQueue({ name: 'aspects', metrics: metrics.queue('aspects'), now: () => t });
    const q = { name: 'aspects', controller: 'aspects' };

    queue.add('a');
    queue.add('a');
    queue.add('b');
    t += 1500;
    assert.equal(await queue.get(), 'a');
    t += 250;
    queue.done('a');
    assert.equal(await queue.get(), 'b');
    t += 2000;
    queue.addRateLimited('a');
    queue.addAfter('c', 60_000);

    const { contentType, body } = await metrics.expose();
    queue.shutDown();
    assert.match(contentType, /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(body, 'workqueue_adds_total', q), 2, 'the second add of a waiting key is merged');
    assert.equal(sample(body, 'workqueue_depth', q), 0);
    assert.equal(sample(body, 'workqueue_retries_total', q), 2, 'a rate-limited add and an add-after');
    assert.equal(sample(body, 'workqueue_queue_duration_seconds_count', q), 2);
    assert.equal(sample(body, 'workqueue_queue_duration_seconds_sum', q), 1.5 + 1.75);
    assert.equal(sample(body, 'workqueue_queue_duration_seconds_bucket', { ...q, le: '1' }), 0);
    assert.equal(sample(body, 'workqueue_queue_duration_seconds_bucket', { ...q, le: '10' }), 2);
    assert.equal(sample(body, 'workqueue_work_duration_seconds_count', q), 1);
    assert.equal(sample(body, 'workqueue_work_duration_seconds_sum', q), 0.25);
    assert.equal(sample(body, 'workqueue_unfinished_work_seconds', q), 2, 'b has been held 2 s');
    assert.equal(sample(body, 'workqueue_longest_running_processor_seconds', q), 2);
  });

  it('counts a key added while processed in the depth until a worker takes it again', async () => {
    const metrics = new OperatorMetrics();
    const queue = new WorkQueue({ name: 'q', metrics: metrics.queue('q') });
    queue.add('a');
    await queue.get();
    queue.add('a');
    assert.equal(sample((await metrics.expose()).body, 'workqueue_depth', { name: 'q' }), 1);
    queue.done('a');
    await queue.get();
    assert.equal(sample((await metrics.expose()).body, 'workqueue_depth', { name: 'q' }), 0);
    queue.shutDown();
  });

  it('exposes reconciles under controller-runtime names, every result starting at 0', async () => {
    const metrics = new OperatorMetrics();
    const m = metrics.reconcile('structuredproperties');
    const c = { controller: 'structuredproperties' };
    m.setMaxConcurrent(4);
    m.activeWorkers.inc();
    m.activeWorkers.inc();
    m.activeWorkers.dec();
    m.observe('success', 0.02);
    m.observe('error', 0.3);
    m.observe('requeue_after', 0.01);

    const { body } = await metrics.expose();
    assert.equal(sample(body, 'controller_runtime_reconcile_total', { ...c, result: 'success' }), 1);
    assert.equal(sample(body, 'controller_runtime_reconcile_total', { ...c, result: 'error' }), 1);
    assert.equal(sample(body, 'controller_runtime_reconcile_total', { ...c, result: 'requeue_after' }), 1);
    assert.equal(sample(body, 'controller_runtime_reconcile_total', { ...c, result: 'requeue' }), 0);
    assert.equal(sample(body, 'controller_runtime_reconcile_errors_total', c), 1);
    assert.equal(sample(body, 'controller_runtime_reconcile_time_seconds_count', c), 3);
    assert.equal(sample(body, 'controller_runtime_reconcile_time_seconds_bucket', { ...c, le: '0.025' }), 2);
    assert.equal(sample(body, 'controller_runtime_reconcile_time_seconds_bucket', { ...c, le: '60' }), 3);
    assert.equal(sample(body, 'controller_runtime_max_concurrent_reconciles', c), 4);
    assert.equal(sample(body, 'controller_runtime_active_workers', c), 1);
  });

  it('exposes the leader status and the process metrics', async () => {
    const metrics = new OperatorMetrics();
    metrics.setLeader('svc-operator', false);
    assert.equal(sample((await metrics.expose()).body, 'leader_election_master_status', { name: 'svc-operator' }), 0);
    metrics.setLeader('svc-operator', true);
    const { body } = await metrics.expose();
    assert.equal(sample(body, 'leader_election_master_status', { name: 'svc-operator' }), 1);
    assert.ok(sample(body, 'process_cpu_user_seconds_total') !== undefined);
    assert.ok(sample(body, 'nodejs_heap_size_used_bytes') !== undefined);
  });
});

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import { WorkQueue, type WorkQueueOptions } from './workQueue.ts';

/** A clock the test moves by hand. */
function fakeClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

/** Queues made by a test, shut down after it even when it fails, so no timer outlives it. */
const queues: WorkQueue[] = [];
function newQueue(opts: WorkQueueOptions): WorkQueue {
  const queue = new WorkQueue(opts);
  queues.push(queue);
  return queue;
}

/** Waits until `queue.len()` is `n`; fails after `ms` of real time. */
async function untilLen(queue: WorkQueue, n: number, message: string, ms = 1000): Promise<void> {
  const end = Date.now() + ms;
  while (queue.len() !== n) {
    if (Date.now() > end) assert.fail(`${message}: len() is ${queue.len()}, not ${n}`);
    await sleep(1);
  }
}

/** Whether `promise` is still pending after `ms` of real time. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await sleep(ms);
  return !settled;
}

/**
 * Checks the delay `addRateLimited` gives `key` on a fake clock: the key is not ready one ms before
 * `expectedMs`, however long real time runs (timers re-check the clock), and is ready at it.
 */
async function assertRateLimitedDelay(queue: WorkQueue, clock: ReturnType<typeof fakeClock>, key: string, expectedMs: number): Promise<void> {
  queue.addRateLimited(key);
  clock.advance(expectedMs - 1);
  await sleep(expectedMs + 20);
  assert.equal(queue.len(), 0, `${key} was ready before ${expectedMs} ms`);
  clock.advance(1);
  await untilLen(queue, 1, `${key} was not ready at ${expectedMs} ms`);
  assert.equal(await queue.get(), key);
  queue.done(key);
}

describe('WorkQueue', () => {
  afterEach(() => {
    for (const queue of queues.splice(0)) queue.shutDown();
  });

  it('merges adds of a key that is already waiting', async () => {
    const queue = newQueue({ name: 't' });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    assert.equal(queue.len(), 2);
    assert.equal(await queue.get(), 'a');
    assert.equal(await queue.get(), 'b');
    assert.equal(queue.len(), 0);
  });

  it('delivers a key re-added while processing once, after done, and never to two workers at once', async () => {
    const queue = newQueue({ name: 't' });
    queue.add('a');
    const first = await queue.get();
    assert.equal(first, 'a');
    queue.add('a');
    queue.add('a');
    assert.equal(queue.len(), 0, 'a key being processed is not ready');

    const second = queue.get();
    assert.ok(await pendingAfter(second, 30), 'no other worker gets the key while it is processed');
    queue.done('a');
    assert.equal(await second, 'a');
    assert.equal(queue.len(), 0, 'the two adds were merged into one');
    queue.done('a');
    assert.ok(await pendingAfter(queue.get(), 30), 'nothing is left');
  });

  it('lets concurrent workers hold different keys but never the same one', async () => {
    const queue = newQueue({ name: 't' });
    const holding = new Set<string>();
    let overlaps = 0;
    let processed = 0;
    const worker = async () => {
      for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
        if (holding.has(key)) overlaps++;
        holding.add(key);
        await sleep(1);
        if (processed++ < 30) queue.add(key);
        holding.delete(key);
        queue.done(key);
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    for (const key of ['a', 'b', 'c', 'a', 'b']) queue.add(key);
    while (processed < 30) await sleep(5);
    queue.shutDown();
    await Promise.all(workers);
    assert.equal(overlaps, 0);
  });

  it('backs a failing key off exponentially up to the cap, and forget resets it', async () => {
    const clock = fakeClock();
    const queue = newQueue({ name: 't', baseDelayMs: 5, maxDelayMs: 40, now: clock.now });
    for (const [i, delay] of [5, 10, 20, 40, 40].entries()) {
      await assertRateLimitedDelay(queue, clock, 'k', delay);
      assert.equal(queue.numRequeues('k'), i + 1);
    }
    queue.forget('k');
    assert.equal(queue.numRequeues('k'), 0);
    await assertRateLimitedDelay(queue, clock, 'k', 5);
  });

  it('delays rate-limited adds by the token bucket once the burst is spent', async () => {
    const clock = fakeClock();
    const queue = newQueue({ name: 't', baseDelayMs: 0, maxDelayMs: 0, qps: 100, burst: 3, now: clock.now });
    for (const key of ['a', 'b', 'c']) queue.addRateLimited(key);
    assert.equal(queue.len(), 3, 'the burst passes at once');
    for (const key of ['a', 'b', 'c']) assert.equal(await queue.get(), key);
    // The bucket is empty now: the 4th add waits one token (10 ms at 100 qps), the 5th two.
    queue.addRateLimited('d');
    queue.addRateLimited('e');
    clock.advance(9);
    await sleep(30);
    assert.equal(queue.len(), 0, 'd waits for a token');
    clock.advance(1);
    await untilLen(queue, 1, 'd was not ready after one token');
    assert.equal(await queue.get(), 'd');
    clock.advance(9);
    await sleep(30);
    assert.equal(queue.len(), 0, 'e waits for two tokens');
    clock.advance(1);
    await untilLen(queue, 1, 'e was not ready after two tokens');
    assert.equal(await queue.get(), 'e');
    assert.equal(queue.numRequeues('d'), 1);
  });

  it('does not rate-limit plain adds', async () => {
    const clock = fakeClock();
    const queue = newQueue({ name: 't', qps: 1, burst: 1, now: clock.now });
    for (let i = 0; i < 5; i++) queue.add(`k${i}`);
    assert.equal(queue.len(), 5);
    assert.equal(queue.numRequeues('k0'), 0);
  });

  it('hands out delayed keys in the order of their times', async () => {
    const queue = newQueue({ name: 't' });
    queue.addAfter('late', 40);
    queue.addAfter('early', 10);
    queue.addAfter('middle', 25);
    assert.equal(queue.len(), 0, 'delayed keys are not ready');
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ['early', 'middle', 'late']);
  });

  it('keeps the earlier time of a key added after twice, and merges one that comes due while waiting', async () => {
    const clock = fakeClock();
    const queue = newQueue({ name: 't', now: clock.now });
    queue.addAfter('k', 50);
    queue.addAfter('k', 10);
    queue.addAfter('k', 30);
    clock.advance(10);
    await untilLen(queue, 1, 'the earliest time wins');
    assert.equal(await queue.get(), 'k');
    queue.done('k');
    clock.advance(100);
    await sleep(30);
    assert.equal(queue.len(), 0, 'the later times were dropped');

    queue.add('w');
    queue.addAfter('w', 5);
    clock.advance(5);
    await sleep(20);
    assert.equal(queue.len(), 1, 'a key still waiting when its delay ends is not queued twice');
  });

  it('adds a key after a zero delay at once', () => {
    const queue = newQueue({ name: 't' });
    queue.addAfter('k', 0);
    assert.equal(queue.len(), 1);
  });

  it('releases waiting workers on shutDown, drops delayed keys and ignores later adds', async () => {
    const queue = newQueue({ name: 't' });
    const waiting = [queue.get(), queue.get()];
    queue.addAfter('delayed', 10_000);
    queue.shutDown();
    assert.deepEqual(await Promise.all(waiting), [undefined, undefined]);
    queue.add('x');
    queue.addRateLimited('y');
    assert.equal(queue.len(), 0);
    assert.equal(await queue.get(), undefined);
  });

  it('still hands out keys that were ready before shutDown, then ends', async () => {
    const queue = newQueue({ name: 't' });
    queue.add('a');
    queue.shutDown();
    assert.equal(await queue.get(), 'a');
    assert.equal(await queue.get(), undefined);
  });
});

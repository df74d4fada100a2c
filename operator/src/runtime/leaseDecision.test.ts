import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { created, leaseTimings, nextRecord, observe, observedValid, released, renewal, type LeaseRecord } from './leaseDecision.ts';

const T0 = 'then';
const NOW = 'now';
const held = (holderIdentity: string, leaseTransitions = 3): LeaseRecord<string> => ({ holderIdentity, leaseDurationSeconds: 15, acquireTime: T0, renewTime: T0, leaseTransitions });

describe('lease timings', () => {
  test("client-go's defaults, the lease rounded up to whole seconds", () => {
    assert.deepEqual(leaseTimings(), { leaseSeconds: 15, renewDeadlineMs: 10_000, retryMs: 2_000 });
    assert.deepEqual(leaseTimings(4.2, 3, 0.5), { leaseSeconds: 5, renewDeadlineMs: 3_000, retryMs: 500 });
  });

  test('a leader must give up before another may take over, and get several tries before its deadline', () => {
    assert.deepEqual(leaseTimings(10, 10, 2), { violations: ['leaseDurationSeconds (10) must be greater than renewDeadlineSeconds (10)'] });
    assert.deepEqual(leaseTimings(15, 2.4, 2), { violations: ['renewDeadlineSeconds (2.4) must be greater than 1.2 × retryPeriodSeconds (2)'] });
    const zero = leaseTimings(15, 10, 0);
    assert.ok('violations' in zero && zero.violations[0] === 'retryPeriodSeconds must be greater than 0, got 0');
  });
});

describe('when a Lease counts as expired', () => {
  test("by this replica's clock, from when it saw the record change", () => {
    const seen = observe(undefined, held('other'), 'r1', 1_000);
    assert.equal(observedValid(seen, 15_999), true);
    assert.equal(observedValid(seen, 16_000), false);
    assert.equal(observedValid(undefined, 0), false);
  });

  test('the same record read again does not restart the count; a changed one does', () => {
    const seen = observe(undefined, held('other'), 'r1', 1_000);
    assert.equal(observe(seen, held('other'), 'r1', 9_000), seen);
    assert.deepEqual(observe(seen, held('other', 4), 'r2', 9_000), { record: held('other', 4), at: 9_000, raw: 'r2' });
  });
});

describe('what a replica writes after reading the Lease', () => {
  test('nothing while another holds it and it has not expired', () => {
    const seen = observe(undefined, held('other'), 'r1', 0);
    assert.equal(nextRecord(held('other'), seen, 'me', 15, 14_999, NOW), undefined);
  });

  test('takes an expired or free Lease with one more transition', () => {
    const seen = observe(undefined, held('other'), 'r1', 0);
    const taken = { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: NOW, renewTime: NOW, leaseTransitions: 4 };
    assert.deepEqual(nextRecord(held('other'), seen, 'me', 15, 15_000, NOW), taken);
    assert.deepEqual(nextRecord(held(''), observe(undefined, held(''), 'r0', 0), 'me', 15, 1, NOW), taken);
  });

  test('renews its own Lease keeping when it was acquired and the transitions', () => {
    const mine = held('me');
    const seen = observe(undefined, mine, 'r1', 0);
    const renewed = { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: T0, renewTime: NOW, leaseTransitions: 3 };
    assert.deepEqual(nextRecord(mine, seen, 'me', 15, 1, NOW), renewed);
    assert.deepEqual(renewal(mine, 'me', 15, NOW), renewed);
  });

  test('creates a missing Lease with no transitions, and releases one keeping its transitions', () => {
    assert.deepEqual(created('me', 15, NOW), { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: NOW, renewTime: NOW, leaseTransitions: 0 });
    assert.deepEqual(released(held('me'), NOW), { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: NOW, renewTime: NOW, leaseTransitions: 3 });
  });
});

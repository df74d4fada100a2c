import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setCondition } from './conditions.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:05:00Z');

test('lastTransitionTime moves only when the status flips', () => {
  const first = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'ServerUnavailable', message: 'down' }, t0);
  assert.equal(first[0]!.lastTransitionTime, t0.toISOString());
  const sameStatus = setCondition(first, { type: 'Ready', status: 'False', reason: 'BreakingChangeRejected', message: 'no' }, t1);
  assert.equal(sameStatus[0]!.lastTransitionTime, t0.toISOString(), 'same status: the time stays');
  assert.equal(sameStatus[0]!.reason, 'BreakingChangeRejected', 'the reason follows');
  const flipped = setCondition(sameStatus, { type: 'Ready', status: 'True', reason: 'Synced', message: 'ok' }, t1);
  assert.equal(flipped[0]!.lastTransitionTime, t1.toISOString());
});

test('other conditions are kept, and an empty message is filled so the CRD accepts it', () => {
  const two = setCondition(setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Synced', message: 'ok' }, t0), { type: 'Synced', status: 'True', reason: 'Updated', message: '' }, t1);
  assert.deepEqual(two.map((c) => c.type), ['Ready', 'Synced']);
  assert.equal(two[1]!.message, 'Updated');
});

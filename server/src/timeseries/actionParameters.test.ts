import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../shared/errors.ts';
import { readParameters } from './actionParameters.ts';

const SPECS = { nodeId: { kind: 'string' }, taskId: { kind: 'long' }, task: { kind: 'string' }, timeout: { kind: 'long', minimum: 1 }, size: { kind: 'int' }, at: { kind: 'time' } } as const;

function problems(body: unknown): string[] {
  try {
    readParameters('anAction', SPECS, body);
  } catch (e) {
    assert.ok(e instanceof SvcError && e.code === 'VALIDATION');
    return e.violations;
  }
  throw new Error('accepted');
}

test('returns the parameters given, leaving out absent and null ones', () => {
  assert.deepEqual(readParameters('anAction', SPECS, { task: 'svc:3', nodeId: null }), { task: 'svc:3' });
  assert.deepEqual(readParameters('anAction', SPECS, {}), {});
});

test('names every mistyped, unknown or too small parameter at once', () => {
  assert.deepEqual(problems({ nodeId: 5, taskId: '3', task: 123, foo: 1, timeout: 0 }), [
    "Parameter 'foo' is not a parameter of anAction (they are nodeId, taskId, task, timeout, size, at)",
    "Parameter 'nodeId' must be a string (not empty), got 5",
    "Parameter 'taskId' must be an integer, got \"3\"",
    "Parameter 'task' must be a string (not empty), got 123",
    "Parameter 'timeout' must be an integer of at least 1, got 0",
  ]);
  assert.deepEqual(problems({ task: '' }), ["Parameter 'task' must be a string (not empty), got \"\""]);
  assert.deepEqual(problems({ taskId: 1.5 }), ["Parameter 'taskId' must be an integer, got 1.5"]);
});

test('a body that is not an object is refused, listing the parameters', () => {
  for (const body of [[], 'x', 3, null]) assert.deepEqual(problems(body), ['The body must be a JSON object of the parameters of anAction (nodeId, taskId, task, timeout, size, at)']);
});

test('an int is a Java int: 32 bits', () => {
  assert.deepEqual(readParameters('anAction', SPECS, { size: 2 ** 31 - 1 }), { size: 2 ** 31 - 1 });
  assert.deepEqual(readParameters('anAction', SPECS, { size: -(2 ** 31) }), { size: -(2 ** 31) });
  for (const size of [2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER]) {
    assert.deepEqual(problems({ size }), [`Parameter 'size' must be an integer from -2147483648 to 2147483647, got ${size}`]);
  }
  assert.deepEqual(readParameters('anAction', SPECS, { taskId: 2 ** 31 }), { taskId: 2 ** 31 });
});

test('a time is a Java long of epoch milliseconds: one beyond 2^53, written as a decimal, selects as the furthest time stored', () => {
  assert.deepEqual(readParameters('anAction', SPECS, { at: 1_700_000_000_000 }), { at: 1_700_000_000_000 });
  assert.deepEqual(readParameters('anAction', SPECS, { at: 9.223372036854776e18 }), { at: Number.MAX_SAFE_INTEGER });
  assert.deepEqual(readParameters('anAction', SPECS, { at: -9.223372036854776e18 }), { at: -Number.MAX_SAFE_INTEGER });
  for (const at of [1e19, 1.5, '1700', 'now']) {
    assert.deepEqual(problems({ at }), [`Parameter 'at' must be an integer of epoch milliseconds (a long), got ${JSON.stringify(at)}`]);
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecentCache } from './recentCache.ts';

test('holds at most its bound, the most recently used first kept', () => {
  const c = new RecentCache<number>(10);
  for (let i = 0; i < 100; i++) c.set(`k${i}`, i);
  assert.ok(c.size <= 10, `${c.size} entries`);
  assert.equal(c.get('k99'), 99);
  assert.equal(c.get('k0'), undefined);
});

test('an entry used again survives the generation that would drop it; one only peeked at does not', () => {
  const c = new RecentCache<number>(10);
  for (let i = 0; i < 5; i++) c.set(`k${i}`, i);
  c.set('k5', 5); // the first five are the older generation now
  assert.equal(c.get('k0'), 0);
  assert.equal(c.peek('k1'), 1);
  for (let i = 6; i < 10; i++) c.set(`k${i}`, i); // the older generation is dropped
  assert.equal(c.get('k0'), 0);
  assert.equal(c.has('k1'), false);
});

test('the bound is counted by the weight of the values when given', () => {
  const c = new RecentCache<string>(100, (v) => v.length);
  for (let i = 0; i < 20; i++) c.set(`k${i}`, 'x'.repeat(20));
  assert.ok(c.size <= 5, `${c.size} values of 20 within 100`);
  c.set('k19', 'y'); // replacing a value counts its new weight only
  c.delete('k18');
  assert.equal(c.has('k18'), false);
  assert.equal(c.get('k19'), 'y');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeptReads, type KeptRead } from './keptReads.ts';

const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.kept,PROD)';
const read = (text: string): KeptRead => ({ token: `${text} {}`, text, previous: undefined, state: { text } });

test('what a write left is taken back by the next write of the same aspect, and by no other', () => {
  const kept = new KeptReads();
  kept.keep(URN, 'structuredProperties', read('{"properties":[]}'));
  assert.equal(kept.take(URN, 'structuredProperties')?.text, '{"properties":[]}');
  assert.equal(kept.take(URN, 'status'), undefined);
  assert.equal(kept.take('urn:li:dataset:(urn:li:dataPlatform:hive,db.other,PROD)', 'structuredProperties'), undefined);
});

test('the least recently used rows go first once the kept text exceeds the bound', () => {
  // Each row counts its token, 6 characters ("aaa {}"): two fit in 12, a third evicts the oldest.
  const kept = new KeptReads(12);
  kept.keep('urn:a', 'x', read('aaa'));
  kept.keep('urn:b', 'x', read('bbb'));
  kept.take('urn:a', 'x'); // a is now the most recently used
  kept.keep('urn:c', 'x', read('ccc'));
  assert.equal(kept.take('urn:b', 'x'), undefined);
  assert.equal(kept.take('urn:a', 'x')?.text, 'aaa');
  assert.equal(kept.take('urn:c', 'x')?.text, 'ccc');
  assert.equal(kept.size, 2);
});

test('an aspect another writer changed is not kept again until it is forgotten', () => {
  const kept = new KeptReads();
  kept.keep(URN, 'structuredProperties', read('{"v":1}'));
  kept.contended(URN, 'structuredProperties');
  assert.equal(kept.take(URN, 'structuredProperties'), undefined);
  // A later write of this server does not make it kept again: the other writer may write again.
  kept.keep(URN, 'structuredProperties', read('{"v":2}'));
  assert.equal(kept.take(URN, 'structuredProperties'), undefined);
  // A delete of the entity forgets it, mark included: what follows starts anew.
  kept.forget(URN, 'structuredProperties');
  kept.keep(URN, 'structuredProperties', read('{"v":3}'));
  assert.equal(kept.take(URN, 'structuredProperties')?.text, '{"v":3}');
});

test('marks of contended aspects count against the bound, so they cannot grow without end', () => {
  const kept = new KeptReads(200);
  for (let i = 0; i < 100; i++) kept.contended(`urn:${i}`, 'x');
  assert.ok(kept.size <= 4, `kept ${kept.size} marks within 200 characters`);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { variablesProblems } from './variablesShape.ts';
import { normalise } from './stringFlags.ts';

const limits = { listItems: 5, variablesDepth: 4, reportedViolations: 3 };

test('a prototype key is refused at any level, named with the path to it', () => {
  const variables = JSON.parse('{"i": {"a": [{"b": 1, "__proto__": {"x": 1}}], "constructor": 1}, "prototype": 2}') as Record<string, unknown>;
  assert.deepEqual(variablesProblems(variables, limits), [
    'The variables hold a key "prototype": it names an object\'s prototype, never a variable, and is refused',
    'Variable "$i" got invalid value at "i.constructor"; the key "constructor" names an object\'s prototype, never an input field, and is refused',
    'Variable "$i" got invalid value at "i.a[0].__proto__"; the key "__proto__" names an object\'s prototype, never an input field, and is refused',
  ]);
  assert.deepEqual(variablesProblems({ i: { a: [{ b: 'constructor', c: '__proto__' }] } }, limits), [], 'as values they are text like any other');
});

test('nesting deeper than the limit is refused once, where it passes the limit; many problems are cut at the limit', () => {
  assert.deepEqual(variablesProblems({ i: [[[1]]] }, limits), []);
  assert.deepEqual(variablesProblems({ i: [[[[[[1]]]]]] }, limits), ['Variable "$i" got invalid value at "i[0][0][0][0]"; it nests deeper than 4 levels of objects and lists']);
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { a: deep };
  assert.equal(variablesProblems({ i: deep }, { listItems: 5, variablesDepth: 64, reportedViolations: 20 }).length, 1);
  const many = JSON.parse(`{"i": [${Array.from({ length: 5 }, () => '{"__proto__": 1}').join(',')}]}`) as Record<string, unknown>;
  assert.equal(variablesProblems(many, limits).length, 3);
});

test('a list longer than the limit is refused without walking its items', () => {
  assert.deepEqual(variablesProblems({ i: { a: [1, 2, 3, 4, 5] } }, limits), []);
  const long = JSON.parse(`{"i": {"a": [${Array.from({ length: 100_000 }, () => '{"__proto__": 1}').join(',')}]}}`) as Record<string, unknown>;
  assert.deepEqual(variablesProblems(long, limits), ['Variable "$i" got invalid value at "i.a"; a list may hold at most 5 items, got 100000']);
});

test('copying variables keeps a __proto__ key an own key and leaves prototypes alone', () => {
  const variables = JSON.parse('{"i": {"id": "p", "__proto__": {"immutable": true}}, "f": {"field": "a", "negated": "TRUE"}}') as Record<string, unknown>;
  const copy = normalise(variables) as Record<string, Record<string, unknown>>;
  assert.equal(Object.getPrototypeOf(copy.i), Object.prototype);
  assert.equal(copy.i!.immutable, undefined);
  assert.deepEqual(Object.keys(copy.i!), ['id', '__proto__']);
  assert.equal(copy.f!.negated, true);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonProblems, MAX_JSON_DEPTH, stringProblem } from './inputRules.ts';

const problems = (text: string) => jsonProblems(JSON.parse(text), text);

test('a string may hold any valid Unicode but U+0000', () => {
  assert.equal(stringProblem('plain, ünïcödé, 😀, \u0001\t\u007f'), undefined);
  assert.match(stringProblem('a\u0000b')!, /NUL character \(U\+0000\)/);
  for (const lone of ['\ud800', 'a\udc00', '\udc00\ud800']) assert.match(stringProblem(lone)!, /lone UTF-16 surrogate/);
});

test('a body is refused naming where each problem is, field names included', () => {
  assert.deepEqual(problems('{"value":{"a":["ok","x\\u0000"],"b\\ud800":1}}'), [
    'body.value.a[1]: the string contains the NUL character (U+0000), which svc does not store',
    'body.value: a field name contains a lone UTF-16 surrogate, which is not valid Unicode',
  ]);
  assert.deepEqual(problems('{"value":{"description":"fine","n":1.5,"ok":[true,null]}}'), []);
});

test('numbers must be finite, and integers written as such must be exact', () => {
  assert.deepEqual(problems('{"n":1e400}'), ['body.n: the number is out of range (at most about 1.8e308)']);
  // An integer too long for a double is reported once, where it is (it was reported a second time for the whole body).
  assert.deepEqual(problems(`{"n":${'1'.repeat(400)}}`), ['body.n: the number is out of range (at most about 1.8e308)']);
  assert.match(problems('[9007199254740993]')[0]!, /^body: the integer 9007199254740993 is beyond ±9007199254740991 .* \(9\.007199254740992e\+15\)/);
  assert.equal(problems('[-9007199254740993]').length, 1);
  // Exact integers, decimals (rounding is what a decimal means), and digits inside strings are fine.
  assert.deepEqual(problems('[9007199254740991, -9007199254740991, 0.12345678901234567890123, 1.5e300, "12345678901234567890"]'), []);
  // A key repeated with another value (which JSON.parse takes) does not hide the numbers before it.
  assert.equal(problems('{"a":9007199254740993,"b":1,"b":2}').length, 1);
});

test(`nesting is bounded at ${MAX_JSON_DEPTH} levels, and the message stays short`, () => {
  const nest = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  assert.deepEqual(problems(nest(MAX_JSON_DEPTH)), []);
  const [deep] = problems(`{"x":${'{"aaaaaaaa":'.repeat(200)}1${'}'.repeat(200)}}`);
  assert.match(deep!, /nested deeper than 64 levels/);
  assert.ok(deep!.length < 200, deep);
  assert.equal(problems(nest(MAX_JSON_DEPTH + 1)).length, 1);
});

test('at most 20 problems are reported', () => {
  const many = JSON.stringify(Array.from({ length: 100 }, () => '\u0000'));
  assert.equal(problems(many).length, 20);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filtersExpr, parseQuery } from './expr.ts';
import { SvcError } from '../errors.ts';

const t = (field: string, ...values: string[]) => ({ kind: 'terms', field, values });

test('query strings: terms, implicit OR, AND before OR, NOT, + and -', () => {
  assert.deepEqual(parseQuery('*'), { kind: 'all' });
  assert.deepEqual(parseQuery('a:1 b:2'), { kind: 'or', of: [t('a', '1'), t('b', '2')] });
  assert.deepEqual(parseQuery('a:1 AND b:2 OR c:3'), { kind: 'or', of: [{ kind: 'and', of: [t('a', '1'), t('b', '2')] }, t('c', '3')] });
  assert.deepEqual(parseQuery('a:1 AND NOT b:2'), { kind: 'and', of: [t('a', '1'), { kind: 'not', of: t('b', '2') }] });
  assert.deepEqual(parseQuery('a:1 -b:2'), { kind: 'and', of: [{ kind: 'not', of: t('b', '2') }, t('a', '1')] });
  assert.deepEqual(parseQuery('+a:1 b:2'), t('a', '1'), 'with a required clause, optional ones do not filter');
  assert.deepEqual(parseQuery('a:(x OR y)'), { kind: 'or', of: [t('a', 'x'), t('a', 'y')] });
  assert.deepEqual(parseQuery('foo'), t('<default>', 'foo'));
});

test('query strings: ranges, exists, wildcards, quoting and escapes', () => {
  assert.deepEqual(parseQuery('a:>45'), { kind: 'range', field: 'a', min: { value: '45', inclusive: false } });
  assert.deepEqual(parseQuery('a:<=45'), { kind: 'range', field: 'a', max: { value: '45', inclusive: true } });
  assert.deepEqual(parseQuery('a:[1 TO 5}'), { kind: 'range', field: 'a', min: { value: '1', inclusive: true }, max: { value: '5', inclusive: false } });
  assert.deepEqual(parseQuery('a:{* TO 5]'), { kind: 'range', field: 'a', max: { value: '5', inclusive: true } });
  assert.deepEqual(parseQuery('_exists_:s.x'), { kind: 'exists', field: 's.x' });
  assert.deepEqual(parseQuery('a:*'), { kind: 'exists', field: 'a' });
  assert.deepEqual(parseQuery('a:go?d*'), { kind: 'wildcard', field: 'a', pattern: ['go', { wildcard: '?' }, 'd', { wildcard: '*' }] });
  assert.deepEqual(parseQuery('a:x\\*y'), t('a', 'x*y'), 'an escaped * is a literal');
  assert.deepEqual(parseQuery('a:"x y*"'), t('a', 'x y*'), 'quoted values are literal');
});

test('query strings that cannot be served are 400s saying what is supported', () => {
  for (const q of ['a:/x/', 'a:x~', 'a:"x y"~2', 'a:(']) {
    assert.throws(
      () => parseQuery(q),
      (e: unknown) => e instanceof SvcError && e.code === 'VALIDATION' && /supported: field:value/.test(e.violations[0]!),
      q,
    );
  }
});

test('filters: every condition, negated, OR of ANDs; bad criteria are named', () => {
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', values: ['a', 'b'] }] }]), t('f', 'a', 'b'));
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', condition: 'EXISTS', negated: true }] }]), { kind: 'not', of: { kind: 'exists', field: 'f' } });
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', condition: 'CONTAIN', values: ['x'] }] }]), { kind: 'wildcard', field: 'f', pattern: [{ wildcard: '*' }, 'x', { wildcard: '*' }] });
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', condition: 'GREATER_THAN', values: ['4'] }] }, { and: [{ field: 'g', condition: 'END_WITH', values: ['z'] }] }]), {
    kind: 'or',
    of: [
      { kind: 'range', field: 'f', min: { value: '4', inclusive: false } },
      { kind: 'wildcard', field: 'g', pattern: [{ wildcard: '*' }, 'z'] },
    ],
  });
  assert.throws(
    () => filtersExpr([{ and: [{ field: 'f', condition: 'GREATER_THAN', values: [] }, { field: 'g', condition: 'EQUAL' }] }]),
    (e: unknown) => e instanceof SvcError && e.violations.length === 2 && /orFilters\[0\]\.and\[0\]: GREATER_THAN takes exactly one value/.test(e.violations[0]!),
  );
});

test('an operator with no clause on one side is refused; escaped characters and phrases are text, not operators', () => {
  for (const [q, message] of [
    ['name:x OR', 'OR needs a clause after it'],
    ['name:(x AND)', 'AND needs a clause after it'],
    ['OR name:x', 'OR needs a clause before it'],
  ] as const) {
    assert.throws(() => parseQuery(q), (e: unknown) => e instanceof SvcError && e.message.includes(message), q);
  }
  assert.deepEqual(parseQuery('name:a\\ OR'), { kind: 'terms', field: 'name', values: ['a OR'] });
  assert.deepEqual(parseQuery('name:"a \\" OR"'), { kind: 'terms', field: 'name', values: ['a " OR'] });
  assert.equal(parseQuery('name:\\( OR name:\\)').kind, 'or');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Violations } from '../../shared/errors.ts';
import { allowedValues, orFilters, searchOrder, typedValues } from './inputs.ts';
import { GRAPHQL_INPUT_LIMITS } from './limits.ts';

test('values hold exactly one of stringValue and numberValue; every bad one is named', () => {
  const v = new Violations();
  assert.deepEqual(typedValues([{ stringValue: 'a' }, { numberValue: 2 }, {}, { stringValue: 'x', numberValue: 1 }], 'values', v), [{ string: 'a' }, { double: 2 }]);
  assert.deepEqual(v.items, ['values[2]: each value must provide exactly one of stringValue or numberValue', 'values[3]: each value must provide exactly one of stringValue or numberValue']);
});

test('an allowed value keeps its description only when given', () => {
  const v = new Violations();
  assert.deepEqual(allowedValues([{ numberValue: 30, description: 'a month' }, { stringValue: 'x', description: null }], 'allowedValues', v), [
    { value: { double: 30 }, description: 'a month' },
    { value: { string: 'x' } },
  ]);
  assert.equal(allowedValues(null, 'allowedValues', v), undefined);
  assert.ok(v.empty);
});

test('filters: values or the deprecated value; IS_NULL as a negated EXISTS; empty as none', () => {
  assert.deepEqual(orFilters([{ and: [{ field: 'a', value: 'x' }, { field: 'b', condition: 'IS_NULL' }, { field: 'c', condition: 'IS_NULL', negated: true }, { field: 'd', values: ['1', '2'], condition: 'IN', negated: true }] }]), [
    {
      and: [
        { field: 'a', condition: undefined, values: ['x'], negated: false },
        { field: 'b', condition: 'EXISTS', values: undefined, negated: true },
        { field: 'c', condition: 'EXISTS', values: undefined, negated: false },
        { field: 'd', condition: 'IN', values: ['1', '2'], negated: true },
      ],
    },
  ]);
  assert.equal(orFilters([]), undefined);
  assert.equal(orFilters(null), undefined);
});

test('filters hold a bounded number of conditions and values in all, counted across groups', () => {
  const { filterConditions, filterValues } = GRAPHQL_INPUT_LIMITS;
  const group = (conditions: number, values: number) => ({ and: Array.from({ length: conditions }, () => ({ field: 'a', values: Array.from({ length: values }, () => 'x') })) });
  assert.equal(orFilters([group(filterConditions / 2, 1), group(filterConditions / 2, 1)])?.length, 2);
  assert.throws(() => orFilters([group(filterConditions / 2, 1), group(filterConditions / 2 + 1, 1)]), { message: `orFilters: at most ${filterConditions} conditions in all, got ${filterConditions + 1}` });
  assert.throws(() => orFilters([group(1, filterValues), group(1, 1)]), { message: `orFilters: at most ${filterValues} values in all, got ${filterValues + 1}` });
});

test('results are sorted by one field, then by urn', () => {
  assert.deepEqual(searchOrder(null), { sortField: 'urn', descending: false });
  assert.deepEqual(searchOrder({ sortCriterion: { field: 'urn', sortOrder: 'DESCENDING' } }), { sortField: 'urn', descending: true });
  assert.deepEqual(searchOrder({ sortCriteria: [{ field: 'lastModifiedAt', sortOrder: 'ASCENDING' }, { field: 'urn', sortOrder: 'ASCENDING' }] }), { sortField: 'lastModifiedAt', descending: false });
  assert.throws(() => searchOrder({ sortCriteria: [{ field: 'created', sortOrder: 'ASCENDING' }, { field: 'name', sortOrder: 'ASCENDING' }] }), /sorted by one field, then by urn; not also by "name"/);
});

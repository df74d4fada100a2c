import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../shared/errors.ts';
import { eventFilter, MAX_FILTER_CRITERIA } from './eventFilter.ts';

const checkpoint = (pipelineName: string) => ({ timestampMillis: 1, pipelineName, platformInstanceId: '', config: '', state: { formatVersion: '1.0', serde: 'utf-8' }, runId: 'r1' });

test('a pipeline\'s checkpoints, as stateful ingestion asks for them ({"or": [{"and": [criteria]}]})', () => {
  const matches = eventFilter({ or: [{ and: [{ field: 'pipelineName', values: ['p1'], condition: 'EQUAL' }] }] })!;
  assert.equal(matches(checkpoint('p1')), true);
  assert.equal(matches(checkpoint('p2')), false);
});

test('the older form ({"criteria": [...]}, value), negation, nested fields, arrays, numbers as text, and either conjunction', () => {
  assert.equal(eventFilter({ criteria: [{ field: 'pipelineName', value: 'p1' }] })!(checkpoint('p1')), true);
  assert.equal(eventFilter({ or: [{ and: [{ field: 'pipelineName', values: ['p1'], negated: true }] }] })!(checkpoint('p1')), false);
  assert.equal(eventFilter({ or: [{ and: [{ field: 'state.serde', values: ['utf-8'] }] }] })!(checkpoint('p1')), true);
  assert.equal(eventFilter({ or: [{ and: [{ field: 'fieldProfiles.fieldPath', values: ['b'] }] }] })!({ fieldProfiles: [{ fieldPath: 'a' }, { fieldPath: 'b' }] }), true);
  assert.equal(eventFilter({ or: [{ and: [{ field: 'rowCount', values: ['42'] }] }] })!({ rowCount: 42 }), true);
  const either = eventFilter({ or: [{ and: [{ field: 'pipelineName', values: ['p2'] }] }, { and: [{ field: 'runId', values: ['r1'] }] }] })!;
  assert.equal(either(checkpoint('p1')), true);
  // A field the value lacks holds no value.
  assert.equal(eventFilter({ or: [{ and: [{ field: 'missing', values: ['x'] }] }] })!(checkpoint('p1')), false);
});

test('no filter, or one without criteria, filters nothing', () => {
  assert.equal(eventFilter(undefined), undefined);
  assert.equal(eventFilter(null), undefined);
  assert.equal(eventFilter({ or: [] }), undefined);
});

test('a malformed filter is refused naming each part, an unsupported condition and too many criteria too', () => {
  assert.throws(
    () => eventFilter({ or: [{ and: [{ values: ['x'] }, { field: 'a', values: [], condition: 'CONTAIN' }] }, { nope: 1 }] }),
    (e: unknown) =>
      e instanceof SvcError &&
      /filter\.or\[0\]\.and\[0\]\.field/.test(e.message) &&
      /filter\.or\[0\]\.and\[1\]\.values/.test(e.message) &&
      /condition "CONTAIN" is not supported/.test(e.message) &&
      /filter\.or\[1\] must be/.test(e.message),
  );
  assert.throws(() => eventFilter('pipelineName=p1'), SvcError);
  const many = Array.from({ length: MAX_FILTER_CRITERIA + 1 }, () => ({ field: 'a', values: ['b'] }));
  assert.throws(() => eventFilter({ or: [{ and: many }] }), (e: unknown) => e instanceof SvcError && /at most 100 criteria/.test(e.message));
});

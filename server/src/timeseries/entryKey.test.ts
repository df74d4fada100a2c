import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entryKey } from './entryKey.ts';

const INDEX = 'dataset_datasetprofileaspect_v1';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)';
const T = 1_700_000_000_000;
const base = { timestampMillis: T, eventGranularity: { unit: 'DAY', multiple: 1 }, partitionSpec: { partition: 'FULL_TABLE_SNAPSHOT', type: 'FULL_TABLE' }, rowCount: 1 };
const key = (value: Record<string, unknown>, index = INDEX, urn = URN) => entryKey(index, urn, value);

test('is a uuid', () => {
  assert.match(key(base), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});

test('the same entry whatever else the value holds, the order of its keys and the partition type', () => {
  assert.equal(key({ ...base, rowCount: 2, columnCount: 3 }), key(base));
  assert.equal(key({ rowCount: 1, partitionSpec: { type: 'FULL_TABLE', partition: 'FULL_TABLE_SNAPSHOT' }, eventGranularity: { multiple: 1, unit: 'DAY' }, timestampMillis: T }), key(base));
  assert.equal(key({ ...base, partitionSpec: { partition: 'FULL_TABLE_SNAPSHOT', type: 'QUERY' } }), key(base));
  assert.equal(key({ timestampMillis: T, messageId: null, eventGranularity: null }), key({ timestampMillis: T }));
});

test('another entry for another index, entity, time, granularity, partition, time partition or message id', () => {
  const keys = [
    key(base),
    key(base, 'dataset_datasetusagestatisticsaspect_v1'),
    key(base, INDEX, 'urn:li:dataset:(urn:li:dataPlatform:hive,db.u,PROD)'),
    key({ ...base, timestampMillis: T + 1 }),
    key({ ...base, eventGranularity: { unit: 'HOUR', multiple: 1 } }),
    key({ ...base, eventGranularity: { unit: 'DAY' } }),
    key({ ...base, eventGranularity: undefined }),
    key({ ...base, partitionSpec: { partition: 'p=2' } }),
    key({ ...base, partitionSpec: { timePartition: { startTimeMillis: T, durationMillis: 3_600_000 } } }),
    key({ ...base, partitionSpec: undefined }),
    key({ ...base, messageId: 'm1' }),
  ];
  assert.equal(new Set(keys).size, keys.length);
});

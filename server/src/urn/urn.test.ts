import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatUrn, parseUrn } from './urn.ts';
import { SvcError } from '../errors.ts';

test('parses a plain id', () => {
  const u = parseUrn('urn:li:structuredProperty:io.acryl.privacy.retentionTime');
  assert.equal(u.entityType, 'structuredProperty');
  assert.deepEqual(u.parts, ['io.acryl.privacy.retentionTime']);
});

test('parses a tuple id with a nested urn', () => {
  const u = parseUrn('urn:li:dataset:(urn:li:dataPlatform:hive,db.table,PROD)');
  assert.deepEqual(u.parts, ['urn:li:dataPlatform:hive', 'db.table', 'PROD']);
});

test('parses nested tuples with parentheses and commas inside parts', () => {
  const u = parseUrn('urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD),a.b)');
  assert.deepEqual(u.parts, ['urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)', 'a.b']);
  const job = parseUrn('urn:li:dataJob:(urn:li:dataFlow:(airflow,flow,prod),job_1)');
  assert.deepEqual(job.parts, ['urn:li:dataFlow:(airflow,flow,prod)', 'job_1']);
});

test('round-trips through formatUrn', () => {
  const raw = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.table,PROD)';
  const u = parseUrn(raw);
  assert.equal(formatUrn(u.entityType, u.parts), raw);
});

for (const bad of ['', 'urn:li:', 'urn:li:dataset', 'urn:li:dataset:', 'foo:li:x:y', 'urn:li:dataset:(a,b', 'urn:li:dataset:(a,,b)', 'urn:li:tag:a)b', 'urn:li:1x:y']) {
  test(`rejects ${JSON.stringify(bad)} with Invalid urn!`, () => {
    assert.throws(() => parseUrn(bad), (e: unknown) => e instanceof SvcError && e.code === 'INVALID_URN' && e.message === `Invalid urn!: ${bad}`);
  });
}

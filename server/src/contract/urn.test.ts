import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatUrn, parseUrn, urlEncodedLength } from './urn.ts';
import { SvcError } from './errors.ts';

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

test('a URN is at most 512 bytes URL-encoded, counting each encoded byte as three (a schemaField URN 2048)', () => {
  const prefix = 'urn:li:tag:';
  const at = (n: number, c = 'a') => `${prefix}${c.repeat(n)}`;
  assert.equal(urlEncodedLength(at(495)), 512); // the prefix is 8 letters and 3 colons (encoded: 3 bytes each)
  assert.doesNotThrow(() => parseUrn(at(495)));
  assert.throws(() => parseUrn(at(496)), (e: SvcError) => e.code === 'VALIDATION' && /longer than 512 bytes \(when URL encoded\): this one is 513 bytes/.test(e.message));
  // "é" is two UTF-8 bytes, six encoded.
  assert.equal(urlEncodedLength('é'), 6);
  assert.throws(() => parseUrn(at(100, 'é')), (e: SvcError) => e.code === 'VALIDATION');
  const field = `urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD),${'f'.repeat(1500)})`;
  assert.doesNotThrow(() => parseUrn(field));
  assert.throws(() => parseUrn(`urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD),${'f'.repeat(2100)})`), (e: SvcError) => e.code === 'VALIDATION');
});

test('control characters, invalid Unicode and surrounding whitespace make a URN invalid', () => {
  for (const bad of ['urn:li:tag:a\u0000b', 'urn:li:tag:a\u007fb', 'urn:li:tag:a\nb', 'urn:li:tag:a\ud800', ' urn:li:tag:a', 'urn:li:tag:a ']) {
    assert.throws(() => parseUrn(bad), (e: SvcError) => e.code === 'INVALID_URN', JSON.stringify(bad));
  }
  assert.equal(parseUrn('urn:li:tag:a b').id, 'a b');
});

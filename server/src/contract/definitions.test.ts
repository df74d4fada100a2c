import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeDataType } from './definitions.ts';

test('a known data type is read in any case, with or without a namespace or the URN prefix', () => {
  for (const input of ['number', 'NUMBER', 'svc.number', 'svc.NUMBER', 'datahub.Number', 'urn:li:dataType:number', 'urn:li:dataType:svc.NUMBER', 'urn:li:dataType:datahub.number']) {
    assert.equal(normalizeDataType(input), 'urn:li:dataType:svc.number', input);
  }
});

test('an unknown data type is kept as given, so that the rules name it', () => {
  assert.equal(normalizeDataType('svc.decimal'), 'urn:li:dataType:svc.decimal');
  assert.equal(normalizeDataType('decimal'), 'decimal');
  assert.equal(normalizeDataType('urn:li:dataType:other.number'), 'urn:li:dataType:other.number');
  assert.equal(normalizeDataType('urn:li:corpuser:x'), 'urn:li:corpuser:x');
});

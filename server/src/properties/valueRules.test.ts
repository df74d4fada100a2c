import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAssignments, checkImmutable, checkValueType, type PropertyState } from './valueRules.ts';
import type { Assignment, PropertyDefinition } from './types.ts';

const DATASET = 'urn:li:entityType:svc.dataset';
const P = 'urn:li:structuredProperty:p';
const S = 'Property: x';

describe('checkValueType', () => {
  test('a number property takes doubles and numeric strings', () => {
    assert.equal(checkValueType(S, 'urn:li:dataType:svc.number', { double: 30 }, undefined), undefined);
    assert.equal(checkValueType(S, 'urn:li:dataType:svc.number', { string: '30' }, undefined), undefined);
    assert.equal(checkValueType(S, 'urn:li:dataType:svc.number', { string: 'thirty' }, undefined), 'Property: x, value: {string=thirty} should be a number');
  });

  test('a numeric string is a decimal as Java reads one: not hexadecimal, binary or octal', () => {
    for (const ok of ['30', ' 30 ', '-1.5', '+.5', '1.', '1e3', '2.5E-3', '60d', '60.0F']) {
      assert.equal(checkValueType(S, 'urn:li:dataType:svc.number', { string: ok }, undefined), undefined, ok);
    }
    for (const bad of ['0x10', '0b1', '0o7', 'Infinity', 'NaN', '1e999', '', ' ', '1_000', '1e', '.']) {
      assert.equal(checkValueType(S, 'urn:li:dataType:svc.number', { string: bad }, undefined), `Property: x, value: {string=${bad}} should be a number`, bad);
    }
  });

  test('string and rich_text properties take strings', () => {
    for (const t of ['string', 'rich_text']) {
      assert.equal(checkValueType(S, `urn:li:dataType:svc.${t}`, { string: 'a' }, undefined), undefined);
      assert.equal(checkValueType(S, `urn:li:dataType:svc.${t}`, { double: 1 }, undefined), 'Property: x, value: {double=1.0} should be a string');
    }
  });

  test('a date property takes real YYYY-MM-DD dates', () => {
    assert.equal(checkValueType(S, 'urn:li:dataType:svc.date', { string: '2024-02-29' }, undefined), undefined);
    for (const bad of ['2023-02-29', '2024-13-01', '24-01-01', '2024-1-1x']) {
      assert.equal(checkValueType(S, 'urn:li:dataType:svc.date', { string: bad }, undefined), `Property: x, value: {string=${bad}} should be a date with format YYYY-MM-DD`);
    }
  });

  test('a urn property takes urns, of the allowed types when given', () => {
    const urnType = 'urn:li:dataType:svc.urn';
    assert.equal(checkValueType(S, urnType, { string: 'urn:li:corpuser:a' }, undefined), undefined);
    assert.equal(checkValueType(S, urnType, { string: 'not a urn' }, undefined), 'Property: x, value: {string=not a urn} should be an urn');
    // A URN too long to address says so (it was "should be an urn").
    assert.match(checkValueType(S, urnType, { string: `urn:li:corpuser:${'a'.repeat(600)}` }, undefined) ?? '', /^Property: x, value: Error: cannot provide an URN longer than 512 bytes/);
    assert.equal(checkValueType(S, urnType, { string: 'urn:li:corpuser:a' }, ['urn:li:entityType:svc.corpuser']), undefined);
    assert.equal(
      checkValueType(S, urnType, { string: 'urn:li:tag:a' }, ['urn:li:entityType:svc.corpuser']),
      'Property: x, value: {string=urn:li:tag:a} is not of any supported urn types:[urn:li:entityType:svc.corpuser]',
    );
  });

  test('an unknown value type is not validated, and says so', () => {
    assert.equal(checkValueType(S, 'urn:li:dataType:svc.blob', { string: 'a' }, undefined), 'Validation support for type urn:li:dataType:svc.blob is not yet implemented.');
  });
});

describe('checkAssignments', () => {
  const def = (over: Partial<PropertyDefinition> = {}): PropertyDefinition => ({ qualifiedName: 'p', valueType: 'urn:li:dataType:svc.string', entityTypes: [DATASET], ...over });
  const states = (over: Partial<PropertyDefinition> = {}, softDeleted = false) => new Map<string, PropertyState>([[P, { definition: def(over), softDeleted }]]);
  const one = (values: Assignment['values'], propertyUrn = P): Assignment[] => [{ propertyUrn, values }];
  const messages = (as: Assignment[], st = states(), entityType = DATASET) => checkAssignments(as, as, st, entityType).map((v) => v.message);

  test('a valid assignment passes', () => {
    assert.deepEqual(messages(one([{ string: 'a' }])), []);
  });

  test('a property appears once per entity', () => {
    const twice: Assignment[] = [...one([{ string: 'a' }]), ...one([{ string: 'b' }])];
    assert.deepEqual(messages(twice), [`Property: ${P} has multiple entries: [{values=[{string=a}], propertyUrn=${P}}, {values=[{string=b}], propertyUrn=${P}}]`]);
  });

  test('a propertyUrn is a structuredProperty urn', () => {
    assert.deepEqual(messages(one([{ string: 'a' }], 'urn:li:tag:p')), ['Unexpected entity type. Expected: structuredProperty Found: tag']);
    // One too long to address says so (it was reported as of an unexpected type, the whole URN as the type).
    assert.match(messages(one([{ string: 'a' }], `urn:li:structuredProperty:${'a'.repeat(600)}`))[0] ?? '', /^Error: cannot provide an URN longer than 512 bytes/);
  });

  test('a missing property is a failed precondition that says it does not exist', () => {
    const [v] = checkAssignments(one([{ string: 'a' }]), one([{ string: 'a' }]), new Map(), DATASET);
    assert.equal(v!.precondition, true);
    assert.equal(v!.message, `Structured property ${P} does not exist: create its definition first (Unexpected null value found for ${P} Structured Property Definition.)`);
  });

  test('no value of a soft-deleted property may be set', () => {
    assert.deepEqual(messages(one([{ string: 'a' }]), states({}, true)), ['Cannot apply a soft deleted Structured Property value']);
  });

  test('the entity is of a type the property applies to', () => {
    assert.deepEqual(messages(one([{ string: 'a' }]), states(), 'urn:li:entityType:svc.chart'), [
      `Property: ${P} cannot be applied to entity type urn:li:entityType:svc.chart; it applies to [${DATASET}]`,
    ]);
  });

  test('an assignment has at least one value', () => {
    assert.deepEqual(messages(one([])), [`Property: ${P} has no values; give at least one`]);
  });

  test('a SINGLE property has one value; MULTIPLE takes several', () => {
    assert.deepEqual(messages(one([{ string: 'a' }, { string: 'b' }])), [`Property: ${P} has cardinality 1, but multiple values were assigned: [{string=a}, {string=b}]`]);
    assert.deepEqual(messages(one([{ string: 'a' }, { string: 'b' }]), states({ cardinality: 'MULTIPLE' })), []);
  });

  test('each value is of the value type', () => {
    assert.deepEqual(messages(one([{ double: 1 }])), [`Property: ${P}, value: {double=1.0} should be a string`]);
  });

  test('each value is one of the allowed values, when the property has them', () => {
    const st = states({ allowedValues: [{ value: { string: 'a' } }, { value: { string: 'b' } }] });
    assert.deepEqual(messages(one([{ string: 'a' }]), st), []);
    assert.deepEqual(messages(one([{ string: 'c' }]), st), [`Property: ${P}, value: {string=c} should be one of [{string=a}, {string=b}]`]);
  });

  test('only the assignments given are checked; the duplicate check sees all', () => {
    const stale = { propertyUrn: 'urn:li:structuredProperty:gone', values: [{ string: 'x' }] };
    assert.deepEqual(checkAssignments(one([{ string: 'a' }]), [...one([{ string: 'a' }]), stale], states(), DATASET), []);
  });
});

describe('checkImmutable', () => {
  const immutable = new Map<string, PropertyState>([[P, { definition: { qualifiedName: 'p', valueType: 'urn:li:dataType:svc.string', entityTypes: [DATASET], immutable: true }, softDeleted: false }]]);
  const had = [{ propertyUrn: P, values: [{ string: 'a' }] }];

  test('an immutable value may not be removed', () => {
    assert.deepEqual(checkImmutable(had, [], immutable).map((v) => v.message), [`Cannot delete an immutable property ${P}`]);
  });

  test('an immutable value may not be changed, but may be written again as it is', () => {
    assert.deepEqual(checkImmutable(had, [{ propertyUrn: P, values: [{ string: 'b' }] }], immutable).map((v) => v.message), [`Cannot mutate an immutable property: ${P}`]);
    assert.deepEqual(checkImmutable(had, had, immutable), []);
  });

  test('the first value of an immutable property may be set, and mutable ones change freely', () => {
    assert.deepEqual(checkImmutable(undefined, had, immutable), []);
    assert.deepEqual(checkImmutable(had, [], new Map()), []);
  });
});

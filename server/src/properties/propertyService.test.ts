import { test } from 'node:test';
import assert from 'node:assert/strict';
import { updatedDefinition } from './propertyService.ts';
import type { PropertyDefinition } from './types.ts';

const base: PropertyDefinition = {
  qualifiedName: 'io.acryl.retention',
  valueType: 'urn:li:dataType:svc.number',
  cardinality: 'SINGLE',
  entityTypes: ['urn:li:entityType:svc.dataset'],
  allowedValues: [{ value: { double: 30 }, description: 'a month' }],
};

test('absent changes leave the definition as it is', () => {
  assert.deepEqual(updatedDefinition(base, {}), { definition: base, allowedValueInputs: [undefined] });
});

test('entity types are appended once, short forms normalised', () => {
  const next = updatedDefinition(base, { newEntityTypes: ['dataset', 'urn:li:entityType:dataFlow', 'urn:li:entityType:svc.dataFlow'] }).definition;
  assert.deepEqual(next.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow']);
});

test('allowed values are appended; one given again takes the new description; each says which input it came from', () => {
  const next = updatedDefinition(base, { newAllowedValues: [{ value: { double: 60 } }, { value: { double: 30 }, description: '30 days' }] });
  assert.deepEqual(next.definition.allowedValues, [{ value: { double: 30 }, description: '30 days' }, { value: { double: 60 } }]);
  assert.deepEqual(next.allowedValueInputs, [1, 0]);
  const kept = updatedDefinition({ ...base, allowedValues: [...base.allowedValues!, { value: { double: 90 } }] }, { newAllowedValues: [{ value: { double: 365 } }] });
  assert.deepEqual(kept.allowedValueInputs, [undefined, undefined, 0]);
});

test('allowed types start a type qualifier when there is none, and are appended once', () => {
  const next = updatedDefinition(base, { newAllowedTypes: ['corpuser', 'urn:li:entityType:svc.corpuser'] }).definition;
  assert.deepEqual(next.typeQualifier, { allowedTypes: ['urn:li:entityType:svc.corpuser'] });
});

test('cardinality only goes to MULTIPLE; names and flags are replaced', () => {
  const next = updatedDefinition(base, { setCardinalityAsMultiple: true, displayName: 'Retention', description: 'd', immutable: true }).definition;
  assert.deepEqual([next.cardinality, next.displayName, next.description, next.immutable], ['MULTIPLE', 'Retention', 'd', true]);
  assert.equal(updatedDefinition({ ...base, cardinality: 'MULTIPLE' }, { setCardinalityAsMultiple: false }).definition.cardinality, 'MULTIPLE');
});

test('the stored definition is not modified', () => {
  const copy = structuredClone(base);
  updatedDefinition(base, { newEntityTypes: ['dataFlow'], newAllowedValues: [{ value: { double: 90 } }] });
  assert.deepEqual(base, copy);
});

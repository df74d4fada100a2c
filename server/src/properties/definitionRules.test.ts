import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allowedByVersion, checkDefinition, storedDefinition, type DefinitionContext } from './definitionRules.ts';
import type { PropertyDefinition } from './types.ts';

const URN = 'urn:li:structuredProperty:io.acryl.retention';
const STRING = 'urn:li:dataType:svc.string';
const NUMBER = 'urn:li:dataType:svc.number';
const DATASET = 'urn:li:entityType:svc.dataset';
/** The server's clock in these tests: 2025-06-15 10:30:00 UTC. */
const NOW = Date.UTC(2025, 5, 15, 10, 30);
/** What a refused breaking change says lifts it, at NOW. */
const REMEDY = 'A breaking change needs a version: give the time of the change as yyyyMMddHHmmss, e.g. 20250615103000';

const base: PropertyDefinition = { qualifiedName: 'io.acryl.retention', valueType: NUMBER, entityTypes: [DATASET] };
const ctx = (over: Partial<DefinitionContext> = {}): DefinitionContext => ({
  urn: URN,
  previous: undefined,
  softDeleted: false,
  dataTypes: new Set([STRING, NUMBER, 'urn:li:dataType:svc.urn']),
  entityTypes: new Set([DATASET, 'urn:li:entityType:svc.dataFlow']),
  now: NOW,
  ...over,
});
const check = (def: Partial<PropertyDefinition>, over: Partial<DefinitionContext> = {}) => checkDefinition({ ...base, ...def }, ctx(over));

describe('a new definition', () => {
  test('a valid definition passes', () => {
    assert.deepEqual(check({}), []);
  });

  test('refuses any change to a soft-deleted property', () => {
    assert.deepEqual(check({}, { softDeleted: true }), ['Cannot mutate a soft deleted Structured Property Definition']);
  });

  test('a version is 14 digits', () => {
    assert.deepEqual(check({ version: '2024-06-14' }), ['Invalid version specified. Must match [0-9]{14}']);
    assert.deepEqual(check({ version: '20240614080000' }), []);
  });

  test('the urn id has no spaces', () => {
    assert.ok(check({ qualifiedName: 'a b' }, { urn: 'urn:li:structuredProperty:a b' }).includes('Urn ID cannot have spaces'));
  });

  test('the qualified name is not the search field of versioned properties', () => {
    for (const name of ['_versioned', '.versioned']) {
      assert.deepEqual(check({ qualifiedName: name }, { urn: `urn:li:structuredProperty:${name}` }), [
        `Qualified name ${name} is taken by search: structuredProperties._versioned holds the fields of versioned properties`,
      ]);
    }
    assert.deepEqual(check({ qualifiedName: '_versioned.x' }, { urn: 'urn:li:structuredProperty:_versioned.x' }), []);
  });

  test('the qualified name has no spaces', () => {
    assert.ok(check({ qualifiedName: 'io.acryl retention' }).includes('Qualified names cannot have spaces'));
  });

  test('the qualified name is the urn id', () => {
    assert.deepEqual(check({ qualifiedName: 'io.acryl.other' }), [
      `qualifiedName io.acryl.other must be the id of the urn ${URN}: the urn of a structured property is urn:li:structuredProperty:<qualifiedName>`,
    ]);
  });

  test('allowedTypes must parse as urns', () => {
    assert.deepEqual(check({ valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: ['dataset'] } }), [
      'Issue resolving allowedTypes inside of typeQualifier. These must be entity type urns. List of allowedTypes: [dataset]',
    ]);
  });

  test('allowedTypes must be entityType urns', () => {
    assert.deepEqual(check({ valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: [STRING] } }), [
      `Provided allowedType that is not an entityType entity. List of allowedTypes: [${STRING}]`,
    ]);
  });

  test('allowedTypes must exist', () => {
    const t = 'urn:li:entityType:svc.nope';
    assert.deepEqual(check({ valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: [t] } }), [`Provided allowedType that does not exist. List of allowedTypes: [${t}]`]);
  });

  test('typeQualifier has no key but allowedTypes', () => {
    assert.deepEqual(check({ typeQualifier: { allowed: [DATASET] } }), ['typeQualifier: unknown key "allowed"; the only key is allowedTypes']);
  });

  test('the valueType is an existing dataType', () => {
    const [message] = check({ valueType: 'urn:li:dataType:svc.nope' });
    assert.match(message!, /^Provided valueType urn:li:dataType:svc\.nope is not an existing dataType entity; expected one of urn:li:dataType:svc\.number, /);
  });

  test('entityTypes name at least one type', () => {
    assert.deepEqual(check({ entityTypes: [] }), ['entityTypes: must name at least one entity type, e.g. urn:li:entityType:svc.dataset']);
  });

  test('each entity type exists', () => {
    assert.deepEqual(check({ entityTypes: [DATASET, 'urn:li:entityType:dataset'] }), [
      'Provided entityType urn:li:entityType:dataset is not an existing entityType entity, e.g. urn:li:entityType:svc.dataset',
    ]);
  });

  test('allowed values are of the value type', () => {
    assert.deepEqual(check({ allowedValues: [{ value: { string: 'thirty' } }] }), ['allowedValues[0], value: {string=thirty} should be a number']);
  });

  test('refuses a qualified name whose search field another property has', () => {
    const other = 'urn:li:structuredProperty:io_acryl.retention';
    assert.deepEqual(check({}, { fieldHolder: other }), [
      "Structured property Elasticsearch field 'io_acryl_retention' collides with existing property mapping. Qualified names that differ only by '.' vs '_' normalize to the same field name (proposed qualifiedName='io.acryl.retention'). " +
        `The field is that of ${other}.`,
    ]);
    // Checked when a property is created: an existing one keeps working.
    assert.deepEqual(check({}, { fieldHolder: other, previous: base }), []);
  });

  test('an allowed value is listed once', () => {
    assert.deepEqual(check({ allowedValues: [{ value: { double: 30 } }, { value: { double: 30 } }] }), ['allowedValues: {double=30.0} is listed more than once']);
  });
});

describe('an update', () => {
  const previous: PropertyDefinition = { ...base, cardinality: 'MULTIPLE', allowedValues: [{ value: { double: 30 } }, { value: { double: 60 } }] };
  const update = (def: Partial<PropertyDefinition>) => check({ ...previous, ...def }, { previous });

  test('a non-breaking update passes without a version', () => {
    assert.deepEqual(update({ displayName: 'Retention', allowedValues: [...previous.allowedValues!, { value: { double: 90 } }] }), []);
  });

  test('a non-breaking change passes whatever its version, even a lower one; a breaking one needs a greater version', () => {
    const old = { ...previous, version: '20240614080000' };
    assert.deepEqual(checkDefinition({ ...old, displayName: 'Retention', version: '20200101000000' }, ctx({ previous: old })), []);
    assert.deepEqual(checkDefinition({ ...old, cardinality: 'SINGLE', version: '20200101000000' }, ctx({ previous: old })), [
      'Property definition cardinality cannot be changed from MULTI to SINGLE',
      'A breaking change needs a version greater than the current one, 20240614080000 (20200101000000 is not): give the time of the change as yyyyMMddHHmmss, e.g. 20250615103000',
    ]);
    assert.deepEqual(checkDefinition({ ...old, version: '2020' }, ctx({ previous: old })), ['Invalid version specified. Must match [0-9]{14}']);
  });

  test('the stored version never decreases: an update without one or with a lower one keeps the current one', () => {
    const old = { ...previous, version: '20240614080000' };
    assert.equal(storedDefinition({ ...old, version: '20200101000000' }, old).version, '20240614080000');
    assert.equal(storedDefinition({ ...previous, displayName: 'x' }, old).version, '20240614080000');
    assert.equal(storedDefinition({ ...old, version: '20250101000000' }, old).version, '20250101000000');
    assert.equal(storedDefinition({ ...previous, version: '20200101000000' }, previous).version, '20200101000000');
    assert.equal(storedDefinition({ ...previous }, undefined).version, undefined);
  });

  test('the value type changes only with a greater version', () => {
    assert.deepEqual(update({ valueType: STRING, allowedValues: undefined }), ['Value type cannot be changed as this is a backwards incompatible change', REMEDY]);
    assert.deepEqual(update({ valueType: STRING, allowedValues: undefined, version: '20240614080000' }), []);
  });

  test('cardinality goes from MULTIPLE to SINGLE only with a greater version; SINGLE to MULTIPLE always', () => {
    assert.deepEqual(update({ cardinality: 'SINGLE' }), ['Property definition cardinality cannot be changed from MULTI to SINGLE', REMEDY]);
    assert.deepEqual(update({ cardinality: 'SINGLE', version: '20240614080000' }), []);
    const single = { ...base, cardinality: 'SINGLE' as const };
    assert.deepEqual(checkDefinition({ ...single, cardinality: 'MULTIPLE' }, ctx({ previous: single })), []);
  });

  test('the qualified name never changes, not even with a version', () => {
    const renamed = { qualifiedName: 'io.acryl.renamed', version: '20240614080000' };
    assert.ok(update(renamed).includes('Cannot change the fully qualified name of a Structured Property'));
  });

  test('allowed values are not restricted without a greater version', () => {
    assert.deepEqual(update({ allowedValues: [{ value: { double: 30 } }] }), ['Cannot restrict values that were previously allowed', REMEDY]);
    assert.deepEqual(checkDefinition({ ...base, allowedValues: [{ value: { double: 30 } }] }, ctx({ previous: base })), ['Cannot restrict values that were previously allowed', REMEDY]);
    assert.deepEqual(update({ allowedValues: [{ value: { double: 30 } }], version: '20240614080000' }), []);
    // Dropping the restriction allows more: always fine.
    assert.deepEqual(update({ allowedValues: undefined }), []);
  });
});

test('allowedByVersion: a new version over none or a lower one', () => {
  const v = (version?: string): PropertyDefinition => ({ ...base, ...(version ? { version } : {}) });
  assert.equal(allowedByVersion(v(), v('20240101000000')), true);
  assert.equal(allowedByVersion(v('20240101000000'), v('20240102000000')), true);
  assert.equal(allowedByVersion(v('20240102000000'), v('20240102000000')), false);
  assert.equal(allowedByVersion(v('20240102000000'), v('20240101000000')), false);
  assert.equal(allowedByVersion(v('20240101000000'), v()), false);
});

describe('svc’s rules of issue 48', () => {
  test('a new qualified name is a dotted name, said with the character at fault', () => {
    assert.deepEqual(check({ qualifiedName: 'a/b' }, { urn: 'urn:li:structuredProperty:a/b' }), [
      'Qualified name a/b is not a dotted name: "/" is not allowed; a qualified name is names of letters, digits, _ and - joined by single dots, e.g. io.acryl.privacy.retentionTime',
    ]);
    assert.deepEqual(check({ qualifiedName: 'a..b' }, { urn: 'urn:li:structuredProperty:a..b' }), [
      'Qualified name a..b is not a dotted name: it has an empty name between dots, or a dot at its start or end; a qualified name is names of letters, digits, _ and - joined by single dots, e.g. io.acryl.privacy.retentionTime',
    ]);
    // A property created before the rule keeps its name (an update cannot change it).
    const old = { ...base, qualifiedName: 'a/b' };
    assert.deepEqual(check({ ...old, description: 'x' }, { urn: 'urn:li:structuredProperty:a/b', previous: old }), []);
  });

  test('allowedValues, when given, lists at least one value', () => {
    assert.deepEqual(check({ allowedValues: [] }), [
      'allowedValues: must list at least one value (an empty list would allow none); leave allowedValues out to allow any value of the valueType',
    ]);
    // Stored before the rule: an update that keeps it is not refused for it; one that lists values is fine.
    const old = { ...base, allowedValues: [] };
    assert.deepEqual(check({ ...old, description: 'x' }, { previous: old }), []);
    assert.deepEqual(check({ ...old, allowedValues: [{ value: { double: 30 } }] }, { previous: old }), []);
  });
});

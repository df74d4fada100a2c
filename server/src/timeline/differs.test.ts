import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aspectsFor, parseCategories, type ChangeCategory } from './categories.ts';
import { differFor } from './differs.ts';
import { registry } from '../registry/registry.ts';
import { SvcError } from '../shared/errors.ts';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,clicks,PROD)';
const stamp = { time: 1_000, actor: 'urn:li:corpuser:alice' };

/** The events of `category` between two values of `aspect` of a dataset, as [operation, modifier, semVerChange] (and entityUrn when it is not the dataset's). */
function changes(category: ChangeCategory, aspect: string, before: unknown, after: unknown) {
  const differ = differFor(category, aspect, 'datasetKey');
  assert.ok(differ, `${category} reads ${aspect}`);
  return differ(before, after, { entityUrn: DATASET, category, auditStamp: stamp }).map((e) => {
    assert.equal(e.category, category);
    assert.deepEqual(e.auditStamp, stamp);
    assert.ok(e.description.length > 0);
    return [e.operation, e.modifier, e.semVerChange, ...(e.entityUrn === DATASET ? [] : [e.entityUrn])];
  });
}

test('categories are read in any case and word separator; OWNER is OWNERSHIP; each is named once, in order', () => {
  assert.deepEqual(parseCategories(['owner,tag', 'Glossary Term', 'technical-schema', 'TAG']), ['TAG', 'GLOSSARY_TERM', 'OWNERSHIP', 'TECHNICAL_SCHEMA']);
});

test('an unknown category, or none, is a VALIDATION error naming the categories', () => {
  for (const named of [['RUN'], [], [' , '], ['__proto__']]) {
    assert.throws(
      () => parseCategories(named),
      (e: unknown) => e instanceof SvcError && e.code === 'VALIDATION' && /TAG, GLOSSARY_TERM, OWNERSHIP, DOCUMENTATION, TECHNICAL_SCHEMA/.test(e.message),
    );
  }
});

test('each category reads the aspects the entity type has', () => {
  const dataset = registry.entity('dataset');
  assert.deepEqual(aspectsFor(dataset, 'TAG'), ['globalTags', 'schemaMetadata', 'editableSchemaMetadata']);
  assert.ok(aspectsFor(dataset, 'DOCUMENTATION').includes('editableDatasetProperties'));
  assert.ok(aspectsFor(dataset, 'DOCUMENTATION').includes('datasetProperties'));
  assert.ok(!aspectsFor(dataset, 'DOCUMENTATION').includes('structuredProperties'));
  assert.deepEqual(aspectsFor(dataset, 'LIFECYCLE'), ['datasetKey', 'status']);
  assert.deepEqual(aspectsFor(registry.entity('tag'), 'TECHNICAL_SCHEMA'), []);
});

test('tags, terms, domains: each added is an ADD, each removed a REMOVE, in URN order', () => {
  const tags = (...t: string[]) => ({ tags: t.map((tag) => ({ tag })) });
  assert.deepEqual(changes('TAG', 'globalTags', undefined, tags('urn:li:tag:b', 'urn:li:tag:a')), [
    ['ADD', 'urn:li:tag:a', 'MINOR'],
    ['ADD', 'urn:li:tag:b', 'MINOR'],
  ]);
  assert.deepEqual(changes('TAG', 'globalTags', tags('urn:li:tag:a', 'urn:li:tag:b'), tags('urn:li:tag:b', 'urn:li:tag:c')), [
    ['REMOVE', 'urn:li:tag:a', 'MINOR'],
    ['ADD', 'urn:li:tag:c', 'MINOR'],
  ]);
  assert.deepEqual(changes('TAG', 'globalTags', tags('urn:li:tag:a'), tags('urn:li:tag:a')), []);
  assert.deepEqual(changes('GLOSSARY_TERM', 'glossaryTerms', { terms: [{ urn: 'urn:li:glossaryTerm:x' }] }, undefined), [['REMOVE', 'urn:li:glossaryTerm:x', 'MINOR']]);
  assert.deepEqual(changes('DOMAIN', 'domains', { domains: ['urn:li:domain:a'] }, { domains: ['urn:li:domain:b'] }), [
    ['REMOVE', 'urn:li:domain:a', 'MINOR'],
    ['ADD', 'urn:li:domain:b', 'MINOR'],
  ]);
});

test('an owner is one owner of one type: another type is the old association removed and the new one added', () => {
  const owners = (type: string) => ({ owners: [{ owner: 'urn:li:corpuser:alice', type }] });
  const differ = differFor('OWNERSHIP', 'ownership', 'datasetKey')!;
  const events = differ(owners('DATAOWNER'), owners('TECHNICAL_OWNER'), { entityUrn: DATASET, category: 'OWNERSHIP', auditStamp: stamp });
  assert.deepEqual(events.map((e) => [e.operation, e.parameters]), [
    ['REMOVE', { ownerUrn: 'urn:li:corpuser:alice', ownerType: 'DATAOWNER' }],
    ['ADD', { ownerUrn: 'urn:li:corpuser:alice', ownerType: 'TECHNICAL_OWNER' }],
  ]);
});

test('documentation: a description set, changed and removed; links by URL', () => {
  assert.deepEqual(changes('DOCUMENTATION', 'editableDatasetProperties', undefined, { description: 'a' }), [['ADD', undefined, 'MINOR']]);
  assert.deepEqual(changes('DOCUMENTATION', 'editableDatasetProperties', { description: 'a' }, { description: 'b' }), [['MODIFY', undefined, 'MINOR']]);
  assert.deepEqual(changes('DOCUMENTATION', 'datasetProperties', { description: 'a' }, { customProperties: {} }), [['REMOVE', undefined, 'MINOR']]);
  assert.deepEqual(changes('DOCUMENTATION', 'institutionalMemory', { elements: [{ url: 'https://a', description: 'x' }] }, { elements: [{ url: 'https://a', description: 'y' }, { url: 'https://b' }] }), [
    ['ADD', 'https://b', 'MINOR'],
    ['MODIFY', 'https://a', 'MINOR'],
  ]);
});

test('technical schema: a field added is MINOR, one removed or retyped MAJOR; field tags and descriptions are on the field', () => {
  const field = (fieldPath: string, nativeDataType: string, extra: object = {}) => ({ fieldPath, nativeDataType, type: { type: { 'com.linkedin.schema.StringType': {} } }, nullable: false, ...extra });
  const schema = (...fields: object[]) => ({ schemaName: 's', fields });
  const urn = (path: string) => `urn:li:schemaField:(${DATASET},${path})`;
  assert.deepEqual(changes('TECHNICAL_SCHEMA', 'schemaMetadata', schema(field('a', 'string'), field('b', 'string')), schema(field('a', 'varchar'), field('c', 'string'))), [
    ['REMOVE', urn('b'), 'MAJOR'],
    ['ADD', urn('c'), 'MINOR'],
    ['MODIFY', urn('a'), 'MAJOR'],
  ]);
  const tagged = schema(field('a', 'string', { globalTags: { tags: [{ tag: 'urn:li:tag:pii' }] }, description: 'the a' }));
  assert.deepEqual(changes('TAG', 'schemaMetadata', schema(field('a', 'string')), tagged), [['ADD', 'urn:li:tag:pii', 'MINOR', urn('a')]]);
  assert.deepEqual(changes('DOCUMENTATION', 'schemaMetadata', schema(field('a', 'string')), tagged), [['ADD', undefined, 'MINOR', urn('a')]]);
  const editable = { editableSchemaFieldInfo: [{ fieldPath: 'a', glossaryTerms: { terms: [{ urn: 'urn:li:glossaryTerm:t' }] } }] };
  const differ = differFor('GLOSSARY_TERM', 'editableSchemaMetadata', 'datasetKey')!;
  assert.deepEqual(differ(undefined, editable, { entityUrn: DATASET, category: 'GLOSSARY_TERM', auditStamp: stamp }).map((e) => e.parameters), [
    { termUrn: 'urn:li:glossaryTerm:t', fieldPath: 'a', parentUrn: DATASET },
  ]);
});

test('structured properties, deprecation and lifecycle', () => {
  const props = (values: unknown[]) => ({ properties: [{ propertyUrn: 'urn:li:structuredProperty:p', values }] });
  assert.deepEqual(changes('STRUCTURED_PROPERTY', 'structuredProperties', undefined, props([{ string: 'a' }])), [['ADD', 'urn:li:structuredProperty:p', 'MINOR']]);
  assert.deepEqual(changes('STRUCTURED_PROPERTY', 'structuredProperties', props([{ string: 'a' }]), props([{ string: 'b' }])), [['MODIFY', 'urn:li:structuredProperty:p', 'MINOR']]);
  assert.deepEqual(changes('DEPRECATION', 'deprecation', undefined, { deprecated: true, note: 'old' }), [['MODIFY', undefined, 'MINOR']]);
  assert.deepEqual(changes('DEPRECATION', 'deprecation', undefined, { deprecated: false, note: '' }), []);
  assert.deepEqual(changes('LIFECYCLE', 'datasetKey', undefined, { platform: 'p', name: 'n', origin: 'PROD' }), [['CREATE', undefined, 'MINOR']]);
  assert.deepEqual(changes('LIFECYCLE', 'status', { removed: false }, { removed: true }), [['SOFT_DELETE', undefined, 'MAJOR']]);
  assert.deepEqual(changes('LIFECYCLE', 'status', { removed: true }, { removed: false }), [['REINSTATE', undefined, 'MINOR']]);
});

test('values of an unexpected shape give no events rather than failing', () => {
  for (const [category, aspect] of [['TAG', 'globalTags'], ['OWNERSHIP', 'ownership'], ['TECHNICAL_SCHEMA', 'schemaMetadata'], ['DOCUMENTATION', 'editableSchemaMetadata'], ['STRUCTURED_PROPERTY', 'structuredProperties']] as const) {
    for (const odd of [null, 7, 'x', [], { tags: 'x', owners: [null, 3], fields: [{}], editableSchemaFieldInfo: [null], properties: [{ values: 1 }] }]) {
      assert.deepEqual(changes(category, aspect, odd, odd), []);
      assert.doesNotThrow(() => changes(category, aspect, undefined, odd));
    }
  }
});

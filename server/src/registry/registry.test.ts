import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from './registry.ts';
import { SvcError } from '../shared/errors.ts';

test('every entity type the foundation needs is registered with its key aspect', () => {
  const names = registry.entities.map((e) => e.name);
  for (const n of ['dataset', 'schemaField', 'dataFlow', 'dataJob', 'chart', 'dashboard', 'container', 'domain', 'glossaryTerm', 'tag', 'corpuser', 'corpGroup', 'dataPlatform', 'structuredProperty', 'dataType', 'entityType']) {
    assert.ok(names.includes(n), n);
  }
  assert.equal(registry.entity('DataSet').keyAspect, 'datasetKey');
});

test('aspects resolve case-insensitively; time series aspects are marked', () => {
  const dataset = registry.entity('dataset');
  assert.equal(registry.aspect(dataset, 'STRUCTUREDproperties').name, 'structuredProperties');
  assert.equal(registry.aspect(dataset, 'datasetprofile').timeseries, true);
  assert.equal(registry.aspect(dataset, 'operation').timeseries, true);
  assert.equal(registry.aspect(dataset, 'status').timeseries, false);
  assert.throws(() => registry.aspect(dataset, 'propertyDefinition'), SvcError);
});

test('key aspects come from the urn, nested urns included', () => {
  const u = registry.resolveUrn('urn:li:dataJob:(urn:li:dataFlow:(airflow,etl,prod),load)');
  assert.deepEqual(registry.keyAspectValue(u), { flow: 'urn:li:dataFlow:(airflow,etl,prod)', jobId: 'load' });
  const f = registry.resolveUrn('urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD),a.b)');
  assert.deepEqual(registry.keyAspectValue(f), { parent: 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)', fieldPath: 'a.b' });
});

test('a tuple part that must be a urn of a given type is checked', () => {
  assert.throws(() => registry.resolveUrn('urn:li:dataset:(hive,t,PROD)'), (e: unknown) => e instanceof SvcError && e.code === 'INVALID_URN');
  assert.throws(() => registry.resolveUrn('urn:li:dataJob:(urn:li:chart:(a,b),j)'), (e: unknown) => e instanceof SvcError && e.code === 'INVALID_URN');
});

test('a URN resolved again is the same frozen resolution; a bad one is refused every time', () => {
  const raw = 'urn:li:dataset:(urn:li:dataPlatform:hive,cached.t,PROD)';
  const first = registry.resolveUrn(raw);
  assert.equal(registry.resolveUrn(raw), first);
  assert.deepEqual(first.parts, ['urn:li:dataPlatform:hive', 'cached.t', 'PROD']);
  assert.throws(() => (first.parts as string[]).push('x'), TypeError);
  assert.throws(() => Object.assign(first, { urn: 'other' }), TypeError);
  for (let i = 0; i < 2; i++) assert.throws(() => registry.resolveUrn('urn:li:dataset:(hive,cached.t,PROD)'), (e: unknown) => e instanceof SvcError && e.code === 'INVALID_URN');
});

test('schema validation reports every violation', () => {
  const spec = registry.aspect(registry.entity('structuredProperty'), 'propertyDefinition');
  const problems = registry.validate(spec, { qualifiedName: 3, cardinality: 'MANY', bogus: true });
  assert.ok(problems.some((p) => /qualifiedName: must be string/.test(p)));
  assert.ok(problems.some((p) => /cardinality: must be one of "SINGLE", "MULTIPLE"/.test(p)));
  assert.ok(problems.some((p) => /missing required field "valueType"/.test(p)));
  assert.ok(problems.some((p) => /unknown field "bogus"/.test(p)));
});

test('a URN resolved lately is not parsed again: its resolution is kept while up to 10,000 others come after it', () => {
  const urn = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:kept,t${i},PROD)`;
  const first = registry.resolveUrn(urn(0));
  for (let i = 1; i <= 10_000; i++) registry.resolveUrn(urn(i));
  // Cycling over more URNs than one generation holds still finds the first, kept from the older one.
  assert.equal(registry.resolveUrn(urn(0)), first);
  for (let i = 1; i <= 10_000; i++) assert.equal(registry.resolveUrn(urn(i)).parts[1], `t${i}`);
  assert.equal(registry.resolveUrn(urn(0)), first);
});

test('every aspect\'s schema compiles (validators are compiled by their first use, so a bad schema would otherwise surface only then)', () => {
  for (const spec of registry.entities) {
    for (const aspect of registry.aspectsOf(spec)) assert.ok(Array.isArray(registry.validate(aspect, {})), `${spec.name}.${aspect.name}`);
  }
});

test('DataHub\'s whole model: every entity type and aspect of its registry, with their Pegasus classes and time series flags', () => {
  assert.ok(registry.entities.length >= 70, `${registry.entities.length} entity types`);
  const dataset = registry.entity('dataset');
  for (const a of ['ownership', 'globalTags', 'glossaryTerms', 'browsePathsV2', 'container', 'dataPlatformInstance', 'domains']) assert.equal(registry.aspect(dataset, a).name, a);
  assert.equal(registry.aspect(registry.entity('container'), 'containerProperties').pegasusClass, 'com.linkedin.container.ContainerProperties');
  assert.equal(registry.aspect(registry.entity('chart'), 'chartUsageStatistics').timeseries, true);
  assert.equal(registry.aspect(dataset, 'status').pegasusClass, 'com.linkedin.common.Status');
  assert.equal(registry.aspect(dataset, 'datasetKey').keyOf, dataset);
});

test('an aspect or entity type DataHub does not know is still refused, naming it', () => {
  assert.throws(() => registry.aspect(registry.entity('dataset'), 'notAnAspect'), (e: unknown) => e instanceof SvcError && /Unknown aspect "notAnAspect"/.test(e.message));
  assert.throws(() => registry.entity('notAnEntity'), (e: unknown) => e instanceof SvcError && /Unknown entity type "notAnEntity"/.test(e.message));
});

test('an aspect without svc rules is checked by DataHub\'s structure: enums, URN fields, no unknown fields', () => {
  const ownership = registry.aspect(registry.entity('dataset'), 'ownership');
  assert.deepEqual(registry.validate(ownership, { owners: [{ owner: 'urn:li:corpuser:jdoe', type: 'DATAOWNER' }] }), []);
  const problems = registry.validate(ownership, { owners: [{ owner: 'jdoe', type: 'NOT_A_TYPE', extra: 1 }] });
  assert.ok(problems.some((p) => /owner: must be a URN/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /type: must be one of/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /unknown field "extra"/.test(p)), problems.join('\n'));
});

test('the fields of an older client\'s records that the newest dropped are still taken (0.14\'s Criterion.value)', () => {
  assert.ok(JSON.stringify(registry.aspect(registry.entity('dataHubView'), 'dataHubViewInfo').schema).includes('"value"'));
});

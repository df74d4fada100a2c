import assert from 'node:assert/strict';
import test from 'node:test';
import type { EntityRecord } from '../entities/entityService.ts';
import type { StoredAspect } from '../entities/aspectStore.ts';
import { registry } from '../registry/registry.ts';
import { orderByField, sortableFields } from './fieldSort.ts';

const run = (urn: string, created?: number): EntityRecord => {
  const aspects = new Map<string, StoredAspect>();
  if (created !== undefined) {
    const value = { name: urn, created: { time: created, actor: 'urn:li:corpuser:a' } };
    aspects.set('dataProcessInstanceProperties', { urn, aspect: 'dataProcessInstanceProperties', version: 0, value, systemMetadata: {}, createdOn: new Date(0), createdBy: 'a' });
  }
  return { urn, aspects };
};

test('a search is sorted by the date fields of its types’ documents', () => {
  assert.deepEqual([...sortableFields([registry.entity('dataProcessInstance')]).keys()], ['created']);
  assert.deepEqual([...sortableFields([registry.entity('query')]).keys()], ['lastModifiedAt']);
  assert.deepEqual([...sortableFields([registry.entity('dataHubExecutionRequest')]).keys()], ['requestTimeMs']);
  assert.deepEqual([...sortableFields([registry.entity('dataset')]).keys()], []);
});

test('runs are ordered by their time either way, ties by URN, those without a time last', () => {
  const field = sortableFields([registry.entity('dataProcessInstance')]).get('created')!;
  const records = [run('urn:li:dataProcessInstance:c', 2), run('urn:li:dataProcessInstance:none'), run('urn:li:dataProcessInstance:b', 1), run('urn:li:dataProcessInstance:a', 2)];
  const urns = (descending: boolean) => orderByField(records, field, descending).map((r) => r.urn.slice('urn:li:dataProcessInstance:'.length));
  assert.deepEqual(urns(false), ['b', 'a', 'c', 'none']);
  assert.deepEqual(urns(true), ['a', 'c', 'b', 'none']);
});

/**
 * DataHub's `_entityType` search field ({@link ENTITY_TYPE_FIELD}), as search resolves it.
 */
import { registry } from '../registry/registry.ts';
import type { Resolved } from './backend.ts';
import { ENTITY_TYPE_FIELD, FIELD_SUFFIXES, type Leaf } from './expr.ts';
import type { FieldSpec } from './fields.ts';

/**
 * {@link ENTITY_TYPE_FIELD}: entities of the types named. No document stores it: an entity's URN
 * names its type (`urn:li:<type>:…`), so it is a condition on the URN.
 */
export function isEntityTypeField(field: string): boolean {
  return field.replace(FIELD_SUFFIXES, '') === ENTITY_TYPE_FIELD;
}

export function entityTypeCondition(e: Leaf, problems: string[]): Resolved {
  if (e.kind === 'exists') return { kind: 'all' };
  if (e.kind !== 'terms') {
    problems.push(`${ENTITY_TYPE_FIELD} is matched by equality: give entity types (dataset, dataFlow, …), not a range or a pattern`);
    return { kind: 'none' };
  }
  const types = e.values.map((v) => {
    const spec = registry.findEntity(v);
    if (!spec) problems.push(`${ENTITY_TYPE_FIELD}: ${JSON.stringify(v)} is not an entity type (expected a name such as dataset or dataFlow)`);
    return spec?.name;
  });
  const urnField: FieldSpec = { name: 'urn', type: 'keyword' };
  return { kind: 'or', of: types.flatMap((t) => (t ? [{ kind: 'wildcard' as const, field: urnField, pattern: [`urn:li:${t}:`, { wildcard: '*' as const }] }] : [])) };
}


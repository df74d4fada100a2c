/**
 * Short forms accepted on input and stored in full: `number` or `urn:li:dataType:number` become
 * `urn:li:dataType:svc.number`; `dataset` or `urn:li:entityType:dataset` become
 * `urn:li:entityType:svc.dataset`; `svc.number` and `svc.dataset` gain the URN prefix (the forms the seed shows
 * for GraphQL and the CLI file, and that people write in a StructuredProperty by hand); DataHub's own
 * namespace (`urn:li:dataType:datahub.number`, what its clients send) maps to svc's. A known type's id
 * is read in any case, namespaced or not (`NUMBER`, `svc.NUMBER`); an unknown one is kept as given.
 */
import { registry } from '../registry/registry.ts';
import { DATA_TYPES, NAMESPACE, type PropertyDefinition } from './types.ts';

const DATA_TYPE = 'urn:li:dataType:';
const ENTITY_TYPE = 'urn:li:entityType:';
/** DataHub's namespace of the same types (`urn:li:dataType:datahub.number`), as its clients send them: taken as svc's. */
const DATAHUB = 'datahub.';
const withoutDatahub = (id: string) => (id.startsWith(DATAHUB) ? id.slice(DATAHUB.length) : id);

export function normalizeDataType(input: string): string {
  const given = input.startsWith(DATA_TYPE) ? input.slice(DATA_TYPE.length) : input.includes(':') ? undefined : input;
  const id = given === undefined ? undefined : withoutDatahub(given);
  if (id === undefined) return input;
  const bare = id.startsWith(NAMESPACE) ? id.slice(NAMESPACE.length) : id;
  const known = DATA_TYPES.find((t) => t.id === bare.toLowerCase());
  if (known) return `${DATA_TYPE}${NAMESPACE}${known.id}`;
  return id.startsWith(NAMESPACE) ? `${DATA_TYPE}${id}` : input;
}

export function normalizeEntityType(input: string): string {
  const given = input.startsWith(ENTITY_TYPE) ? input.slice(ENTITY_TYPE.length) : input.includes(':') ? undefined : input;
  const id = given === undefined ? undefined : withoutDatahub(given);
  if (id === undefined) return input;
  if (id.startsWith(NAMESPACE)) return `${ENTITY_TYPE}${id}`;
  const known = registry.findEntity(id);
  return known ? `${ENTITY_TYPE}${NAMESPACE}${known.name}` : input;
}

export function normalizeDefinition(d: PropertyDefinition): PropertyDefinition {
  const out: PropertyDefinition = { ...d, valueType: normalizeDataType(d.valueType), entityTypes: d.entityTypes.map(normalizeEntityType) };
  if (d.typeQualifier?.allowedTypes) out.typeQualifier = { ...d.typeQualifier, allowedTypes: d.typeQualifier.allowedTypes.map(normalizeEntityType) };
  return out;
}

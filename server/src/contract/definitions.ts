/**
 * Structured property definitions as they cross the wire: the `propertyDefinition` aspect and its typed
 * values, the data types svc knows, and how a definition is stored: the short forms of its types
 * written in full, and a version that never goes down. The server applies these on every write; the
 * operator applies them to a StructuredProperty's spec to tell whether the server holds it (drift),
 * and the CLI to a property file.
 *
 * Short forms: `number` or `urn:li:dataType:number` become `urn:li:dataType:svc.number`; `dataset` or
 * `urn:li:entityType:dataset` become `urn:li:entityType:svc.dataset`; `svc.number` and `svc.dataset`
 * gain the URN prefix (the forms the seed shows for GraphQL and the CLI file, and that people write in
 * a StructuredProperty by hand); DataHub's own namespace (`urn:li:dataType:datahub.number`, what its
 * clients send) maps to svc's. A known type's id is read in any case, namespaced or not (`NUMBER`,
 * `svc.NUMBER`); an unknown one is kept as given.
 */
import { findEntityType } from './entities.ts';

/** A typed value: `{"string": "foo"}` or `{"double": 60.0}`. */
export type PrimitiveValue = { string: string } | { double: number };

export interface AllowedValue {
  value: PrimitiveValue;
  description?: string;
}

/** The `propertyDefinition` aspect. */
export interface PropertyDefinition {
  qualifiedName: string;
  valueType: string;
  displayName?: string;
  description?: string;
  cardinality?: 'SINGLE' | 'MULTIPLE';
  entityTypes: string[];
  allowedValues?: AllowedValue[];
  typeQualifier?: Record<string, string[]>;
  immutable?: boolean;
  version?: string;
  searchConfiguration?: unknown;
  created?: unknown;
  lastModified?: unknown;
}

/** A definition's cardinality: one written without it is SINGLE (DataHub's default), and is shown so. */
export const cardinalityOf = (d: Pick<PropertyDefinition, 'cardinality'>): 'SINGLE' | 'MULTIPLE' => d.cardinality ?? 'SINGLE';

export type LogicalType = 'string' | 'rich_text' | 'number' | 'date' | 'urn' | 'unknown';

/** The five bootstrapped data types (boot data of DataHub, renamed to `svc.`). */
export const DATA_TYPES: { id: LogicalType; displayName: string; description: string }[] = [
  { id: 'string', displayName: 'String', description: 'A string of characters.' },
  { id: 'number', displayName: 'Number', description: 'An integer or decimal number.' },
  { id: 'urn', displayName: 'Urn', description: 'An unique identifier for a svc entity.' },
  { id: 'rich_text', displayName: 'Rich Text', description: 'An attributed string of characters.' },
  { id: 'date', displayName: 'Date', description: 'A specific day, without time.' },
];

/** The namespace of svc's data types and entity types: `urn:li:dataType:svc.number`, `urn:li:entityType:svc.dataset`. */
export const NAMESPACE = 'svc.';
export const dataTypeUrn = (id: string) => `urn:li:dataType:${NAMESPACE}${id}`;
export const entityTypeUrn = (entity: string) => `urn:li:entityType:${NAMESPACE}${entity}`;

const DATA_TYPE = 'urn:li:dataType:';
const ENTITY_TYPE = 'urn:li:entityType:';
/** DataHub's namespace of the same types (`urn:li:dataType:datahub.number`), as its clients send them: taken as svc's. */
const DATAHUB = 'datahub.';
const withoutDatahub = (id: string) => (id.startsWith(DATAHUB) ? id.slice(DATAHUB.length) : id);

/**
 * A data type as it is stored: `number`, `NUMBER`, `svc.number`, `datahub.number` or
 * `urn:li:dataType:number` become `urn:li:dataType:svc.number`; `svc.<other>` gains the URN prefix;
 * anything else is kept as given (for the rules to name it).
 */
export function normalizeDataType(input: string): string {
  const given = input.startsWith(DATA_TYPE) ? input.slice(DATA_TYPE.length) : input.includes(':') ? undefined : input;
  const id = given === undefined ? undefined : withoutDatahub(given);
  if (id === undefined) return input;
  const bare = id.startsWith(NAMESPACE) ? id.slice(NAMESPACE.length) : id;
  const known = DATA_TYPES.find((t) => t.id === bare.toLowerCase());
  if (known) return `${DATA_TYPE}${NAMESPACE}${known.id}`;
  return id.startsWith(NAMESPACE) ? `${DATA_TYPE}${id}` : input;
}

/**
 * An entity type as it is stored: `dataset`, `DataSet`, `datahub.dataset` or
 * `urn:li:entityType:dataset` become `urn:li:entityType:svc.dataset`; `svc.<other>` gains the URN
 * prefix; an entity type svc does not know is kept as given.
 */
export function normalizeEntityType(input: string): string {
  const given = input.startsWith(ENTITY_TYPE) ? input.slice(ENTITY_TYPE.length) : input.includes(':') ? undefined : input;
  const id = given === undefined ? undefined : withoutDatahub(given);
  if (id === undefined) return input;
  if (id.startsWith(NAMESPACE)) return `${ENTITY_TYPE}${id}`;
  const known = findEntityType(id);
  return known ? `${ENTITY_TYPE}${NAMESPACE}${known.name}` : input;
}

/** A definition with its value type, entity types and allowed types written as they are stored. */
export function normalizeDefinition(d: PropertyDefinition): PropertyDefinition {
  const out: PropertyDefinition = { ...d, valueType: normalizeDataType(d.valueType), entityTypes: d.entityTypes.map(normalizeEntityType) };
  if (d.typeQualifier?.allowedTypes) out.typeQualifier = { ...d.typeQualifier, allowedTypes: d.typeQualifier.allowedTypes.map(normalizeEntityType) };
  return out;
}

/**
 * The order of versions (`yyyyMMddHHmmss`, the time of a breaking change): negative when `a` is older
 * than `b`, zero when the same, positive when newer. Compared case-insensitively as text (for 14
 * digits, chronologically); no version ('' or undefined) is older than any.
 */
export function compareVersions(a: string | undefined, b: string | undefined): number {
  const x = (a ?? '').toLowerCase();
  const y = (b ?? '').toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The definition to store for `given` (as written and checked): a version marks the last breaking
 * change, and "written under an older version" must keep meaning "written before that change", so the
 * stored version never decreases. An update without a version, or with a lower one (DataHub accepts a
 * non-breaking change whatever its version, and a breaking one needs a greater version), keeps the
 * current version; an equal or greater one is stored as given.
 *
 *   storedDefinition({ ...d, version: '20200101000000' }, { ...d, version: '20240614080000' }).version // '20240614080000'
 */
export function storedDefinition(given: PropertyDefinition, previous: PropertyDefinition | undefined): PropertyDefinition {
  if (previous?.version === undefined || compareVersions(given.version, previous.version) >= 0) return given;
  return { ...given, version: previous.version };
}

/**
 * The shapes of structured properties (DataHub's StructuredPropertyDefinition and StructuredProperties
 * records) and the data types svc knows; the definition's own shape and the data types are the
 * contract's (contract/definitions.ts), shared with the CLI and the operator.
 * Data type and entity type URNs use the `svc.` namespace: `urn:li:dataType:svc.number`.
 */
import { DATA_TYPES, NAMESPACE, type LogicalType, type PrimitiveValue } from '../contract/definitions.ts';
import { doubleText } from '../contract/doubles.ts';

export { cardinalityOf, DATA_TYPES, dataTypeUrn, entityTypeUrn, NAMESPACE } from '../contract/definitions.ts';
export type { AllowedValue, LogicalType, PrimitiveValue, PropertyDefinition } from '../contract/definitions.ts';

export interface Assignment {
  propertyUrn: string;
  values: PrimitiveValue[];
  created?: unknown;
  lastModified?: unknown;
  attribution?: unknown;
}

/** The `structuredProperties` aspect of any entity. */
export interface StructuredProperties {
  properties: Assignment[];
}

/** The entity name an entityType URN names (`urn:li:entityType:svc.dataset` → `dataset`). */
export const entityNameOf = (urn: string) => urn.replace(/^urn:li:entityType:/, '').replace(/^(svc|datahub)\./, '');

/**
 * The logical type of a `valueType` URN: the id with a leading `svc.` stripped, lowercased
 * (`urn:li:dataType:svc.number` and `urn:li:dataType:number` are both `number`).
 */
export function logicalType(valueType: string): LogicalType {
  const id = valueType.startsWith('urn:li:dataType:') ? valueType.slice('urn:li:dataType:'.length) : valueType;
  const bare = (id.startsWith(NAMESPACE) ? id.slice(NAMESPACE.length) : id).toLowerCase();
  return (DATA_TYPES.some((t) => t.id === bare) ? bare : 'unknown') as LogicalType;
}

/**
 * The name a property goes by in search: its qualified name with every `.` replaced by `_`
 * (`io.acryl.privacy.retentionTime` → `io_acryl_privacy_retentionTime`, DataHub's field name). Two
 * qualified names with the same search name cannot both be defined (see definitionRules.ts).
 */
export const searchName = (qualifiedName: string) => qualifiedName.replaceAll('.', '_');
/** The search field (under `structuredProperties.`) that holds versioned properties' fields: no property's own name. */
export const VERSIONED_FIELDS = '_versioned';

/** Pegasus union printing used in DataHub's messages: `{string=baz}`, `{double=60.0}`. */
export function printValue(v: PrimitiveValue): string {
  return 'double' in v ? `{double=${doubleText(v.double)}}` : `{string=${v.string}}`;
}

export const printValues = (vs: PrimitiveValue[]) => `[${vs.map(printValue).join(', ')}]`;

/**
 * A decimal number as Java's `Double.parseDouble` reads one: a sign, digits with a decimal point or an
 * exponent, and its `d`/`f` suffix, around blanks (JavaScript's `Number` also reads `0x10`, `0b1` and
 * `0o7`, which Java refuses; Java's hexadecimal floats with a `p` exponent are not taken either).
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[dDfF]?$/;

/**
 * The number a string holds, when it holds a finite one: a `{"string": …}` value of a number property
 * (DataHub accepts "30" there) and a number in a search filter (`["45.0"]`) are read by this one rule.
 */
export function numericString(s: string): number | undefined {
  const t = s.trim();
  if (!DECIMAL.test(t)) return undefined;
  const n = Number(t.replace(/[dDfF]$/, ''));
  return Number.isFinite(n) ? n : undefined;
}

export function sameValue(a: PrimitiveValue, b: PrimitiveValue): boolean {
  if ('double' in a) return 'double' in b && a.double === b.double;
  return 'string' in b && a.string === b.string;
}

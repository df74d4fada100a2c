/**
 * The fields of search documents: their names, types and values, the same in both backends.
 *
 * A document holds `urn`, `removed` (the entity's soft delete), the fields of its key aspect (a
 * dataset's `platform`, `name`, `origin`), and one field per structured property set on it:
 * `structuredProperties.<qualified name with . → _>`, or for a property with a `version`,
 * `structuredProperties._versioned.<qualified name with . → _>.<version>.<type>` (DataHub's names).
 * Values are arrays: numbers as numbers, every other type as its string; empty strings are left out.
 */
import { dateTimeProblem, utcMillis } from '../shared/dates.ts';
import { doubleText } from '../contract/doubles.ts';
import { registry, type EntitySpec } from '../registry/registry.ts';
import { entityNameOf, logicalType, numericString, searchName, VERSIONED_FIELDS, type LogicalType, type PrimitiveValue, type PropertyDefinition } from '../properties/types.ts';

/** How a field is indexed: keyword (exact strings), double, date (epoch milliseconds) or boolean. */
export type FieldType = 'keyword' | 'double' | 'date' | 'boolean';

export interface FieldSpec {
  name: string;
  type: FieldType;
}

export const PROPERTIES_FIELD = 'structuredProperties';

/** The field under `structuredProperties.` that a property's values go to, from its current definition. */
export function propertyFieldName(def: Pick<PropertyDefinition, 'qualifiedName' | 'version' | 'valueType'>): string {
  const name = searchName(def.qualifiedName);
  return def.version ? `${VERSIONED_FIELDS}.${name}.${def.version}.${logicalType(def.valueType)}` : name;
}

/** The field type of a logical type; undefined for `unknown` (its values are not indexed). */
export function fieldTypeOf(type: LogicalType): FieldType | undefined {
  switch (type) {
    case 'number':
      return 'double';
    case 'date':
      return 'date';
    case 'unknown':
      return undefined;
    default:
      return 'keyword';
  }
}

/** A property's field (full name) and type; undefined when its values are not indexed. */
export function propertyField(def: PropertyDefinition): FieldSpec | undefined {
  const type = fieldTypeOf(logicalType(def.valueType));
  return type && { name: `${PROPERTIES_FIELD}.${propertyFieldName(def)}`, type };
}

/** The entity types (registry names, sorted) whose documents carry a property's field. */
export function propertyEntityTypes(def: PropertyDefinition): string[] {
  return def.entityTypes
    .map(entityNameOf)
    .filter((t) => registry.findEntity(t) !== undefined)
    .sort();
}

/** The type a versioned field name says its values have (`…​.20240614080000.string` → keyword). */
export function versionedFieldType(field: string): FieldType | undefined {
  const m = field.match(/^structuredProperties\._versioned\.[^.]+\.[^.]+\.([a-z_]+)$/);
  return m ? fieldTypeOf(logicalType(m[1]!)) : undefined;
}

/** The fields every document of an entity type has: `urn`, `removed` and the key aspect's fields. */
export function baseFields(spec: EntitySpec): FieldSpec[] {
  return [{ name: 'urn', type: 'keyword' }, { name: 'removed', type: 'boolean' }, ...spec.keyFields.map((f) => ({ name: f.name, type: 'keyword' as const }))];
}

/** A typed value as a document holds it; undefined when it is not indexed (an empty string, a non-number). */
export function documentValue(type: FieldType, v: PrimitiveValue): string | number | undefined {
  if (type === 'double') {
    return 'double' in v ? v.double : numericString(v.string);
  }
  const s = 'double' in v ? String(v.double) : v.string;
  return s === '' ? undefined : s;
}

/** An ISO 8601 date or date-time as OpenSearch's default format reads one (`T` or a space before the time). */
const ISO_DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|([+-])(\d{2})(?::?(\d{2}))?)?)?)?)?$/;

/**
 * A date as search compares it, in epoch milliseconds, or why the text is none: a number of epoch
 * milliseconds, or an ISO 8601 date or date-time (UTC unless it says otherwise, with an offset of at
 * most 18 hours, as Java's), whose date and time exist in the calendar (dates.ts): `2024-02-30` and
 * `T24:00` are no dates, where `Date.parse` reads March 1st and the next day.
 */
function readDate(s: string): { ms: number } | { problem: string } {
  if (/^-?\d+$/.test(s)) return { ms: Number(s) };
  const m = ISO_DATE.exec(s);
  if (!m) return { problem: 'expected yyyy-MM-dd, an ISO 8601 date-time (2024-06-14T08:00:00Z), or epoch milliseconds' };
  const n = (i: number) => (m[i] === undefined ? undefined : Number(m[i]));
  const parts = { year: n(1)!, month: n(2) ?? 1, day: n(3) ?? 1, hour: n(4), minute: n(5), second: n(6) };
  const problem = dateTimeProblem(parts);
  if (problem) return { problem };
  const [offsetHours, offsetMinutes] = [n(10) ?? 0, n(11) ?? 0];
  if (offsetMinutes > 59 || offsetHours * 60 + offsetMinutes > 18 * 60) return { problem: `the offset ${m[8]} is beyond ±18:00` };
  const offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return { ms: utcMillis(parts) + Number((m[7] ?? '').slice(0, 3).padEnd(3, '0')) - offset };
}

/** A date as search compares it (see {@link readDate}), in epoch milliseconds; undefined when the text is no date. */
export function dateMillis(s: string): number | undefined {
  const d = readDate(s);
  return 'ms' in d ? d.ms : undefined;
}

/** Why `s` is no date search can compare (see {@link readDate}), or undefined when it is one. */
export function dateProblem(s: string): string | undefined {
  const d = readDate(s);
  return 'problem' in d ? d.problem : undefined;
}

/**
 * A value of an aggregation as DataHub prints it: numbers always with a fraction (`"60.0"`); dates
 * (counted by their instant) as ISO 8601 date-times in UTC.
 */
export function printFacetValue(type: FieldType, v: string | number | boolean): string {
  if (type === 'date') return new Date(Number(v)).toISOString();
  if (type === 'double') return doubleText(Number(v));
  return String(v);
}

/** Nests dotted field names as objects (`a.b: 1` → `{a: {b: 1}}`), as OpenSearch reads them. */
export function nest(flat: Iterable<[string, unknown]>): Record<string, unknown> {
  // Objects without a prototype: a name's part is a key of its own whatever it is (`__proto__` would
  // otherwise reach Object.prototype, and set keys of every object there).
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, value] of flat) {
    const path = name.split('.');
    let at = out;
    for (const seg of path.slice(0, -1)) at = (Object.hasOwn(at, seg) ? at[seg] : (at[seg] = Object.create(null))) as Record<string, unknown>;
    at[path[path.length - 1]!] = value;
  }
  return out;
}

/** The JSON a backend stores for a document: `urn`, `removed` and the fields, dotted names nested. */
export function documentSource(doc: { urn: string; removed: boolean; fields: Map<string, { values: (string | number)[] }> }): Record<string, unknown> {
  return { urn: doc.urn, removed: doc.removed, ...nest([...doc.fields].map(([name, f]) => [name, f.values])) };
}

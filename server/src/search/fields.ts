/**
 * The fields of search documents: their names, types and values, the same in both backends.
 *
 * A document holds `urn`, `removed` (the entity's soft delete), the fields of its key aspect (a
 * dataset's `platform`, `name`, `origin`), the fields DataHub's documents carry for its common aspects
 * ({@link ASPECT_FIELDS}: `owners`, `tags`, `description`, …), and one field per structured property set on it:
 * `structuredProperties.<qualified name with . → _>`, or for a property with a `version`,
 * `structuredProperties._versioned.<qualified name with . → _>.<version>.<type>` (DataHub's names).
 * Values are arrays: numbers as numbers, every other type as its string; empty strings are left out.
 */
import { readFileSync } from 'node:fs';
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

/** `urn` and the key aspect's fields of an entity type: what a term of a query string without a field is matched against. */
export function keyFields(spec: EntitySpec): FieldSpec[] {
  return [{ name: 'urn', type: 'keyword' }, ...spec.keyFields.map((f) => ({ name: f.name, type: 'keyword' as const }))];
}

/**
 * The fields the documents of an entity type may have besides structured properties: `urn`,
 * `removed`, the key aspect's fields and the {@link ASPECT_FIELDS} of the aspects the type has.
 */
export function baseFields(spec: EntitySpec): FieldSpec[] {
  const out = new Map<string, FieldSpec>([['removed', { name: 'removed', type: 'boolean' }]]);
  for (const f of [...keyFields(spec), ...aspectFieldsOf(spec)]) out.set(f.name, { name: f.name, type: f.type });
  return [...out.values()];
}

/**
 * A field of DataHub's search documents read from an aspect (its `@Searchable` annotations, under the
 * field names DataHub's clients filter on). Values are strings, each a value of the field.
 */
export interface AspectField {
  name: string;
  /** keyword: each string at the path; date: each integer there (epoch milliseconds, an audit stamp's `time`), as an ISO date-time. */
  type: 'keyword' | 'date';
  /** The aspects it is read from, all at the same path. */
  aspects: readonly string[];
  /** Where the values are in an aspect's value: keys separated by `/`, `*` for every element of an array. */
  path: string;
  /**
   * How what the path reaches becomes values: each string as it is (the default); a map's entries as
   * `key=value` (`entries`, DataHub's form of `customProperties`); or the strings joined into one
   * browse path, each preceded by `␟` (`browsePathV2`: a container's URN is found in its
   * descendants' paths with CONTAIN, as `get_urns_by_filter(container=…)` asks).
   */
  form?: 'entries' | 'browsePathV2';
}

/** DataHub's separator of the entries of a `browsePathV2` value (U+241F). */
export const BROWSE_PATH_V2_SEPARATOR = '\u241f';

/**
 * Values a field takes from one aspect at most (DataHub's default `maxArrayLength` and `maxObjectKeys`):
 * each is a value row in the `postgres` backend.
 */
export const MAX_ASPECT_FIELD_VALUES = 1000;

/**
 * The fields read from aspects, as DataHub's model annotates them (its entity-level aspects; the
 * tags and terms of schema fields, and key aspects, are not among them: key fields are the key's).
 * Every entity type that has one of these aspects gets the field. Where a field is also a key field
 * (`platform`, `name`), the document holds the values of both. Besides the fields users filter on,
 * the table has those DataHub's maintenance source (`datahub-gc`) and its GraphQL resolvers search on:
 * a run's job and creation time, a query's origin and last change, an execution request's time and
 * source. The table is data (aspectFields.json); fields.test.ts holds each row to DataHub's model.
 */
export const ASPECT_FIELDS: readonly AspectField[] = (
  JSON.parse(readFileSync(new URL('./aspectFields.json', import.meta.url), 'utf8')) as { fields: AspectField[] }
).fields;

/** Every aspect an {@link ASPECT_FIELDS} field is read from (the outbox's triggers queue their writes: R__svc_search_aspect.sql). */
export const SEARCH_FIELD_ASPECTS: ReadonlySet<string> = new Set(ASPECT_FIELDS.flatMap((f) => f.aspects));

/** The {@link ASPECT_FIELDS} of an entity type: those read from an aspect the type has. */
export function aspectFieldsOf(spec: EntitySpec): AspectField[] {
  const has = new Set(spec.aspects);
  return ASPECT_FIELDS.filter((f) => f.aspects.some((a) => has.has(a)));
}

/** The first and last instants a date field holds (years 0000 to 9999, as ISO 8601 writes them); others are left out. */
const FIRST_DOCUMENT_DATE_MS = -62_167_219_200_000;
const LAST_DOCUMENT_DATE_MS = 253_402_300_799_999;

/**
 * The values of a field in an aspect's value (see {@link AspectField}); empty strings are left out, and
 * a date field's times are ISO 8601 date-times in UTC.
 */
export function aspectFieldValues(field: AspectField, value: unknown): string[] {
  let at: unknown[] = [value];
  for (const key of field.path.split('/')) {
    at = at.flatMap((v) => (key === '*' ? (Array.isArray(v) ? v : []) : v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, key) ? [(v as Record<string, unknown>)[key]] : []));
  }
  let values: string[];
  if (field.type === 'date') {
    // As ISO date-times: OpenSearch reads a small number (2000) as a year before epoch milliseconds.
    values = at.filter((v): v is number => Number.isSafeInteger(v) && (v as number) >= FIRST_DOCUMENT_DATE_MS && (v as number) <= LAST_DOCUMENT_DATE_MS).map((v) => new Date(v).toISOString());
  } else if (field.form === 'entries') {
    values = at.flatMap((m) => (m !== null && typeof m === 'object' && !Array.isArray(m) ? Object.entries(m).filter(([, v]) => typeof v === 'string').map(([k, v]) => `${k}=${v as string}`) : []));
  } else {
    values = at.filter((v): v is string => typeof v === 'string' && v !== '');
  }
  values = values.slice(0, MAX_ASPECT_FIELD_VALUES);
  if (field.form === 'browsePathV2') return values.length ? [values.map((v) => `${BROWSE_PATH_V2_SEPARATOR}${v}`).join('')] : [];
  return values;
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

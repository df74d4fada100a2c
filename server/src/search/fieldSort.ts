/**
 * Ordering search results by a field of DataHub's documents other than `urn` (DataHub's clients sort
 * queries by `lastModifiedAt`, a job's runs by `created`, execution requests by `requestTimeMs`).
 * The backends page in URN order only; a sorted search reads the field's values from the primary
 * store, for at most {@link MAX_SORTED_MATCHES} matches, and orders them here (searchService.ts).
 */
import type { EntityRecord } from '../entities/entityService.ts';
import type { EntitySpec } from '../registry/registry.ts';
import { aspectFieldsOf, aspectFieldValues, type AspectField } from './fields.ts';

/** The most matches a search sorted by a field orders (DataHub's own deepest page, `max_result_window`). */
export const MAX_SORTED_MATCHES = 10_000;

/** The fields a search of these entity types can be sorted by, besides `urn`: their date fields, by name. */
export function sortableFields(specs: EntitySpec[]): Map<string, AspectField> {
  return new Map(specs.flatMap(aspectFieldsOf).filter((f) => f.type === 'date').map((f) => [f.name, f]));
}

/** The aspects of a type that hold a field's values. */
export function sortAspects(spec: EntitySpec, field: AspectField): string[] {
  return field.aspects.filter((a) => spec.aspects.includes(a));
}

/**
 * Orders records by a field, ties and entities without a value in URN order; those without a value
 * come last either way (as DataHub's index sorts missing values). A field with several values sorts by
 * its least ascending, its greatest descending.
 */
export function orderByField(records: EntityRecord[], field: AspectField, descending: boolean): EntityRecord[] {
  const key = (r: EntityRecord): number | undefined => {
    let k: number | undefined;
    for (const a of field.aspects) {
      const value = r.aspects.get(a)?.value;
      if (value === undefined) continue;
      for (const text of aspectFieldValues(field, value)) {
        const v = Date.parse(text);
        if (k === undefined || (descending ? v > k : v < k)) k = v;
      }
    }
    return k;
  };
  const keyed = records.map((r) => ({ r, k: key(r) }));
  keyed.sort((a, b) => {
    if (a.k !== b.k) {
      if (a.k === undefined) return 1;
      if (b.k === undefined) return -1;
      return descending ? b.k - a.k : a.k - b.k;
    }
    return a.r.urn < b.r.urn ? -1 : a.r.urn > b.r.urn ? 1 : 0;
  });
  return keyed.map((x) => x.r);
}

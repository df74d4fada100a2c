/**
 * GraphQL inputs as the domain's words: `{stringValue}` / `{numberValue}` as typed values, filter
 * inputs as criteria, sort input as an order. Every violation of a request is collected before it fails.
 */
import { SvcError, Violations } from '../../shared/errors.ts';
import { ENTITY_TYPE_FIELD, type OrFilters } from '../../search/expr.ts';
import { searchFilters, type FacetFilterInput } from '../searchFilters.ts';
import { entityNameOfEnum } from './entityTypes.ts';
import type { AllowedValue, PrimitiveValue } from '../../properties/types.ts';
import { GRAPHQL_INPUT_LIMITS } from './limits.ts';

export interface ValueInput {
  stringValue?: string | null;
  numberValue?: number | null;
}

export interface AllowedValueInput extends ValueInput {
  description?: string | null;
}

export type { FacetFilterInput };

export interface SortInput {
  sortCriterion?: { field: string; sortOrder: 'ASCENDING' | 'DESCENDING' } | null;
  sortCriteria?: { field: string; sortOrder: 'ASCENDING' | 'DESCENDING' }[] | null;
}

/** A typed value from an input holding exactly one of `stringValue` and `numberValue`. */
function typedValue(v: ValueInput, where: string, violations: Violations): PrimitiveValue | undefined {
  const hasString = v.stringValue !== undefined && v.stringValue !== null;
  const hasNumber = v.numberValue !== undefined && v.numberValue !== null;
  if (hasString === hasNumber) {
    violations.add(`${where}: each value must provide exactly one of stringValue or numberValue`);
    return undefined;
  }
  return hasString ? { string: v.stringValue! } : { double: v.numberValue! };
}

/** Values of an assignment; VALIDATION naming each value that holds neither or both. */
export function typedValues(values: ValueInput[], where: string, violations: Violations): PrimitiveValue[] {
  return values.flatMap((v, i) => typedValue(v, `${where}[${i}]`, violations) ?? []);
}

/** Allowed values of a definition input (DataHub: `Each allowed value must provide exactly one of stringValue or numberValue.`). */
export function allowedValues(inputs: AllowedValueInput[] | null | undefined, where: string, violations: Violations): AllowedValue[] | undefined {
  if (!inputs) return undefined;
  return inputs.flatMap((v, i) => {
    const value = typedValue(v, `${where}[${i}]`, violations);
    if (!value) return [];
    return [v.description === undefined || v.description === null ? { value } : { value, description: v.description }];
  });
}

/**
 * `orFilters` as criteria (see searchFilters.ts); DataHub's SDK filters on entity types by their GraphQL
 * names (`_entityType` = DATA_FLOW), which search takes as entity names.
 */
export function orFilters(groups: { and?: FacetFilterInput[] | null }[] | null | undefined): OrFilters | undefined {
  return searchFilters(groups, 'orFilters', (field, values) => (field === ENTITY_TYPE_FIELD ? values?.map((v) => entityNameOfEnum(v) ?? v) : values));
}

/**
 * The order of a search: one field (`urn` when none is given) and its direction; a further criterion
 * may only be `urn`, which ties are broken by anyway. The search module refuses a field it cannot
 * sort by, naming those it can.
 */
export function searchOrder(sort: SortInput | null | undefined): { sortField: string; descending: boolean } {
  const criteria = [...(sort?.sortCriterion ? [sort.sortCriterion] : []), ...(sort?.sortCriteria ?? [])];
  const further = criteria.slice(1).find((c) => c.field !== 'urn');
  if (further) throw SvcError.validation([`sortInput: results are sorted by one field, then by urn; not also by ${JSON.stringify(further.field)}`]);
  return { sortField: criteria[0]?.field ?? 'urn', descending: criteria[0]?.sortOrder === 'DESCENDING' };
}

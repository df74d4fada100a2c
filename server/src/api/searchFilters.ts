/**
 * DataHub's search filters as svc's surfaces receive them (GraphQL's `orFilters`, Rest.li's `filter`):
 * an OR of ANDs of `{field, values, condition, negated}`, made into the search module's criteria in one
 * place, with the limits every surface applies.
 */
import { SvcError } from '../shared/errors.ts';
import type { Criterion, OrFilters } from '../search/expr.ts';
import { MAX_SEARCH_CONDITIONS } from '../search/searchService.ts';

/** One criterion as DataHub's clients send it (GraphQL's `FacetFilterInput`). */
export interface FacetFilterInput {
  field: string;
  value?: string | null;
  values?: string[] | null;
  negated?: boolean | null;
  condition?: string | null;
}

export const FILTER_LIMITS = {
  /** Conditions of one search's filters, its groups' added up (the search module's limit). */
  conditions: MAX_SEARCH_CONDITIONS,
  /** Values of one search's filters, its conditions' added up. */
  values: 1000,
};

/**
 * Filter groups as criteria: `values` (or the deprecated `value`), `IS_NULL` as a negated `EXISTS`.
 * Conditions svc does not serve are refused by the search module, which names them. At most
 * {@link FILTER_LIMITS} conditions and values in all, counted before anything is made of them;
 * `name` is what the surface calls the filters in its messages. `valuesOf` lets a surface read a
 * field's values in its own terms (GraphQL's entity type names).
 */
export function searchFilters(
  groups: { and?: FacetFilterInput[] | null }[] | null | undefined,
  name: string,
  valuesOf: (field: string, values: string[] | undefined) => string[] | undefined = (_, values) => values,
): OrFilters | undefined {
  if (!groups?.length) return undefined;
  let conditions = 0;
  let values = 0;
  for (const g of groups) {
    conditions += g.and?.length ?? 0;
    for (const f of g.and ?? []) values += f.values?.length ?? 0;
  }
  const problems = [
    ...(conditions > FILTER_LIMITS.conditions ? [`${name}: at most ${FILTER_LIMITS.conditions} conditions in all, got ${conditions}`] : []),
    ...(values > FILTER_LIMITS.values ? [`${name}: at most ${FILTER_LIMITS.values} values in all, got ${values}`] : []),
  ];
  if (problems.length) throw SvcError.validation(problems);
  return groups.map((g) => ({
    and: (g.and ?? []).map((f): Criterion => {
      const values = f.values ?? (f.value !== undefined && f.value !== null ? [f.value] : undefined);
      const isNull = f.condition === 'IS_NULL';
      const condition = (isNull ? 'EXISTS' : (f.condition ?? undefined)) as Criterion['condition'];
      const negated = isNull ? !f.negated : (f.negated ?? false);
      return { field: f.field, condition, values: valuesOf(f.field, values), negated };
    }),
  }));
}

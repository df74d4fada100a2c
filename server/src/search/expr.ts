/**
 * What a search selects, as one expression tree that both backends translate: parsed from a query
 * string (queryParser.ts) or built from filters (DataHub's `orFilters`: an OR of ANDs of `{field, condition, values, negated}`).
 *
 * Field names are kept as given here; the search service resolves them (see searchService.ts).
 */
import { SvcError } from '../shared/errors.ts';

/** One part of a wildcard pattern: literal text, `*` (any run) or `?` (one character). */
export type PatternPart = string | { wildcard: '*' | '?' };

export interface Bound {
  value: string;
  inclusive: boolean;
}

export type Leaf =
  | { kind: 'terms'; field: string; values: string[] }
  | { kind: 'exists'; field: string }
  | { kind: 'range'; field: string; min?: Bound; max?: Bound }
  | { kind: 'wildcard'; field: string; pattern: PatternPart[] };

export type Expr = Leaf | { kind: 'and'; of: Expr[] } | { kind: 'or'; of: Expr[] } | { kind: 'not'; of: Expr } | { kind: 'all' };

/** A field name's `.keyword` or `.delimited` suffix (DataHub's clients send `platform.keyword`): ignored. */
export const FIELD_SUFFIXES = /\.(keyword|delimited)$/;

/** DataHub's field of entity types (its SDK's `F.entity_type(…)` filters on it; GraphQL gives its enum names, translated by the adapter). */
export const ENTITY_TYPE_FIELD = '_entityType';

/** The field a term without one is matched against (see searchService.ts for what it covers). */
export const DEFAULT_FIELD = '<default>';

export const ALL: Expr = { kind: 'all' };
export const and = (of: Expr[]): Expr => (of.length === 1 ? of[0]! : of.length === 0 ? ALL : { kind: 'and', of });
export const or = (of: Expr[]): Expr => (of.length === 1 ? of[0]! : { kind: 'or', of });
export const not = (of: Expr): Expr => (of.kind === 'not' ? of.of : { kind: 'not', of });

// ---- filters -------------------------------------------------------------------------------------

export const CONDITIONS = [
  'EQUAL',
  'IN',
  'EXISTS',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUAL_TO',
  'LESS_THAN',
  'LESS_THAN_OR_EQUAL_TO',
  'CONTAIN',
  'START_WITH',
  'END_WITH',
] as const;
export type Condition = (typeof CONDITIONS)[number];

/** One filter criterion (DataHub's FacetFilterInput); `condition` defaults to EQUAL. */
export interface Criterion {
  field: string;
  condition?: Condition;
  values?: string[];
  negated?: boolean;
}

/** `orFilters`: entities matching every criterion of at least one group. */
export type OrFilters = { and: Criterion[] }[];

/** The expression of filters; VALIDATION naming each criterion that cannot be served. */
export function filtersExpr(filters: OrFilters): Expr {
  const problems: string[] = [];
  const groups = filters.map((g, i) =>
    and(
      g.and.map((c, j) => {
        try {
          const e = criterion(c);
          return c.negated ? not(e) : e;
        } catch (err) {
          problems.push(`orFilters[${i}].and[${j}]: ${(err as Error).message}`);
          return ALL;
        }
      }),
    ),
  );
  if (problems.length) throw SvcError.validation(problems);
  return groups.length === 0 ? ALL : or(groups);
}

function criterion(c: Criterion): Expr {
  const condition = c.condition ?? 'EQUAL';
  const values = c.values ?? [];
  const one = (): string => {
    if (values.length !== 1) throw new Error(`${condition} takes exactly one value, got ${values.length}`);
    return values[0]!;
  };
  const field = c.field;
  switch (condition) {
    case 'EXISTS':
      return { kind: 'exists', field };
    case 'EQUAL':
    case 'IN':
      if (values.length === 0) throw new Error(`${condition} takes at least one value`);
      return { kind: 'terms', field, values };
    case 'GREATER_THAN':
      return { kind: 'range', field, min: { value: one(), inclusive: false } };
    case 'GREATER_THAN_OR_EQUAL_TO':
      return { kind: 'range', field, min: { value: one(), inclusive: true } };
    case 'LESS_THAN':
      return { kind: 'range', field, max: { value: one(), inclusive: false } };
    case 'LESS_THAN_OR_EQUAL_TO':
      return { kind: 'range', field, max: { value: one(), inclusive: true } };
    case 'CONTAIN':
      return { kind: 'wildcard', field, pattern: [{ wildcard: '*' }, one(), { wildcard: '*' }] };
    case 'START_WITH':
      return { kind: 'wildcard', field, pattern: [one(), { wildcard: '*' }] };
    case 'END_WITH':
      return { kind: 'wildcard', field, pattern: [{ wildcard: '*' }, one()] };
    default:
      throw new Error(`unknown condition ${String(condition)}; conditions are ${CONDITIONS.join(', ')}`);
  }
}

/** Every leaf of an expression. */
export function leaves(e: Expr): Leaf[] {
  if (e.kind === 'and' || e.kind === 'or') return e.of.flatMap(leaves);
  if (e.kind === 'not') return leaves(e.of);
  if (e.kind === 'all') return [];
  return [e];
}

/**
 * Every limit on what one GraphQL request may ask of svc, in one place: what its document may be
 * (checked before it runs), and how much work its inputs may ask for (checked before any is done).
 * Each refusal names the limit it passed and what it got (`at most 50 facets, got 10000`). One
 * request must never take svc down (issue 48): a stack overflowing, seconds of database work or an
 * answer of megabytes would, and each limit here stands between a small request and one of those.
 */
import { MAX_LISTED_VIOLATIONS } from '../../shared/errors.ts';
import { MAX_JSON_DEPTH } from '../inputRules.ts';
import { MAX_SEARCH_PAGE } from '../../search/searchService.ts';
import { FILTER_LIMITS } from '../searchFilters.ts';

/**
 * Limits of one document. DataHub's deepest common query (search → entity → properties → definition
 * → types → info) is depth 9; graphql-js's standard introspection query (what GraphiQL and code
 * generators send) is 18 levels deep below and including `__schema`, and nests 10 brackets deep.
 */
export const GRAPHQL_LIMITS = {
  /** Characters of the document's text: a long value belongs in the variables (parsed documents are cached by their text). */
  length: 100_000,
  /**
   * Brackets (`{`, `[`, `(`) open at once in the document's text, outside strings and comments:
   * checked before the document is parsed, as parsing and everything after it recurses once per level.
   */
  nesting: 64,
  /** Tokens of the document (graphql-armor). */
  tokens: 5000,
  /** Levels of fields, fragments included (graphql-armor), `__schema` excepted. */
  depth: 12,
  /** Levels of fields below and including `__schema`, an inline fragment or fragment spread a level too (see introspection.ts). */
  introspectionDepth: 21,
  /** Aliases (graphql-armor; those of `__typename`, which reads nothing, are not counted). */
  aliases: 30,
  /** graphql-armor's cost of the document, `__schema` excepted. */
  cost: 5000,
} as const;

/** Limits of what a request's inputs, in its variables or written in the document, may ask for. */
export const GRAPHQL_INPUT_LIMITS = {
  /** Items of any list: the properties of an upsert, the URNs of a removal, the values of a property, … */
  listItems: 1000,
  /** Levels of objects and lists in the variables (as in any JSON body). */
  variablesDepth: MAX_JSON_DEPTH,
  /** Facets of one `aggregateAcrossEntities`: each is an aggregation over every matching entity. */
  facets: 50,
  /** Conditions of one search's `orFilters`, its groups' added up (the search module's limit). */
  filterConditions: FILTER_LIMITS.conditions,
  /** Values of one search's `orFilters`, its conditions' added up. */
  filterValues: FILTER_LIMITS.values,
  /** Values per facet (`searchFlags.maxAggValues`): a larger one is read as this, as a larger `count` is. */
  aggValues: 1000,
  /** Entities of one page of search results (`count`): a larger one is read as this, as DataHub does. */
  searchPage: MAX_SEARCH_PAGE,
  /**
   * Search results one request may ask for in all, its searches' page sizes added up: five full pages.
   * Aliases would otherwise let one request read 30 pages of 1,000 entities.
   */
  searchResults: 5000,
  /** Violations an error lists: the first ones, and how many more there are (errors.ts's limit). */
  reportedViolations: MAX_LISTED_VIOLATIONS,
} as const;

/**
 * The search backend interface: what the search service and the outbox dispatcher need of a store of
 * search documents. Two implementations: `postgres` (tables in the catalog's own database) and
 * `opensearch` (an index per entity type behind an alias). Both receive the same documents and the
 * same resolved expressions, and one conformance suite holds them to the same answers.
 */
import type { Db } from '../db/pool.ts';
import type { PatternPart } from './expr.ts';
import type { FieldSpec, FieldType } from './fields.ts';

/** An entity's search document: `fields` holds the key-aspect fields and `structuredProperties.*`. */
export interface SearchDocument {
  entityType: string;
  urn: string;
  removed: boolean;
  fields: Map<string, { type: FieldType; values: (string | number)[] }>;
}

export interface DocumentRef {
  entityType: string;
  urn: string;
}

/** A comparable value: strings for keyword fields, numbers for double and date (epoch ms), booleans. */
export type Scalar = string | number | boolean;

export type ResolvedLeaf =
  | { kind: 'terms'; field: FieldSpec; values: Scalar[] }
  | { kind: 'exists'; field: FieldSpec }
  | { kind: 'range'; field: FieldSpec; min?: { value: Scalar; inclusive: boolean }; max?: { value: Scalar; inclusive: boolean } }
  | { kind: 'wildcard'; field: FieldSpec; pattern: PatternPart[] };

/** An expression whose fields are resolved and whose values are typed; `none` matches nothing. */
export type Resolved =
  | ResolvedLeaf
  | { kind: 'and'; of: Resolved[] }
  | { kind: 'or'; of: Resolved[] }
  | { kind: 'not'; of: Resolved }
  | { kind: 'all' }
  | { kind: 'none' };

export interface SearchRequest {
  entityTypes: string[];
  where: Resolved;
  includeRemoved: boolean;
  /** The last URN of the previous page. */
  after?: string;
  descending: boolean;
  limit: number;
  /** Count every match too. */
  total: boolean;
}

export interface FacetBucket {
  value: Scalar;
  count: number;
}

export interface AggregateRequest {
  entityTypes: string[];
  where: Resolved;
  includeRemoved: boolean;
  facets: FieldSpec[];
  /** The most values per facet (the most frequent first). */
  maxValues: number;
}

export interface SearchBackend {
  readonly kind: 'postgres' | 'opensearch';
  /** Creates what the entity types' documents need (indices and aliases); idempotent. */
  prepare(entityTypes: string[]): Promise<void>;
  /** Makes sure the entity type's documents can be searched by these fields (mappings); idempotent. */
  ensureFields(entityType: string, fields: FieldSpec[]): Promise<void>;
  /**
   * Stores documents and removes those of entities that are gone; `tx` is the dispatcher's transaction.
   * Resolves with the entities whose document the backend refused by itself (by URN, with its reason),
   * the others being applied; throws when it could not apply them as a whole (then what it did apply is
   * applied again by a later try: documents are whole, so that is harmless).
   */
  apply(docs: SearchDocument[], gone: DocumentRef[], tx: Db): Promise<Map<string, string>>;
  /** Makes every document applied so far visible to searches (OpenSearch refreshes on its own within its interval). */
  refresh(): Promise<void>;
  /** Told after a step's documents were committed (see PostgresBackend's planner statistics). */
  delivered?(): Promise<void>;
  /** A page of matching URNs in URN order, after `after`. */
  search(req: SearchRequest): Promise<{ urns: string[]; total?: number }>;
  /** Value counts per facet field, in the order of `facets`. */
  aggregate(req: AggregateRequest): Promise<FacetBucket[][]>;
  /** Whether the backend answers now. */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Search, as every surface calls it (REST `?query=`, GraphQL `scrollAcrossEntities` and
 * `aggregateAcrossEntities`, the hard-delete cleanup): resolves the field names of a query string or
 * of filters, checks them, types their values, and asks the backend.
 *
 * Field names: `urn`, `removed`, the key-aspect fields (a dataset's `platform`, `name`, `origin`),
 * the fields DataHub's documents carry for common aspects (`owners`, `tags`, `glossaryTerms`,
 * `domains`, `container`, `typeNames`, `browsePathV2`, `platformInstance`, `customProperties`,
 * `description`, …: fields.ts, ASPECT_FIELDS), and `structuredProperties.<name>` where `<name>` is a property's
 * field (the qualified name with `.` → `_`, or `_versioned.<name>.<version>.<type>`) or its dotted
 * qualified name (resolved to its current field). A field of some entity type's documents that the
 * types searched do not have matches nothing there (DataHub's clients send `origin` and `env` whatever
 * the types). A `.keyword` or `.delimited` suffix is ignored. A
 * term without a field is matched against `urn` and the key-aspect fields. A field naming a
 * soft-deleted property is refused; one naming no property matches nothing (e.g. after a hard delete).
 */
import { createHash } from 'node:crypto';
import { authorize, type Principal } from '../auth/authorize.ts';
import { SvcError } from '../shared/errors.ts';
import type { EntityRecord, EntityService } from '../entities/entityService.ts';
import type { ScrollIds } from '../entities/scrollIds.ts';
import type { DefinitionCache } from '../properties/definitionCache.ts';
import { isDottedName, VERSIONED_FIELD } from '../properties/qualifiedNames.ts';
import { numericString, searchName } from '../properties/types.ts';
import { registry, type EntitySpec } from '../registry/registry.ts';
import { ENTITIES } from '../contract/entities.ts';
import type { Resolved, ResolvedLeaf, Scalar, SearchBackend } from './backend.ts';
import { DEFAULT_FIELD, FIELD_SUFFIXES as SUFFIXES, filtersExpr, leaves, type Expr, type Leaf, type OrFilters } from './expr.ts';
import { parseQuery } from './queryParser.ts';
import { entityTypeCondition, isEntityTypeField } from './entityTypeField.ts';
import { baseFields, dateMillis, keyFields, dateProblem, PROPERTIES_FIELD, printFacetValue, propertyField, versionedFieldType, type AspectField, type FieldSpec } from './fields.ts';
import { MAX_SORTED_MATCHES, orderByField, sortableFields, sortAspects } from './fieldSort.ts';

export interface SearchInput {
  /** Entity type names; empty: every type. */
  entityTypes: string[];
  /** A query string (`*` or absent: everything). */
  query?: string;
  filters?: OrFilters;
  count: number;
  scrollId?: string;
  /** Matches to skip before the page (paging by offset; `start + count` at most {@link MAX_RESULT_WINDOW}). */
  start?: number;
  descending?: boolean;
  /**
   * The field results are ordered by (`descending` applies to it): `urn` (the default), or a date field
   * of the types' documents (fieldSort.ts: `lastModifiedAt`, `created`, `requestTimeMs`, …), ties in
   * URN order.
   */
  sortField?: string;
  includeSoftDeleted?: boolean;
  /** Aspects of each entity to return (all when undefined). */
  aspects?: string[];
  /** Count every match (`total`). */
  total?: boolean;
}

export interface SearchResult {
  entities: EntityRecord[];
  scrollId: string | undefined;
  total?: number;
}

export interface AggregateInput {
  entityTypes: string[];
  query?: string;
  filters?: OrFilters;
  includeSoftDeleted?: boolean;
  facets: string[];
  maxAggValues: number;
}

export interface Facet {
  /** The facet as asked for. */
  field: string;
  aggregations: { value: string; count: number }[];
}

export const MAX_SEARCH_PAGE = 1000;
/** The deepest match an offset page reaches (OpenSearch's `index.max_result_window`). */
export const MAX_RESULT_WINDOW = 10_000;

/**
 * Terms and conditions one search may hold (its query string's and its filters' added up). Beyond a
 * few hundred, Postgres spends seconds planning one search and OpenSearch refuses it (1,024 clauses at
 * most); a hundred is more than a person or a client builds.
 */
export const MAX_SEARCH_CONDITIONS = 100;
/** Parsed query strings kept at most (all are dropped when more come: parsing again is cheap). */
const MAX_PARSED = 1_000;

/** What a field name resolves to: a field, or nothing (matches nothing). */
type Resolution = FieldSpec | null;

export class SearchService {
  constructor(
    readonly backend: SearchBackend,
    private readonly entities: EntityService,
    private readonly scrollIds: ScrollIds,
    /** The properties field names resolve to, kept between searches. */
    private readonly definitions: DefinitionCache,
  ) {}

  /**
   * Query strings parsed, kept between searches: a page of a scroll, or the same search again, does not
   * parse its query again (a tenth of a small search's time). Expressions are never modified.
   */
  private readonly parsed = new Map<string, Expr>();

  private parse(query: string): Expr {
    let expr = this.parsed.get(query);
    if (!expr) {
      expr = parseQuery(query);
      if (this.parsed.size >= MAX_PARSED) this.parsed.clear();
      this.parsed.set(query, expr);
    }
    return expr;
  }

  /** A page of matching entities in URN order (or by {@link SearchInput.sortField}), with a scroll id for the next page. */
  async search(principal: Principal, input: SearchInput): Promise<SearchResult> {
    authorize(principal, 'READ');
    const specs = this.specs(input.entityTypes);
    const sortField = input.sortField === undefined || input.sortField === 'urn' ? undefined : sortableFields(specs).get(input.sortField);
    if (input.sortField !== undefined && input.sortField !== 'urn' && !sortField) {
      const sortable = [...sortableFields(specs).keys()];
      throw SvcError.validation([`sort: results are sorted by urn${sortable.length ? ` or by ${sortable.join(', ')}` : ''}, not by ${JSON.stringify(input.sortField)}`]);
    }
    const where = await this.where(specs, input.query, input.filters);
    if (sortField) return this.searchSorted(principal, input, specs, where, sortField);
    const descending = input.descending ?? false;
    const scope = `search:${specs.map((s) => s.name).join(',')}:${descending ? 'D' : 'A'}:${digest([input.query ?? '', input.filters ?? [], input.includeSoftDeleted ?? false])}`;
    // A count of 0 asks for the total alone (DataHub's clients do); a page is at most MAX_SEARCH_PAGE.
    if (input.count < 0) throw SvcError.validation([`count must be 0 or more (got ${input.count})`]);
    const limit = Math.min(input.count, MAX_SEARCH_PAGE);
    const start = input.start ?? 0;
    if (start < 0 || start + limit > MAX_RESULT_WINDOW) {
      throw SvcError.validation([`start + count must be between 0 and ${MAX_RESULT_WINDOW} (got start ${start}, count ${limit}): use a scroll to read further`]);
    }
    const page = await this.backend.search({
      entityTypes: specs.map((s) => s.name),
      where,
      includeRemoved: includesRemoved(input),
      after: input.scrollId ? this.scrollIds.decode(scope, input.scrollId) : undefined,
      descending,
      limit: Math.min(start + limit + 1, MAX_RESULT_WINDOW),
      total: input.total ?? false,
    });
    const urns = page.urns.slice(start, start + limit);
    const entities = await this.entities.getMany(principal, urns.map((u) => registry.resolveUrn(u)), input.aspects);
    const more = limit > 0 && page.urns.length > start + limit;
    return { entities, scrollId: more ? this.scrollIds.encode(scope, urns[urns.length - 1]!) : undefined, total: page.total };
  }

  /**
   * A page of matching entities ordered by a field (see fieldSort.ts): every match is read with the
   * field's aspects and ordered, the page taken by offset (its scroll id holds the offset of the next).
   */
  private async searchSorted(principal: Principal, input: SearchInput, specs: EntitySpec[], where: Resolved, field: AspectField): Promise<SearchResult> {
    const descending = input.descending ?? false;
    const scope = `sorted:${field.name}:${specs.map((s) => s.name).join(',')}:${descending ? 'D' : 'A'}:${digest([input.query ?? '', input.filters ?? [], input.includeSoftDeleted ?? false])}`;
    if (input.count < 0) throw SvcError.validation([`count must be 0 or more (got ${input.count})`]);
    const limit = Math.min(input.count, MAX_SEARCH_PAGE);
    const start = input.start ?? 0;
    if (start < 0 || start + limit > MAX_RESULT_WINDOW) {
      throw SvcError.validation([`start + count must be between 0 and ${MAX_RESULT_WINDOW} (got start ${start}, count ${limit}): use a scroll to read further`]);
    }
    const offset = start + (input.scrollId ? Number(this.scrollIds.decode(scope, input.scrollId)) : 0);
    // Counted rather than asked one more: a page reaches 10,000 matches at most in OpenSearch.
    const matches = await this.backend.search({ entityTypes: specs.map((s) => s.name), where, includeRemoved: includesRemoved(input), descending: false, limit: MAX_SORTED_MATCHES, total: true });
    if ((matches.total ?? 0) > MAX_SORTED_MATCHES) {
      throw SvcError.validation([`A search sorted by ${field.name} orders ${MAX_SORTED_MATCHES} matches at most and this one has more: narrow it with filters, or sort by urn`]);
    }
    const aspects = [...new Set(specs.flatMap((s) => sortAspects(s, field)))];
    const keyed = await this.entities.getMany(principal, matches.urns.map((u) => registry.resolveUrn(u)), aspects);
    const ordered = orderByField(keyed, field, descending).map((r) => r.urn);
    const urns = ordered.slice(offset, offset + limit);
    const records = new Map((await this.entities.getMany(principal, urns.map((u) => registry.resolveUrn(u)), input.aspects)).map((r) => [r.urn, r]));
    const entities = urns.flatMap((u) => records.get(u) ?? []);
    const more = limit > 0 && ordered.length > offset + limit;
    return { entities, scrollId: more ? this.scrollIds.encode(scope, String(offset + limit)) : undefined, total: input.total ? matches.total : undefined };
  }

  /** Value counts of each facet field over the matching entities, the most frequent first. */
  async aggregate(principal: Principal, input: AggregateInput): Promise<Facet[]> {
    authorize(principal, 'READ');
    if (input.maxAggValues < 1) throw SvcError.validation([`maxAggValues must be 1 or more (got ${input.maxAggValues})`]);
    const specs = this.specs(input.entityTypes);
    const where = await this.where(specs, input.query, input.filters);
    const resolved = await this.resolveFields(specs, input.facets, 'facet', true);
    const facets = input.facets.map((name) => resolved.get(name) ?? null);
    for (const [i, f] of facets.entries()) {
      if (f && (f.name === 'urn' || f.name === 'removed')) throw SvcError.validation([`facets[${i}]: ${input.facets[i]} cannot be a facet; facets are key-aspect fields and structured properties`]);
    }
    const fields = facets.filter((f): f is FieldSpec => f !== null);
    const counts = fields.length
      ? await this.backend.aggregate({
          entityTypes: specs.map((s) => s.name),
          where,
          includeRemoved: includesRemoved(input),
          facets: fields,
          maxValues: input.maxAggValues,
        })
      : [];
    return input.facets.map((name, i) => {
      const f = facets[i];
      const buckets = f ? counts[fields.indexOf(f)]! : [];
      return { field: name, aggregations: buckets.map((b) => ({ value: printFacetValue(f!.type, b.value), count: b.count })) };
    });
  }

  private specs(names: string[]): EntitySpec[] {
    return names.length ? [...new Set(names)].map((n) => registry.entity(n)) : [...ENTITIES];
  }

  /**
   * The resolved expression of a query string and filters (both must match). A field of the query
   * string is the index's field as written; a filter's names a property (see {@link resolveFields}).
   */
  private async where(specs: EntitySpec[], query: string | undefined, filters: OrFilters | undefined): Promise<Resolved> {
    const parts: { expr: Expr; byProperty: boolean; leaves: Leaf[] }[] = [];
    if (query !== undefined) parts.push({ expr: this.parse(query), byProperty: false, leaves: [] });
    if (filters?.length) parts.push({ expr: filtersExpr(filters), byProperty: true, leaves: [] });
    // A part matching everything (`*`, DataHub clients' usual query beside filters) adds nothing to the other.
    if (parts.length === 2 && parts.some((p) => p.expr.kind === 'all')) parts.splice(parts.findIndex((p) => p.expr.kind === 'all'), 1);
    for (const p of parts) p.leaves = leaves(p.expr);
    const conditions = parts.reduce((n, p) => n + p.leaves.length, 0);
    if (conditions > MAX_SEARCH_CONDITIONS) {
      throw SvcError.validation([`A search may hold ${MAX_SEARCH_CONDITIONS} terms and conditions at most (its query string's and its filters' added up); this one holds ${conditions}`]);
    }
    const problems: string[] = [];
    const resolved: Resolved[] = [];
    const defaults = defaultFields(specs);
    for (const { expr, byProperty, leaves: terms } of parts) {
      const names = [...new Set(terms.map((l) => l.field).filter((f) => f !== DEFAULT_FIELD && !isEntityTypeField(f)))];
      const fields = names.length ? await this.resolveFields(specs, names, 'field', byProperty) : new Map<string, Resolution>();
      resolved.push(resolve(expr, fields, defaults, problems));
    }
    if (problems.length) throw SvcError.validation(problems);
    return resolved.length === 0 ? { kind: 'all' } : resolved.length === 1 ? resolved[0]! : { kind: 'and', of: resolved };
  }

  /**
   * Resolves field names; VALIDATION for unknown ones and for soft-deleted properties. A property
   * field is named by the property's qualified name, dotted, or that name underscored (as the index
   * names its field) or as its versioned field (`_versioned.<name>.<version>.<type>`). `byProperty`
   * (GraphQL's filters and facets) resolves a name to the property's own field, the versioned one once
   * it has a version; otherwise (a query string) an underscored name is the unversioned field as
   * written, which a versioned property's values are not under, as in DataHub's index.
   */
  private async resolveFields(specs: EntitySpec[], names: string[], what: string, byProperty: boolean): Promise<Map<string, Resolution>> {
    const out = new Map<string, Resolution>();
    const base = new Map(specs.flatMap(baseFields).map((f) => [f.name, f]));
    const wanted = names.map((n) => ({ name: n, property: propertyPart(n) }));
    const dotted = wanted.filter((w) => w.property && !VERSIONED_FIELD.test(w.property) && w.property.includes('.')).map((w) => w.property!);
    const fieldNames = wanted.filter((w) => w.property).map((w) => underscored(w.property!));
    const found = await this.definitions.find(dotted, fieldNames);
    const problems: string[] = [];
    const deleted = new Set<string>();
    for (const { name, property } of wanted) {
      if (property === undefined) {
        // `platform.keyword`, as DataHub's clients filter on it, is `platform`.
        const f = base.get(name.replace(SUFFIXES, '')) ?? ANY_TYPE_FIELDS.get(name.replace(SUFFIXES, ''));
        if (!f) {
          problems.push(`Unknown search ${what} ${JSON.stringify(name)}; the fields are ${[...base.keys()].join(', ')} and ${PROPERTIES_FIELD}.<property>`);
        }
        out.set(name, f ?? null);
        continue;
      }
      const matches = [...found].filter(([, s]) => property === s.definition.qualifiedName || underscored(property) === searchName(s.definition.qualifiedName));
      let field: Resolution = null;
      if (VERSIONED_FIELD.test(property)) {
        const full = `${PROPERTIES_FIELD}.${property}`;
        const type = versionedFieldType(full);
        field = type ? { name: full, type } : null;
        for (const [urn, s] of matches) if (s.softDeleted && propertyField(s.definition)?.name === full) deleted.add(urn);
      } else if (property.includes('.')) {
        const [urn, s] = matches.find(([, s]) => s.definition.qualifiedName === property) ?? [];
        if (s?.softDeleted) deleted.add(urn!);
        field = s ? (propertyField(s.definition) ?? null) : null;
      } else {
        for (const [urn, s] of matches) if (s.softDeleted) deleted.add(urn);
        const own = matches.map(([, s]) => propertyField(s.definition)).find((f) => f !== undefined);
        field = own && !byProperty ? { name: `${PROPERTIES_FIELD}.${property}`, type: own.type } : (own ?? null);
      }
      // A field of no property matches nothing (one hard deleted, say), unless no property could have
      // that name: then it is a mistake (`structuredProperties.`, `structuredProperties.:a`), said so.
      if (field === null && matches.length === 0 && !isDottedName(property)) {
        problems.push(
          `Unknown search ${what} ${JSON.stringify(name)}: ${property === '' ? `a property's name is missing after ${PROPERTIES_FIELD}.` : `${JSON.stringify(property)} is no property's name or field`}; ` +
            `expected a qualified name (${PROPERTIES_FIELD}.io.acryl.privacy.retentionTime) or its field (. as _: ${PROPERTIES_FIELD}.io_acryl_privacy_retentionTime)`,
        );
      }
      out.set(name, field);
    }
    // DataHub formats the set of URNs: `[urn:li:structuredProperty:a, urn:li:structuredProperty:b]`.
    if (deleted.size) problems.push(`Cannot filter on deleted Structured Property [${[...deleted].sort().join(', ')}]`);
    if (problems.length) throw SvcError.validation(problems);
    return out;
  }
}

/**
 * Whether soft-deleted entities are searched: when asked for, or when a filter names `removed` (it
 * then says itself which ones it wants), as DataHub's search does: its clients ask for soft-deleted
 * entities alone with the filter `removed = true`, without the flag (0.14).
 */
function includesRemoved(input: { includeSoftDeleted?: boolean; filters?: OrFilters }): boolean {
  return (input.includeSoftDeleted ?? false) || (input.filters ?? []).some((g) => g.and.some((c) => c.field.replace(SUFFIXES, '') === 'removed'));
}

/** The part after `structuredProperties.` of a field name (suffix stripped); undefined for other fields. */
function propertyPart(name: string): string | undefined {
  if (!name.startsWith(`${PROPERTIES_FIELD}.`)) return undefined;
  return name.slice(PROPERTIES_FIELD.length + 1).replace(SUFFIXES, '');
}

/** The unversioned field name a property part is matched on (`_versioned.a_b.20240614080000.string` → `a_b`). */
function underscored(property: string): string {
  if (VERSIONED_FIELD.test(property)) return property.split('.')[1] ?? '';
  return property.replaceAll('.', '_');
}

function defaultFields(specs: EntitySpec[]): FieldSpec[] {
  return [...new Map(specs.flatMap(keyFields).map((f) => [f.name, f])).values()];
}

/** The fields of every entity type's documents, by name (each has one type whatever the entity type). */
const ANY_TYPE_FIELDS = new Map(ENTITIES.flatMap(baseFields).map((f) => [f.name, f]));

function digest(v: unknown): string {
  return createHash('sha256').update(JSON.stringify(v)).digest('base64url').slice(0, 16);
}

/** Types the values of an expression's leaves by their fields; problems are collected. */
function resolve(e: Expr, fields: Map<string, Resolution>, defaults: FieldSpec[], problems: string[]): Resolved {
  switch (e.kind) {
    case 'all':
      return e;
    case 'and':
    case 'or':
      return { kind: e.kind, of: e.of.map((x) => resolve(x, fields, defaults, problems)) };
    case 'not':
      return { kind: 'not', of: resolve(e.of, fields, defaults, problems) };
    default:
      break;
  }
  if (e.field === DEFAULT_FIELD) {
    if (e.kind === 'exists') return { kind: 'all' }; // a bare `*`
    if (e.kind === 'range') {
      problems.push('query: a range needs a field (field:[a TO b], field:>n)');
      return { kind: 'none' };
    }
    return { kind: 'or', of: defaults.map((f) => typed(e, f, problems)) };
  }
  if (isEntityTypeField(e.field)) return entityTypeCondition(e, problems);
  const f = fields.get(e.field);
  return f ? typed(e, f, problems) : { kind: 'none' };
}

function typed(e: Leaf, f: FieldSpec, problems: string[]): ResolvedLeaf | { kind: 'none' } {
  const value = (v: string): Scalar | undefined => {
    switch (f.type) {
      case 'keyword':
        return v;
      case 'double': {
        const n = numericString(v);
        if (n !== undefined) return n;
        problems.push(`${f.name} holds numbers: ${JSON.stringify(v)} is not a number`);
        return undefined;
      }
      case 'date': {
        const ms = dateMillis(v);
        if (ms === undefined) problems.push(`${f.name} holds dates: ${JSON.stringify(v)} is not a date: ${dateProblem(v)}`);
        return ms;
      }
      case 'boolean':
        if (v === 'true' || v === 'false') return v === 'true';
        problems.push(`${f.name} is true or false, not ${JSON.stringify(v)}`);
        return undefined;
    }
  };
  switch (e.kind) {
    case 'exists':
      return { kind: 'exists', field: f };
    case 'terms':
      return { kind: 'terms', field: f, values: e.values.map(value).filter((v): v is Scalar => v !== undefined) };
    case 'range': {
      if (f.type === 'boolean') {
        problems.push(`${f.name} is true or false: a range does not apply`);
        return { kind: 'none' };
      }
      const bound = (b: { value: string; inclusive: boolean } | undefined) => {
        const v = b && value(b.value);
        return v === undefined ? undefined : { value: v, inclusive: b!.inclusive };
      };
      return { kind: 'range', field: f, min: bound(e.min), max: bound(e.max) };
    }
    case 'wildcard':
      if (f.type !== 'keyword') {
        problems.push(`${f.name} is not a text field: wildcards (*, ?), CONTAIN, START_WITH and END_WITH apply to text fields`);
        return { kind: 'none' };
      }
      return { kind: 'wildcard', field: f, pattern: e.pattern };
  }
}

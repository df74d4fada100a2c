/**
 * Search over GraphQL (DataHub's `scrollAcrossEntities`, `searchAcrossEntities` and
 * `aggregateAcrossEntities`): inputs turned into the search module's terms; field names, filter rules
 * (a soft-deleted property's field is refused) and facet values are the search module's.
 */
import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { EntityRecord } from '../../../entities/entityService.ts';
import { SvcError } from '../../../shared/errors.ts';
import type { SearchInput } from '../../../search/searchService.ts';
import type { OrFilters } from '../../../search/expr.ts';
import { entityRef, primeEntity, type GraphQLContext } from '../context.ts';
import { entityNamesOf } from '../entityTypes.ts';
import { COMMON_FIELD_ASPECTS } from './commonAspects.ts';
import { MODEL_FIELD_ASPECTS } from './modelAspects.ts';
import { orFilters, searchOrder, type FacetFilterInput, type SortInput } from '../inputs.ts';
import { GRAPHQL_INPUT_LIMITS } from '../limits.ts';

const DEFAULT_COUNT = 10;
/** DataHub's default number of values per facet. */
const DEFAULT_AGG_VALUES = 20;

interface SearchFlags {
  maxAggValues?: number | null;
  includeSoftDeleted?: boolean | null;
}

interface CommonInput {
  types?: string[] | null;
  query: string;
  count?: number | null;
  orFilters?: { and?: FacetFilterInput[] | null }[] | null;
  searchFlags?: SearchFlags | null;
  sortInput?: SortInput | null;
}

/**
 * The field names selected at `path` below the field being resolved (through fragments too; a
 * fragment spread again at the same depth is walked once, as GraphQL merges it).
 */
function fieldsAt(info: GraphQLResolveInfo, path: string[]): Set<string> {
  const out = new Set<string>();
  const walked = new Set<string>();
  const visitFragment = (name: string, depth: number): void => {
    if (walked.has(`${depth} ${name}`)) return;
    walked.add(`${depth} ${name}`);
    visit(info.fragments[name]?.selectionSet, depth);
  };
  const visit = (set: SelectionSetNode | undefined, depth: number): void => {
    for (const s of set?.selections ?? []) {
      if (s.kind === 'InlineFragment') visit(s.selectionSet, depth);
      else if (s.kind === 'FragmentSpread') visitFragment(s.name.value, depth);
      else if (depth === path.length) out.add(s.name.value);
      else if (s.name.value === path[depth]) visit(s.selectionSet, depth + 1);
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet, 0);
  return out;
}

/** Entity fields answered from the URN alone. */
const URN_FIELDS = new Set(['urn', 'type', '__typename']);

/**
 * The aspects the entity fields read (see entityResolvers.ts and propertyResolvers.ts); the others are
 * answered from the URN or the key aspect, which every read has. A field missing here still works: it
 * reads its entity again, whole (see primeEntity).
 */
const FIELD_ASPECTS: Record<string, string[]> = {};
for (const byField of [
  {
    structuredProperties: ['structuredProperties'],
    definition: ['propertyDefinition'],
    info: ['dataTypeInfo', 'entityTypeInfo'],
    name: ['dataHubIngestionSourceInfo', 'dataProcessInstanceProperties'],
    created: ['dataProcessInstanceProperties'],
  },
  COMMON_FIELD_ASPECTS,
  MODEL_FIELD_ASPECTS,
]) {
  for (const [field, aspects] of Object.entries(byField)) FIELD_ASPECTS[field] = [...(FIELD_ASPECTS[field] ?? []), ...aspects];
}

/** What a search field's selection asks of the search: the aspects to read its entities with (none: URNs only), and the total. */
interface Selection {
  aspects: string[] | undefined;
  total: boolean;
}

/**
 * The selection of each search field of a parsed document: the same on every execution of the
 * document (yoga caches parsed documents by their text), so it is worked out once.
 */
const selections = new WeakMap<FieldNode, Selection>();

function selectionOf(info: GraphQLResolveInfo): Selection {
  const node = info.fieldNodes[0]!;
  let known = selections.get(node);
  if (!known) {
    const entityFields = [...fieldsAt(info, ['searchResults', 'entity'])];
    const aspects = entityFields.some((f) => !URN_FIELDS.has(f)) ? [...new Set(entityFields.flatMap((f) => FIELD_ASPECTS[f] ?? []))] : undefined;
    known = { aspects, total: fieldsAt(info, []).has('total') };
    // A field merged from several nodes (the same response key twice) is worked out each time.
    if (info.fieldNodes.length === 1) selections.set(node, known);
  }
  return known;
}

/** Counts a search's page (at most a full page) against the request's budget of results; the page size taken. */
function takeResults(ctx: GraphQLContext, count: number): number {
  const page = Math.min(Math.max(count, 0), GRAPHQL_INPUT_LIMITS.searchPage);
  ctx.searchResultsLeft -= page;
  if (ctx.searchResultsLeft < 0) {
    throw SvcError.validation([`A request may ask for ${GRAPHQL_INPUT_LIMITS.searchResults} search results in all, and this search takes it past that: ask for the rest in another request`]);
  }
  return page;
}

/**
 * What every search input has, as the search module's terms. When the query asks for more of the
 * entities than their URN, they are read with the aspects its fields need (and put in the request's
 * loader, saving a second read); with none otherwise.
 */
function searchInput(ctx: GraphQLContext, input: CommonInput, info: GraphQLResolveInfo): { search: SearchInput; primed: string[] | undefined } {
  const count = input.count ?? DEFAULT_COUNT;
  takeResults(ctx, count);
  const { aspects: primed, total } = selectionOf(info);
  const search: SearchInput = {
    entityTypes: entityNamesOf(input.types),
    query: input.query,
    filters: orFilters(input.orFilters),
    count,
    ...searchOrder(input.sortInput),
    includeSoftDeleted: input.searchFlags?.includeSoftDeleted ?? false,
    aspects: primed ?? [],
    total,
  };
  return { search, primed };
}

/** The page's entities as results; read with the aspects the query needs, they are the loader's answer for their URNs. */
function results(ctx: GraphQLContext, entities: EntityRecord[], primed: string[] | undefined) {
  const aspects = primed && new Set(primed);
  return entities.map((e) => {
    if (aspects) primeEntity(ctx, e, aspects);
    return { entity: entityRef(e.urn), matchedFields: [], extraProperties: [] };
  });
}

export const searchResolvers = {
  Query: {
    async scrollAcrossEntities(_: unknown, { input }: { input: CommonInput & { scrollId?: string | null } }, ctx: GraphQLContext, info: GraphQLResolveInfo) {
      const { search, primed } = searchInput(ctx, input, info);
      const r = await ctx.catalog.search.search(ctx.principal, { ...search, scrollId: input.scrollId ?? undefined });
      return { nextScrollId: r.scrollId ?? null, count: r.entities.length, total: r.total ?? 0, searchResults: results(ctx, r.entities, primed), facets: [] };
    },
    async searchAcrossEntities(_: unknown, { input }: { input: CommonInput & { start?: number | null } }, ctx: GraphQLContext, info: GraphQLResolveInfo) {
      const start = input.start ?? 0;
      const { search, primed } = searchInput(ctx, input, info);
      const r = await ctx.catalog.search.search(ctx.principal, { ...search, start });
      return { start, count: r.entities.length, total: r.total ?? 0, searchResults: results(ctx, r.entities, primed), facets: [] };
    },
    async scrollAcrossLineage(_: unknown, { input }: { input: LineageSearchInput & { scrollId?: string | null } }, ctx: GraphQLContext) {
      const start = input.scrollId ? scrollOffset(input.scrollId) : 0;
      const page = await lineagePage(ctx, input, start);
      return { nextScrollId: page.more ? String(start + page.count) : null, ...page.results };
    },
    async searchAcrossLineage(_: unknown, { input }: { input: LineageSearchInput & { start?: number | null } }, ctx: GraphQLContext) {
      const start = input.start ?? 0;
      if (start < 0) throw SvcError.validation([`start: must be 0 or more, got ${start}`]);
      return { start, ...(await lineagePage(ctx, input, start)).results };
    },
    async aggregateAcrossEntities(_: unknown, { input }: { input: Omit<CommonInput, 'count' | 'sortInput'> & { facets?: (string | null)[] | null } }, ctx: GraphQLContext) {
      // Each facet is an aggregation over every matching entity: 10,000 of them were 73 s of database work.
      const { facets: maxFacets, aggValues } = GRAPHQL_INPUT_LIMITS;
      if ((input.facets?.length ?? 0) > maxFacets) throw SvcError.validation([`facets: at most ${maxFacets} facets, got ${input.facets!.length}`]);
      const facets = await ctx.catalog.search.aggregate(ctx.principal, {
        entityTypes: entityNamesOf(input.types),
        query: input.query,
        filters: orFilters(input.orFilters),
        includeSoftDeleted: input.searchFlags?.includeSoftDeleted ?? false,
        facets: (input.facets ?? []).filter((f): f is string => typeof f === 'string'),
        maxAggValues: Math.min(input.searchFlags?.maxAggValues ?? DEFAULT_AGG_VALUES, aggValues),
      });
      return {
        facets: facets.map((f) => ({
          field: f.field,
          displayName: null,
          aggregations: f.aggregations.map((a) => ({ value: a.value, count: a.count, entity: facetEntity(a.value), displayName: null })),
        })),
      };
    },
  },
};

/** What scrollAcrossLineage and searchAcrossLineage share of their input. */
interface LineageSearchInput {
  urn: string;
  direction: 'UPSTREAM' | 'DOWNSTREAM';
  types?: string[] | null;
  query?: string | null;
  count?: number | null;
  orFilters?: { and?: FacetFilterInput[] | null }[] | null;
}

/** One page of the entities reached from `input.urn`, from `start`: the results both lineage searches answer. */
async function lineagePage(ctx: GraphQLContext, input: LineageSearchInput, start: number) {
  const count = takeResults(ctx, input.count ?? DEFAULT_COUNT);
  const { maxHops, filters } = degreeFilter(orFilters(input.orFilters));
  const r = await ctx.catalog.lineage.lineage(ctx.principal, {
    urn: input.urn,
    direction: input.direction,
    maxHops,
    entityTypes: entityNamesOf(input.types),
    // `*` (or nothing) matches every entity reached.
    query: input.query && input.query !== '*' ? input.query : undefined,
    filters,
    start,
    count,
  });
  return {
    count,
    more: count > 0 && r.total > start + count,
    results: {
      count: r.entities.length,
      total: r.total,
      searchResults: r.entities.map((e) => ({ entity: entityRef(e.urn), degree: e.degree, degrees: [e.degree], paths: [{ path: e.path.map(entityRef) }], matchedFields: [] })),
      facets: [],
    },
  };
}

/** A lineage scroll id: the offset of the next page. */
function scrollOffset(scrollId: string): number {
  if (!/^[0-9]{1,9}$/.test(scrollId)) throw SvcError.validation([`scrollId: ${JSON.stringify(scrollId)} is not a scroll id of this lineage search (pass back the nextScrollId it answered)`]);
  return Number(scrollId);
}

/**
 * DataHub's `degree` filter (its SDK sends `degree` = "1", "2" or "3+" in every AND of the filters):
 * the most hops to follow, "3+" for all; the filters without it.
 */
function degreeFilter(filters: OrFilters | undefined): { maxHops: number | undefined; filters: OrFilters | undefined } {
  let maxHops: number | undefined;
  let named = false;
  const rest = (filters ?? []).map((g) => ({
    and: g.and.filter((c) => {
      if (c.field !== 'degree') return true;
      named = true;
      for (const v of c.values ?? []) {
        const hops = v === '3+' ? Infinity : Number(v);
        if (!Number.isInteger(hops) && hops !== Infinity) throw SvcError.validation([`degree: "1", "2" or "3+", not ${JSON.stringify(v)}`]);
        maxHops = Math.max(maxHops ?? 0, hops);
      }
      return false;
    }),
  }));
  // An AND left empty matches everything, and so does the OR holding it.
  return { maxHops: named && maxHops !== Infinity ? maxHops : undefined, filters: rest.length && rest.every((g) => g.and.length > 0) ? rest : undefined };
}

/** The entity a facet value names, when it is a URN. */
function facetEntity(value: string) {
  if (!value.startsWith('urn:li:')) return null;
  try {
    return entityRef(value);
  } catch {
    return null;
  }
}

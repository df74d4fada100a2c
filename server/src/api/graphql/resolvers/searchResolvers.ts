/**
 * Search over GraphQL (DataHub's `scrollAcrossEntities`, `searchAcrossEntities` and
 * `aggregateAcrossEntities`): inputs turned into the search module's terms; field names, filter rules
 * (a soft-deleted property's field is refused) and facet values are the search module's.
 */
import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { EntityRecord } from '../../../entities/entityService.ts';
import type { SearchInput } from '../../../search/searchService.ts';
import { entityRef, type GraphQLContext } from '../context.ts';
import { entityNamesOf } from '../entityTypes.ts';
import { descending, orFilters, type FacetFilterInput, type SortInput } from '../inputs.ts';

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

/** Whether the query selects `name` directly under the field being resolved (through fragments too). */
function selects(info: GraphQLResolveInfo, name: string): boolean {
  const visit = (set: SelectionSetNode | undefined): boolean =>
    (set?.selections ?? []).some((s) => {
      if (s.kind === 'Field') return s.name.value === name;
      if (s.kind === 'InlineFragment') return visit(s.selectionSet);
      return visit(info.fragments[s.name.value]?.selectionSet);
    });
  return info.fieldNodes.some((n) => visit(n.selectionSet));
}

/** What every search input has, as the search module's terms. Entities are read lazily (their fields through the loader). */
function searchInput(input: CommonInput, info: GraphQLResolveInfo): SearchInput {
  return {
    entityTypes: entityNamesOf(input.types),
    query: input.query,
    filters: orFilters(input.orFilters),
    count: input.count ?? DEFAULT_COUNT,
    descending: descending(input.sortInput),
    includeSoftDeleted: input.searchFlags?.includeSoftDeleted ?? false,
    aspects: [],
    total: selects(info, 'total'),
  };
}

const results = (entities: EntityRecord[]) => entities.map((e) => ({ entity: entityRef(e.urn), matchedFields: [] }));

export const searchResolvers = {
  Query: {
    async scrollAcrossEntities(_: unknown, { input }: { input: CommonInput & { scrollId?: string | null } }, ctx: GraphQLContext, info: GraphQLResolveInfo) {
      const r = await ctx.catalog.search.search(ctx.principal, { ...searchInput(input, info), scrollId: input.scrollId ?? undefined });
      return { nextScrollId: r.scrollId ?? null, count: r.entities.length, total: r.total ?? 0, searchResults: results(r.entities), facets: [] };
    },
    async searchAcrossEntities(_: unknown, { input }: { input: CommonInput & { start?: number | null } }, ctx: GraphQLContext, info: GraphQLResolveInfo) {
      const start = input.start ?? 0;
      const r = await ctx.catalog.search.search(ctx.principal, { ...searchInput(input, info), start });
      return { start, count: r.entities.length, total: r.total ?? 0, searchResults: results(r.entities), facets: [] };
    },
    async aggregateAcrossEntities(_: unknown, { input }: { input: Omit<CommonInput, 'count' | 'sortInput'> & { facets?: (string | null)[] | null } }, ctx: GraphQLContext) {
      const facets = await ctx.catalog.search.aggregate(ctx.principal, {
        entityTypes: entityNamesOf(input.types),
        query: input.query,
        filters: orFilters(input.orFilters),
        includeSoftDeleted: input.searchFlags?.includeSoftDeleted ?? false,
        facets: (input.facets ?? []).filter((f): f is string => typeof f === 'string'),
        maxAggValues: input.searchFlags?.maxAggValues ?? DEFAULT_AGG_VALUES,
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

/** The entity a facet value names, when it is a URN. */
function facetEntity(value: string) {
  if (!value.startsWith('urn:li:')) return null;
  try {
    return entityRef(value);
  } catch {
    return null;
  }
}

/**
 * Rest.li's `POST /entities?action=search`, as DataHub's clients call it: `{"input", "entity", "start",
 * "count", "filter"?, "sort"?, "searchFlags"?}`, answered `{"value": {"from", "pageSize", "numEntities",
 * "entities": [{"entity": "<urn>", "matchedFields": []}], "metadata": {"aggregations": []}}}`. The
 * clients find a domain or data product by its name so (a glossary term's or a source's `domain:
 * Marketing`), and containers by their properties; it is a thin shell over the search service, the
 * filter read as GraphQL's `orFilters` are (api/searchFilters.ts).
 *
 *   {"input": "*", "entity": "domain", "start": 0, "count": 10,
 *    "filter": {"or": [{"and": [{"field": "name", "values": ["Marketing"], "condition": "EQUAL"}]}]}}
 */
import type { Principal } from '../../auth/authorize.ts';
import type { SearchService } from '../../search/searchService.ts';
import { registry } from '../../registry/registry.ts';
import { SvcError } from '../../shared/errors.ts';
import { searchFilters, type FacetFilterInput } from '../searchFilters.ts';

const PARAMETERS = ['input', 'entity', 'start', 'count', 'filter', 'sort', 'searchFlags'];
const CRITERION_KEYS = ['field', 'value', 'values', 'condition', 'negated'];
/** The search flags svc acts on; another one is refused rather than ignored. */
const FLAGS = ['includeSoftDeleted'];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One criterion of a Rest.li filter, checked for the types GraphQL's schema would have checked. */
function criterion(raw: unknown, where: string, problems: string[]): FacetFilterInput | undefined {
  if (!isObject(raw)) {
    problems.push(`${where} must be an object {"field", "values", "condition", "negated"}`);
    return undefined;
  }
  const before = problems.length;
  for (const k of Object.keys(raw)) if (!CRITERION_KEYS.includes(k)) problems.push(`${where}.${k} is not a criterion's field; a criterion has ${CRITERION_KEYS.join(', ')}`);
  if (typeof raw.field !== 'string' || raw.field === '') problems.push(`${where}.field must be a field name`);
  if (raw.value !== undefined && raw.value !== null && typeof raw.value !== 'string') problems.push(`${where}.value must be a string`);
  if (raw.values !== undefined && raw.values !== null && !(Array.isArray(raw.values) && raw.values.every((v) => typeof v === 'string'))) problems.push(`${where}.values must be a list of strings`);
  if (raw.condition !== undefined && raw.condition !== null && typeof raw.condition !== 'string') problems.push(`${where}.condition must be a condition's name, e.g. EQUAL`);
  if (raw.negated !== undefined && raw.negated !== null && typeof raw.negated !== 'boolean') problems.push(`${where}.negated must be true or false`);
  return problems.length > before ? undefined : (raw as unknown as FacetFilterInput);
}

/** The filter's groups (`{"or": [{"and": [...]}]}`, or the older `{"criteria": [...]}`, one group). */
function filterGroups(raw: unknown, problems: string[]): { and: FacetFilterInput[] }[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw) || (!Array.isArray(raw.or) && !Array.isArray(raw.criteria))) {
    problems.push('filter must be {"or": [{"and": [criteria]}]} or {"criteria": [criteria]}');
    return undefined;
  }
  const groups: unknown[] = Array.isArray(raw.or) ? raw.or : [{ and: raw.criteria }];
  const where = (i: number) => (Array.isArray(raw.or) ? `filter.or[${i}]` : 'filter.criteria');
  return groups.map((g, i) => {
    const list = isObject(g) && Array.isArray(g.and) ? g.and : undefined;
    if (!list) {
      problems.push(`${where(i)} must be {"and": [criteria]}`);
      return { and: [] };
    }
    const at = Array.isArray(raw.or) ? `${where(i)}.and` : where(i);
    return { and: list.flatMap((c, j) => criterion(c, `${at}[${j}]`, problems) ?? []) };
  });
}

/** A page of the entities of one type matching the input and filter, as DataHub's Rest.li search answers it. */
export async function restliSearch(search: SearchService, principal: Principal, body: unknown) {
  if (!isObject(body)) throw SvcError.validation(['The body must be {"input", "entity", "start", "count", "filter"?}']);
  const problems: string[] = [];
  for (const k of Object.keys(body)) if (!PARAMETERS.includes(k)) problems.push(`Parameter '${k}' is not a parameter of search; it takes ${PARAMETERS.join(', ')}`);
  if (typeof body.input !== 'string') problems.push(`Parameter 'input' is required: the query, * for every entity`);
  if (typeof body.entity !== 'string' || body.entity === '') problems.push(`Parameter 'entity' is required: an entity type, e.g. dataset`);
  const integer = (k: string, fallback?: number): number => {
    const v = body[k] ?? fallback;
    if (Number.isSafeInteger(v) && (v as number) >= 0) return v as number;
    problems.push(`Parameter '${k}' ${fallback === undefined ? 'is required: ' : 'must be '}an integer, 0 or more`);
    return 0;
  };
  const start = integer('start', 0);
  const count = integer('count');
  const groups = filterGroups(body.filter, problems);
  const sort = body.sort;
  if (sort !== undefined && sort !== null && !(isObject(sort) && typeof sort.field === 'string' && (sort.order === undefined || sort.order === 'ASCENDING' || sort.order === 'DESCENDING'))) {
    problems.push(`Parameter 'sort' must be {"field", "order": "ASCENDING" | "DESCENDING"}`);
  }
  const flags = body.searchFlags;
  if (flags !== undefined && flags !== null) {
    if (!isObject(flags)) problems.push(`Parameter 'searchFlags' must be an object`);
    else {
      for (const k of Object.keys(flags)) if (!FLAGS.includes(k)) problems.push(`searchFlags.${k} is not a flag svc acts on; it takes ${FLAGS.join(', ')}`);
      if (flags.includeSoftDeleted !== undefined && typeof flags.includeSoftDeleted !== 'boolean') problems.push('searchFlags.includeSoftDeleted must be true or false');
    }
  }
  if (problems.length) throw SvcError.validation(problems);

  const order = isObject(sort) ? { sortField: sort.field as string, descending: sort.order === 'DESCENDING' } : {};
  const r = await search.search(principal, {
    entityTypes: [registry.entity(body.entity as string).name],
    query: body.input as string,
    filters: searchFilters(groups, 'filter'),
    count,
    start,
    ...order,
    includeSoftDeleted: isObject(flags) && flags.includeSoftDeleted === true,
    aspects: [],
    total: true,
  });
  return {
    from: start,
    pageSize: count,
    numEntities: r.total ?? r.entities.length,
    entities: r.entities.map((e) => ({ entity: e.urn, matchedFields: [] })),
    metadata: { aggregations: [] },
  };
}

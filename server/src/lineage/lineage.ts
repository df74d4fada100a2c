/**
 * Lineage: the entities upstream or downstream of one, hop by hop, as DataHub's `scrollAcrossLineage`
 * answers it, from the aspects that name lineage (DataHub's lineage relationships):
 *
 * - `upstreamLineage`: the datasets an entity is derived from are upstream of it (`DownstreamOf`);
 * - `dataJobInputOutput`: a job's input datasets and jobs are upstream of it (`Consumes`,
 *   `DownstreamOf`), its output datasets downstream of it (`Produces`);
 * - `chartInfo`: a chart's input datasets are upstream of it (`Consumes`);
 * - `dashboardInfo`: a dashboard's charts, datasets and dashboards are upstream of it.
 *
 * An entity's own aspects give the neighbours they name; the neighbours naming it are found as
 * `datahub delete` finds references (entities/references.ts): the latest rows of those aspects
 * mentioning its URN, each checked by reading the aspect. Entities are reached at their fewest hops
 * (their degree), through the first path found. Of those, the ones of the types asked that exist and
 * are not soft-deleted (or are, as a `removed` filter asks) are answered from the primary store, at
 * once after a write; with a query or other filters, the search service picks them (from what was
 * delivered to search).
 */
import { authorize, type Principal } from '../auth/authorize.ts';
import type { Pool } from '../db/pool.ts';
import { latestMentioning } from '../entities/aspectStore.ts';
import type { EntityService } from '../entities/entityService.ts';
import { registry } from '../registry/registry.ts';
import { FIELD_SUFFIXES, type OrFilters } from '../search/expr.ts';
import { MAX_RESULT_WINDOW, type SearchService } from '../search/searchService.ts';
import { SvcError } from '../shared/errors.ts';

export type LineageDirection = 'UPSTREAM' | 'DOWNSTREAM';

type Obj = Record<string, unknown>;

/** URNs at `path` of a value: `a/*` is every item of array `a`, `a/*\/b` the field `b` of each. */
function urnsAt(value: Obj, path: string): string[] {
  let nodes: unknown[] = [value];
  for (const step of path.split('/')) {
    nodes = nodes.flatMap((n) => (step === '*' ? (Array.isArray(n) ? n : []) : n && typeof n === 'object' && !Array.isArray(n) ? [(n as Obj)[step]] : []));
  }
  return nodes.filter((n): n is string => typeof n === 'string' && n.startsWith('urn:li:'));
}

/** Where each lineage aspect names the entities upstream and downstream of the entity holding it. */
export const LINEAGE_ASPECTS = new Map<string, { upstream: string[]; downstream: string[] }>(Object.entries({
  upstreamLineage: { upstream: ['upstreams/*/dataset'], downstream: [] },
  dataJobInputOutput: {
    upstream: ['inputDatasets/*', 'inputDatasetEdges/*/destinationUrn', 'inputDatajobs/*', 'inputDatajobEdges/*/destinationUrn'],
    downstream: ['outputDatasets/*', 'outputDatasetEdges/*/destinationUrn'],
  },
  chartInfo: { upstream: ['inputs/*/string', 'inputEdges/*/destinationUrn'], downstream: [] },
  dashboardInfo: {
    upstream: ['charts/*', 'chartEdges/*/destinationUrn', 'datasets/*', 'datasetEdges/*/destinationUrn', 'dashboards/*/destinationUrn'],
    downstream: [],
  },
}));

const side = (direction: LineageDirection) => (direction === 'UPSTREAM' ? 'upstream' : 'downstream');
const opposite = (direction: LineageDirection): LineageDirection => (direction === 'UPSTREAM' ? 'DOWNSTREAM' : 'UPSTREAM');

/** The URNs an aspect value names in `direction` of its holder. */
function named(aspect: string, value: Obj, direction: LineageDirection): string[] {
  return (LINEAGE_ASPECTS.get(aspect)?.[side(direction)] ?? []).flatMap((p) => urnsAt(value, p));
}

/** At most this many entities are reached (DataHub caps a lineage search too). */
export const MAX_LINEAGE_ENTITIES = MAX_RESULT_WINDOW;

export interface LineageInput {
  urn: string;
  direction: LineageDirection;
  /** The most hops followed (undefined: as many as there are). */
  maxHops?: number;
  entityTypes: string[];
  query?: string;
  filters?: OrFilters;
  start: number;
  count: number;
}

export interface LineageEntity {
  urn: string;
  degree: number;
  /** The entities from the one asked for to this one, both included. */
  path: string[];
}

export class LineageService {
  constructor(
    private readonly pool: Pool,
    private readonly entities: EntityService,
    private readonly search: SearchService,
  ) {}

  /** A page of the entities reached from `input.urn` that match the types and filters, by degree then URN; and how many match. */
  async lineage(principal: Principal, input: LineageInput): Promise<{ entities: LineageEntity[]; total: number }> {
    authorize(principal, 'READ');
    if (input.count < 0 || input.start < 0) throw SvcError.validation([`start and count must be 0 or more (got start ${input.start}, count ${input.count})`]);
    const source = registry.resolveUrn(input.urn);
    const reached = await this.reach(principal, source.urn, input.direction, input.maxHops ?? Infinity);
    if (reached.size === 0) return { entities: [], total: 0 };
    const urns = [...reached.keys()].filter((u) => input.entityTypes.length === 0 || input.entityTypes.includes(registry.resolveUrn(u).spec.name));
    const status = input.query === undefined ? statusOnly(input.filters) : undefined;
    const matching = status ? await this.existing(principal, urns, status) : await this.searched(principal, urns, input);
    const ordered = matching.map((u) => reached.get(u)!).sort((a, b) => a.degree - b.degree || (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
    return { entities: ordered.slice(input.start, input.start + input.count), total: ordered.length };
  }

  /**
   * Of `urns`, those of entities that exist with the status asked, read from the primary store: a
   * lineage search without other filters answers at once after a write, as it does not wait for search.
   */
  private async existing(principal: Principal, urns: string[], status: Status): Promise<string[]> {
    const records = await this.entities.getMany(principal, urns.map((u) => registry.resolveUrn(u)), ['status']);
    const removed = (r: (typeof records)[number]) => (r.aspects.get('status')?.value as { removed?: boolean } | undefined)?.removed === true;
    return records.filter((r) => status === 'all' || (status === 'removed') === removed(r)).map((r) => r.urn);
  }

  /** Of `urns`, those the query and filters find (search's documents: what was delivered to search). */
  private async searched(principal: Principal, urns: string[], input: LineageInput): Promise<string[]> {
    if (urns.length === 0) return [];
    const types = [...new Set(urns.map((u) => registry.resolveUrn(u).spec.name))];
    const byUrn = { field: 'urn', condition: 'EQUAL' as const, values: urns };
    const filters: OrFilters = input.filters?.length ? input.filters.map((g) => ({ and: [...g.and, byUrn] })) : [{ and: [byUrn] }];
    const query = input.query;
    const out: string[] = [];
    let scrollId: string | undefined;
    do {
      const page = await this.search.search(principal, { entityTypes: types, query, filters, count: 1000, scrollId, aspects: [] });
      for (const e of page.entities) out.push(e.urn);
      scrollId = page.scrollId;
    } while (scrollId);
    return out;
  }

  /** The entities reached from `urn` within `maxHops`, each at its fewest hops. */
  private async reach(principal: Principal, urn: string, direction: LineageDirection, maxHops: number): Promise<Map<string, LineageEntity>> {
    const reached = new Map<string, LineageEntity>();
    let frontier: LineageEntity[] = [{ urn, degree: 0, path: [urn] }];
    while (frontier.length && frontier[0]!.degree < maxHops && reached.size < MAX_LINEAGE_ENTITIES) {
      const next: LineageEntity[] = [];
      for (const from of frontier) {
        for (const to of await this.neighbours(principal, from.urn, direction)) {
          if (to === urn || reached.has(to) || reached.size >= MAX_LINEAGE_ENTITIES) continue;
          const entity = { urn: to, degree: from.degree + 1, path: [...from.path, to] };
          reached.set(to, entity);
          next.push(entity);
        }
      }
      frontier = next;
    }
    return reached;
  }

  /** The entities one hop from `urn` in `direction`: those its aspects name, and those naming it the other way. */
  private async neighbours(principal: Principal, urn: string, direction: LineageDirection): Promise<string[]> {
    const target = registry.resolveUrn(urn);
    const own = registry.aspectsOf(target.spec).map((a) => a.name).filter((a) => LINEAGE_ASPECTS.has(a));
    const out = new Set<string>();
    if (own.length) {
      const [record] = await this.entities.getMany(principal, [target], own);
      for (const [aspect, stored] of record?.aspects ?? []) for (const u of named(aspect, stored.value as Obj, direction)) out.add(u);
    }
    const holders = [...LINEAGE_ASPECTS].filter(([, paths]) => paths[side(opposite(direction))].length > 0).map(([a]) => a);
    for (const row of await latestMentioning(this.pool, holders, urn)) {
      const holder = registry.resolveUrn(row.urn);
      const [record] = await this.entities.getMany(principal, [holder], [row.aspect]);
      const value = record?.aspects.get(row.aspect)?.value as Obj | undefined;
      if (value && named(row.aspect, value, opposite(direction)).includes(urn)) out.add(row.urn);
    }
    return [...out].filter(resolvable).sort();
  }
}

/** Which entities a lineage search answers by their soft delete: live ones, soft-deleted ones, or all. */
type Status = 'live' | 'removed' | 'all';

/**
 * The status filters pick, when they name nothing else: no filters pick live entities (as search
 * does); DataHub's SDK adds `removed` (negated `true`: live; `true`: soft-deleted only) to every
 * filter, and `urn` EXISTS for "all". Undefined when a filter names another field: search decides.
 */
function statusOnly(filters: OrFilters | undefined): Status | undefined {
  if (!filters?.length) return 'live';
  const picks = new Set<Status>();
  for (const group of filters) {
    let pick: Status = 'all';
    for (const c of group.and) {
      if (c.field === 'urn' && c.condition === 'EXISTS' && !c.negated) continue;
      const values = c.values ?? [];
      if (c.field.replace(FIELD_SUFFIXES, '') !== 'removed' || (c.condition ?? 'EQUAL') !== 'EQUAL' || values.length !== 1 || !['true', 'false'].includes(values[0]!)) return undefined;
      const wanted: Status = (values[0] === 'true') !== Boolean(c.negated) ? 'removed' : 'live';
      if (pick !== 'all' && pick !== wanted) return undefined;
      pick = wanted;
    }
    picks.add(pick);
  }
  return picks.size === 1 ? [...picks][0]! : 'all';
}

/** Whether a URN names an entity of the registry (an aspect may name one svc cannot resolve). */
function resolvable(urn: string): boolean {
  try {
    registry.resolveUrn(urn);
    return true;
  } catch {
    return false;
  }
}

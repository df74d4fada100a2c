/**
 * The generic entity endpoints of `/openapi/v2/entity` and `/openapi/v3/entity` (DataHub's generic
 * entity controllers): thin adapters over {@link EntityService} that differ only in JSON shapes.
 */
import type { Request, Router } from 'express';
import { SvcError } from '../../shared/errors.ts';
import { registry } from '../../registry/registry.ts';
import { MAX_PAGE, recordsOf, type AspectInput, type EntityService, type WriteMode } from '../../entities/entityService.ts';
import { principalOf } from '../auth.ts';
import { sendJson as send } from '../json.ts';
import { queryParams } from './queryParams.ts';
import type { SearchService } from '../../search/searchService.ts';
import { aspectBody, aspectWrapper, batchAspects, entityShape, type ApiVersion } from './shapes.ts';

const systemMetadata = { type: 'boolean', default: false, description: 'Include system metadata and audit stamps' } as const;
const includeSoftDelete = { type: 'boolean', default: false, description: 'Count soft-deleted entities (status.removed = true) too' } as const;
const aspects = { type: 'list', aliases: ['aspectNames'], description: 'Aspects to return (all when absent); repeatable or comma-separated' } as const;

function postAspectQueries(createByDefault: boolean, createIfNotExists: string) {
  return queryParams({
    createIfNotExists: { type: 'boolean', default: createByDefault, description: createIfNotExists },
    createIfEntityNotExists: { type: 'boolean', default: false, description: 'Refuse (412) when the entity exists' },
    async: { type: 'boolean', default: false, description: 'Answer 202 instead of 200 (the write is done before the answer either way)' },
    systemMetadata,
  });
}

/** The query parameters of each entity route (also the OpenAPI document's). */
export const ENTITY_QUERIES = {
  list: queryParams({
    aspects,
    count: { type: 'integer', default: 10, minimum: 1, description: `Page size (larger than ${MAX_PAGE} is read as ${MAX_PAGE})` },
    scrollId: { type: 'string', description: 'The scrollId of the previous page, to read the next one' },
    sort: {
      type: 'string',
      default: 'urn',
      description: 'Sort field: urn, or a date field of the entity type\'s search documents (requestTimeMs of dataHubExecutionRequest, created of dataProcessInstance, lastModifiedAt of query); a field other than urn lists from search',
    },
    sortOrder: { type: 'enum', values: ['ASCENDING', 'DESCENDING'], default: 'ASCENDING', description: 'Sort order' },
    query: {
      type: 'string',
      description:
        'Query string (OpenSearch query_string syntax) over urn, removed, the key-aspect fields and structuredProperties.<field>, e.g. structuredProperties.io_acryl_privacy_retentionTime:>45; "*" (the default) lists every entity from the primary store',
    },
    includeSoftDelete,
    systemMetadata,
    skipCache: { type: 'ignored', description: 'Taken for DataHub clients; svc has no cache to skip' },
    pitKeepAlive: { type: 'ignored', description: 'Taken for DataHub clients; no effect' },
  }),
  batch: queryParams({
    async: { type: 'boolean', default: true, description: 'Answer 202 with the URNs only (the write is done before the answer either way)' },
    systemMetadata,
  }),
  getEntity: queryParams({ aspects, systemMetadata }),
  headEntity: queryParams({ includeSoftDelete }),
  deleteEntity: queryParams({
    aspects: { type: 'list', description: 'Delete only these aspects (the key aspect among them deletes the entity)' },
    clear: { type: 'boolean', default: false, description: 'Delete every aspect but the key' },
  }),
  getAspect: queryParams({ version: { type: 'integer', default: 0, minimum: 0, description: 'Version to read; 0 is the latest' }, systemMetadata }),
  headAspect: queryParams({ includeSoftDelete }),
  /**
   * v3 creates by default, as DataHub's does (a second POST of an existing aspect is 412 unless
   * `createIfNotExists=false`); v2 creates or updates, as DataHub's documented v2 calls (a restore
   * after a soft delete, a second set) need: `createIfNotExists` is v3's parameter. v2 still takes
   * `createIfNotExists=true` from DataHub clients.
   */
  postAspect: {
    v3: postAspectQueries(true, 'Refuse (412) when the aspect exists (the default): pass false to create or update it'),
    v2: postAspectQueries(false, 'Refuse (412) when the aspect exists; by default (false) v2 creates or updates it'),
  },
  patchAspect: queryParams({
    async: { type: 'boolean', default: false, description: 'Answer 202 instead of 200 (the write is done before the answer either way)' },
    systemMetadata,
  }),
  deleteAspect: queryParams({}),
};

function requireBody(req: Request): unknown {
  if (req.body === undefined) throw SvcError.validation(['Expected a JSON request body (Content-Type: application/json)']);
  return req.body;
}

function writeMode(q: { createIfNotExists: boolean; createIfEntityNotExists: boolean }): WriteMode {
  if (q.createIfEntityNotExists) return 'create_entity';
  return q.createIfNotExists ? 'create' : 'upsert';
}

/**
 * Adds the routes of one API version to `router` (the authenticated API router), with full paths:
 * metrics label requests with the route's path, which must be whole. Routes sit directly on the API
 * router rather than in a router of their own: a request that leaves a router unanswered goes on only
 * at the event loop's next turn, and every write would leave the v2 router that way. One route per
 * path, its methods chained, so a path is matched once.
 */
export function entityRoutes(router: Router, service: EntityService, search: SearchService, v: ApiVersion): void {
  const base = `/openapi/${v}/entity`;
  const listRoute = router.route(`${base}/:entityName`);
  const entityRoute = router.route(`${base}/:entityName/:urn`);
  const aspectRoute = router.route(`${base}/:entityName/:urn/:aspectName`);

  listRoute.get(async (req, res) => {
    const spec = registry.entity(req.params.entityName);
    const q = ENTITY_QUERIES.list.parse(req);
    const options = {
      aspects: q.aspects,
      count: q.count,
      scrollId: q.scrollId || undefined,
      descending: q.sortOrder === 'DESCENDING',
      includeSoftDeleted: q.includeSoftDelete,
    };
    q.aspects?.forEach((a) => registry.aspect(spec, a));
    // Everything in URN order is listed from the primary store (read-after-write); a query, or an
    // order by another field (DataHub's execution request cleanup sorts by requestTimeMs), goes to search.
    const everything = q.query === undefined || q.query.trim() === '*' || q.query.trim() === '';
    const page =
      everything && q.sort === 'urn'
        ? await service.list(principalOf(req), spec, options)
        : await search.search(principalOf(req), { entityTypes: [spec.name], query: q.query ?? '*', sortField: q.sort, ...options });
    if (q.systemMetadata) await service.numberVersions(page.entities.flatMap((e) => [...e.aspects.values()]));
    const items = page.entities.map((e) => entityShape(v, e, q.systemMetadata));
    // v2 leaves scrollId out on the last page, as DataHub's does: its clients page until it is absent
    // (`datahub-gc`'s execution request cleanup starts over on a null one).
    send(res, 200, v === 'v3' ? { scrollId: page.scrollId ?? null, entities: items } : { ...(page.scrollId ? { scrollId: page.scrollId } : {}), results: items });
  });

  listRoute.post(async (req, res) => {
    const spec = registry.entity(req.params.entityName);
    const q = ENTITY_QUERIES.batch.parse(req);
    const inputs: AspectInput[] = batchAspects(v, requireBody(req));
    for (const input of inputs) input.target = service.resolve(spec.name, input.urn);
    const written = recordsOf(await service.write(principalOf(req), inputs, 'upsert'));
    if (q.async) return send(res, 202, written.map((e) => ({ urn: e.urn })));
    send(res, 200, written.map((e) => entityShape(v, e, q.systemMetadata)));
  });

  entityRoute.head(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const q = ENTITY_QUERIES.headEntity.parse(req);
    const found = await service.exists(principalOf(req), target, undefined, q.includeSoftDelete);
    res.status(found ? 204 : 404).end();
  });

  entityRoute.get(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const q = ENTITY_QUERIES.getEntity.parse(req);
    const entity = await service.getEntity(principalOf(req), target, q.aspects);
    if (!entity) throw SvcError.notFound(`${target.urn} does not exist`, 'ENTITY');
    if (q.systemMetadata) await service.numberVersions([...entity.aspects.values()]);
    send(res, 200, entityShape(v, entity, q.systemMetadata));
  });

  entityRoute.delete(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const q = ENTITY_QUERIES.deleteEntity.parse(req);
    // No aspects named: the whole entity; clear=true: every aspect but the key.
    const aspects = q.aspects && q.aspects.length > 0 ? q.aspects : q.clear ? target.spec.aspects : undefined;
    if (aspects) await service.deleteAspects(principalOf(req), target, aspects);
    else await service.deleteEntity(principalOf(req), target);
    res.status(200).end();
  });

  aspectRoute.head(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    registry.aspect(target.spec, req.params.aspectName);
    const q = ENTITY_QUERIES.headAspect.parse(req);
    const found = await service.exists(principalOf(req), target, req.params.aspectName, q.includeSoftDelete);
    res.status(found ? 204 : 404).end();
  });

  aspectRoute.get(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const q = ENTITY_QUERIES.getAspect.parse(req);
    const stored = await service.getAspect(principalOf(req), target, req.params.aspectName, q.version);
    if (!stored) throw SvcError.notFound(`${target.urn} has no aspect ${req.params.aspectName}`, 'ENTITY');
    if (q.systemMetadata) await service.numberVersions([stored]);
    const wrapper = aspectWrapper(stored, q.systemMetadata);
    send(res, 200, v === 'v2' ? wrapper : { urn: target.urn, [stored.aspect]: wrapper });
  });

  aspectRoute.post(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const aspect = registry.aspect(target.spec, req.params.aspectName);
    const q = ENTITY_QUERIES.postAspect[v].parse(req);
    const body = aspectBody(v, requireBody(req));
    const written = await service.write(principalOf(req), [{ urn: target.urn, target, aspect: aspect.name, ...body }], writeMode(q));
    // Nothing, when If-None-Match: * dropped the write and the aspect is absent (the entity exists).
    const [entity = { urn: target.urn, aspects: new Map() }] = recordsOf(written);
    send(res, q.async ? 202 : 200, entityShape(v, entity, q.systemMetadata));
  });

  aspectRoute.patch(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    registry.aspect(target.spec, req.params.aspectName);
    const q = ENTITY_QUERIES.patchAspect.parse(req);
    const body = requireBody(req);
    const written = await service.patch(principalOf(req), target, req.params.aspectName, body);
    send(res, q.async ? 202 : 200, entityShape(v, recordsOf([written])[0]!, q.systemMetadata));
  });

  aspectRoute.delete(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const aspect = registry.aspect(target.spec, req.params.aspectName);
    ENTITY_QUERIES.deleteAspect.parse(req);
    await service.deleteAspects(principalOf(req), target, [aspect.name]);
    res.status(200).end();
  });
}

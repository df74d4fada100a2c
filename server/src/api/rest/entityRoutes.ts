/**
 * The generic entity endpoints of `/openapi/v2/entity` and `/openapi/v3/entity` (datahub-behaviour.md
 * §5): thin adapters over {@link EntityService} that differ only in JSON shapes.
 */
import type { Request, Router } from 'express';
import { SvcError, Violations } from '../../errors.ts';
import { registry } from '../../registry/registry.ts';
import type { Actor, AspectInput, EntityService, WriteMode } from '../../entities/entityService.ts';
import { requireRole } from '../auth.ts';
import { sendJson as send } from '../json.ts';
import { boolParam, enumParam, intParam, listParam, stringParam } from './queryParams.ts';
import { aspectWrapper, batchItemAspects, entityShape, type ApiVersion } from './shapes.ts';

function actorOf(req: Request): Actor {
  return { urn: req.principal!.actor };
}

function requireBody(req: Request): unknown {
  if (req.body === undefined) throw SvcError.validation(['Expected a JSON request body']);
  return req.body;
}

function writeMode(req: Request): WriteMode {
  if (boolParam(req, 'createIfEntityNotExists', false)) return 'create_entity';
  return boolParam(req, 'createIfNotExists', true) ? 'create' : 'upsert';
}

/** v3 wraps the aspect as `{"value": …, "systemMetadata"?: …}`; v2 sends the aspect itself. */
function unwrapAspectBody(v: ApiVersion, body: unknown, aspect: string): { value: unknown; systemMetadata?: unknown } {
  if (v === 'v2') return { value: body };
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !('value' in body)) {
    throw SvcError.validation([`${aspect}: the v3 request body must be {"value": <aspect>, "systemMetadata"?: {...}}`]);
  }
  const { value, systemMetadata, headers, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length) throw SvcError.validation(extra.map((k) => `${aspect}: unknown field "${k}" beside "value"`));
  void headers; // conditional-write headers are accepted and not acted upon yet
  return { value, systemMetadata };
}

/**
 * Adds the routes of one API version to `router` (the authenticated API router), with full paths:
 * metrics label requests with the route's path, which must be whole. Routes sit directly on the API
 * router rather than in a router of their own: a request that leaves a router unanswered goes on only
 * at the event loop's next turn, and every write would leave the v2 router that way. One route per
 * path, its methods chained, so a path is matched once.
 */
export function entityRoutes(router: Router, service: EntityService, v: ApiVersion): void {
  const base = `/openapi/${v}/entity`;
  const listRoute = router.route(`${base}/:entityName`);
  const entityRoute = router.route(`${base}/:entityName/:urn`);
  const aspectRoute = router.route(`${base}/:entityName/:urn/:aspectName`);

  listRoute.get(async (req, res) => {
    const spec = registry.entity(req.params.entityName);
    const query = stringParam(req, 'query');
    if (query !== undefined && query.trim() !== '*' && query.trim() !== '') {
      throw SvcError.validation(['query: only "*" is supported by this server version']);
    }
    const sort = stringParam(req, 'sort') ?? 'urn';
    if (sort !== 'urn') throw SvcError.validation([`sort: only "urn" is supported, got "${sort}"`]);
    const page = await service.list(spec, {
      aspects: listParam(req, 'aspects', 'aspectNames'),
      count: intParam(req, 'count', 10, 1),
      scrollId: stringParam(req, 'scrollId') || undefined,
      descending: enumParam(req, 'sortOrder', ['ASCENDING', 'DESCENDING'] as const, 'ASCENDING') === 'DESCENDING',
      includeSoftDeleted: boolParam(req, 'includeSoftDelete', false),
    });
    const withSm = boolParam(req, 'systemMetadata', false);
    const items = page.entities.map((e) => entityShape(v, e, withSm));
    send(res, 200, v === 'v3' ? { scrollId: page.scrollId ?? null, entities: items } : { scrollId: page.scrollId ?? null, results: items });
  });

  listRoute.post(async (req, res) => {
    const spec = registry.entity(req.params.entityName);
    const body = requireBody(req);
    if (!Array.isArray(body)) throw SvcError.validation([`Expected a JSON array of ${v} entities`]);
    const inputs: AspectInput[] = [];
    const problems = new Violations();
    body.forEach((item, i) => {
      if (typeof item !== 'object' || item === null || typeof (item as { urn?: unknown }).urn !== 'string') {
        problems.add(`[${i}]: expected an object with a string "urn"`);
        return;
      }
      const urn = (item as { urn: string }).urn;
      service.resolve(spec.name, urn);
      const aspects = batchItemAspects(v, item as Record<string, unknown>);
      if (aspects.length === 0) problems.add(`[${i}] ${urn}: no aspects given`);
      for (const [aspect, wrapper] of aspects) {
        try {
          inputs.push({ urn, aspect, ...unwrapAspectBody('v3', wrapper, aspect) });
        } catch (err) {
          (err as SvcError).violations.forEach((m) => problems.add(`[${i}] ${m}`));
        }
      }
    });
    problems.throwIfAny();
    const async = boolParam(req, 'async', true);
    const withSm = boolParam(req, 'systemMetadata', false);
    requireRole(req, 'writer', 'UPDATE');
    const written = await service.write(inputs, 'upsert', actorOf(req));
    if (async) return send(res, 202, written.map((e) => ({ urn: e.urn })));
    send(res, 200, written.map((e) => entityShape(v, e, withSm)));
  });

  entityRoute.head(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const found = await service.exists(target, undefined, boolParam(req, 'includeSoftDelete', false));
    res.status(found ? 204 : 404).end();
  });

  entityRoute.get(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const entity = await service.getEntity(target, listParam(req, 'aspects', 'aspectNames'));
    if (!entity) throw SvcError.notFound(`${target.urn} does not exist`);
    send(res, 200, entityShape(v, entity, boolParam(req, 'systemMetadata', false)));
  });

  entityRoute.delete(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const listed = listParam(req, 'aspects');
    // No aspects named: the whole entity; clear=true: every aspect but the key.
    const aspects = listed && listed.length > 0 ? listed : boolParam(req, 'clear', false) ? target.spec.aspects : undefined;
    requireRole(req, service.isHardDelete(target, aspects) ? 'admin' : 'writer', 'DELETE');
    if (aspects) await service.deleteAspects(target, aspects, actorOf(req));
    else await service.deleteEntity(target, actorOf(req));
    res.status(200).end();
  });

  aspectRoute.head(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    registry.aspect(target.spec, req.params.aspectName);
    const found = await service.exists(target, req.params.aspectName, boolParam(req, 'includeSoftDelete', false));
    res.status(found ? 204 : 404).end();
  });

  aspectRoute.get(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const stored = await service.getAspect(target, req.params.aspectName, intParam(req, 'version', 0, 0));
    if (!stored) throw SvcError.notFound(`${target.urn} has no aspect ${req.params.aspectName}`);
    const wrapper = aspectWrapper(stored, boolParam(req, 'systemMetadata', false));
    send(res, 200, v === 'v2' ? wrapper : { urn: target.urn, [stored.aspect]: wrapper });
  });

  aspectRoute.post(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const aspect = registry.aspect(target.spec, req.params.aspectName);
    const body = unwrapAspectBody(v, requireBody(req), aspect.name);
    const mode = writeMode(req);
    const status = boolParam(req, 'async', false) ? 202 : 200;
    const withSm = boolParam(req, 'systemMetadata', false);
    requireRole(req, 'writer', 'UPDATE');
    const [written] = await service.write([{ urn: target.urn, target, aspect: aspect.name, ...body }], mode, actorOf(req));
    send(res, status, entityShape(v, written!, withSm));
  });

  aspectRoute.patch(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    registry.aspect(target.spec, req.params.aspectName);
    const body = requireBody(req);
    const withSm = boolParam(req, 'systemMetadata', false);
    requireRole(req, 'writer', 'UPDATE');
    const stored = await service.patch(target, req.params.aspectName, body, actorOf(req));
    const entity = { urn: target.urn, aspects: new Map([[stored.aspect, stored]]) };
    send(res, 200, entityShape(v, entity, withSm));
  });

  aspectRoute.delete(async (req, res) => {
    const target = service.resolve(req.params.entityName, req.params.urn);
    const aspect = registry.aspect(target.spec, req.params.aspectName);
    requireRole(req, service.isHardDelete(target, [aspect.name]) ? 'admin' : 'writer', 'DELETE');
    await service.deleteAspects(target, [aspect.name], actorOf(req));
    res.status(200).end();
  });

}

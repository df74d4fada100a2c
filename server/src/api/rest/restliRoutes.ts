/**
 * The Rest.li resources DataHub's own clients call (the `datahub` CLI, the Python SDK's DataHubGraph and
 * DatahubRestEmitter, the `datahub-rest` ingestion sink), as thin adapters over the entity service:
 *
 * - `GET /config`: `noCode: "true"` and a version below 1.0.1, so that 1.x clients stay on Rest.li;
 * - `GET /aspects/{urn}?aspect=<name>&version=<n>`: one aspect under its Pegasus class
 *   (`{"urn", "version", "aspect": {"com.linkedin.common.Status": {...}}}`), 404 when absent; a key
 *   aspect is how the clients ask whether an entity exists. Type URNs are shown in DataHub's namespace
 *   (`urn:li:dataType:datahub.number`), which svc takes as its own on input;
 * - `POST /aspects?action=ingestProposal` and `?action=ingestProposalBatch`: metadata change proposals
 *   (`UPSERT`, `CREATE`, `CREATE_ENTITY`, `DELETE`, and `PATCH` with a JSON Patch), the aspect value a
 *   JSON string;
 * - `GET /entitiesV2/{urn}?aspects=List(…)` and `GET /entitiesV2?ids=List(…)`: entities with their
 *   versioned aspects, each enveloped as DataHub does (`{"name", "type", "version", "value", "created",
 *   "systemMetadata"}`); the key aspect is always there (built from the URN, as DataHub does, so an entity
 *   that does not exist answers its key alone) unless `alwaysIncludeKeyAspect=false`;
 * - `POST /aspects?action=getTimeseriesAspectValues`: the entries of a time series aspect of one entity,
 *   newest first (`latestValue: true` for the newest alone; a `filter` on their fields), each value a
 *   JSON string;
 * - `POST /entities?action=delete`: a hard delete, answering the rows it removed;
 * - `POST /entities?action=deleteReferences` (`{"urn", "dryRun"}`): the references other entities hold
 *   to the entity (references.ts), counted, and removed unless a dry run (the default, as in DataHub);
 * - `POST /entities?action=search` (`{"input", "entity", "start", "count", "filter"?}`): a page of the
 *   entities of one type that match (restliSearch.ts).
 *
 * Failures are Rest.li error responses (`{"message", "status"}`, `X-RestLi-Error-Response: true`).
 */
import type { Request, Response, Router } from 'express';
import type { EntityService } from '../../entities/entityService.ts';
import type { StoredAspect } from '../../entities/aspectStore.ts';
import { MAX_ENTRY_PAGE, type TimeseriesService } from '../../timeseries/timeseriesService.ts';
import { eventFilter } from '../../timeseries/eventFilter.ts';
import { SvcError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { registry, type AspectSpec, type EntityUrn } from '../../registry/registry.ts';
import { SYSTEM } from '../../auth/authorize.ts';
import { principalOf } from '../auth.ts';
import { quoted } from '../pathGuard.ts';
import { parseUrn } from '../../contract/urn.ts';
import { readParameters, type ParameterSpec } from '../../timeseries/actionParameters.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';
import { type Proposal, svcTypeUrn, inDatahubNamespace, target, ingestProposals } from './restliProposals.ts';
import { restliSearch } from './restliSearch.ts';
import type { SearchService } from '../../search/searchService.ts';
import { restliList, restliHandler } from './restliProtocol.ts';
import { serve, type Operations } from './openapi/operations.ts';
import { json, param, ref, restliError, failures, bodyFailures } from './openapi/parts.ts';

/** The parameters of the `/entities` actions (an unknown one is refused, see actionParameters.ts). */
const ENTITIES_ACTIONS: Record<'delete' | 'deleteReferences', Record<string, ParameterSpec>> = {
  delete: { urn: { kind: 'string', required: true }, aspectName: { kind: 'string' }, startTimeMillis: { kind: 'time' }, endTimeMillis: { kind: 'time' } },
  deleteReferences: { urn: { kind: 'string', required: true }, dryRun: { kind: 'boolean' } },
};

/** The query parameters of the Rest.li routes (parsed by them, and documented in the OpenAPI document). */
export const RESTLI_QUERIES = {
  aspect: queryParams({
    aspect: { type: 'string', required: true, description: 'The aspect name, e.g. propertyDefinition' },
    version: { type: 'integer', default: 0, minimum: 0, description: 'The version (0 = latest)' },
  }),
  aspectsAction: queryParams({ action: { type: 'enum', values: ['ingestProposal', 'ingestProposalBatch', 'getTimeseriesAspectValues'], required: true, description: 'The action' } }),
  entitiesV2: queryParams({
    aspects: { type: 'ignored', description: 'The aspects to read, as Rest.li lists them: List(status,datasetProperties) (all versioned aspects when absent)' },
    ids: { type: 'ignored', required: true, description: 'Batch get: the URNs, as Rest.li lists them, each percent-encoded: List(urn%3Ali%3A…,…)' },
    alwaysIncludeKeyAspect: { type: 'boolean', default: true, description: 'Include the key aspect (built from the URN) even when not asked for' },
  }),
  entitiesAction: queryParams({ action: { type: 'enum', values: ['delete', 'deleteReferences', 'search'], required: true, description: 'The action' } }),
};

/** An aspect as DataHub's `entitiesV2` envelopes it; a key aspect built from the URN has no stored row. */
function enveloped(spec: AspectSpec, value: unknown, stored: StoredAspect | undefined): Record<string, unknown> {
  return {
    name: spec.name,
    type: 'VERSIONED',
    version: 0,
    value,
    created: stored ? { time: stored.createdOn.getTime(), actor: stored.createdBy } : { time: 0, actor: SYSTEM.actor },
    ...(stored ? { systemMetadata: stored.systemMetadata } : {}),
  };
}

/** The Rest.li calls of DataHub's own clients (the `datahub` CLI and Python SDK) that svc serves, and their OpenAPI operations. */
export const RESTLI_API = {
  restliGetAspect: {
    method: 'get',
    path: '/aspects/{urn}',
    tags: ['datahub-restli'],
    summary: 'One aspect of an entity under its Pegasus class name: {"urn", "version", "aspect": {"com.linkedin.…": value}}',
    parameters: [param('urn', 'path', { type: 'string' }, 'The entity URN (URL-encoded)'), ...RESTLI_QUERIES.aspect.openapi()],
    responses: { '200': { description: 'The aspect', content: json(ref('RestliAspect')) }, '404': restliError('No such entity, aspect or version'), ...failures },
  },
  restliIngestProposal: {
    method: 'post',
    path: '/aspects',
    tags: ['datahub-restli'],
    summary:
      'ingestProposal ({"proposal": {…}}) or ingestProposalBatch ({"proposals": [...]}): metadata change proposals with changeType UPSERT, CREATE, CREATE_ENTITY, PATCH or DELETE; getTimeseriesAspectValues ({"urn", "entity", "aspect", "startTimeMillis"?, "endTimeMillis"?, "limit"?, "latestValue"?}): the entries of a time series aspect of one entity, newest first',
    parameters: RESTLI_QUERIES.aspectsAction.openapi(),
    requestBody: { required: true, content: json({ type: 'object' }) },
    responses: {
      '200': { description: '`{"value": "<urn>"}` for one proposal, `{}` for a batch, `{"value": {"entityName", "aspectName", "limit", "values": [{"aspect": {"value": "<JSON>", "contentType"}, "systemMetadata"}]}}` for time series values', content: json(ref('RestliIngestResult')) },
      ...failures,
      ...bodyFailures,
    },
  },
  restliGetEntityV2: {
    method: 'get',
    path: '/entitiesV2/{urn}',
    tags: ['datahub-restli'],
    summary: 'An entity with its versioned aspects, each enveloped ({"name", "type", "version", "value", "created", "systemMetadata"}); the key aspect is always included (built from the URN, so an entity that does not exist answers its key alone) unless alwaysIncludeKeyAspect=false',
    parameters: [param('urn', 'path', { type: 'string' }, 'The entity URN (URL-encoded)'), ...RESTLI_QUERIES.entitiesV2.openapi().filter((p) => p.name !== 'ids')],
    responses: { '200': { description: '`{"entityName", "urn", "aspects": {name: envelope}}`', content: json(ref('RestliEntity')) }, '404': restliError('Nothing to answer (no aspect asked for that the entity has, and no key)'), ...failures },
  },
  restliBatchGetEntityV2: {
    method: 'get',
    path: '/entitiesV2',
    tags: ['datahub-restli'],
    summary: 'Several entities (ids=List(…), at most 1000) as GET /entitiesV2/{urn} answers each',
    parameters: RESTLI_QUERIES.entitiesV2.openapi(),
    responses: { '200': { description: '`{"results": {urn: entity}, "statuses": {}, "errors": {}}`', content: json(ref('RestliEntities')) }, ...failures },
  },
  restliDeleteEntity: {
    method: 'post',
    path: '/entities',
    tags: ['datahub-restli'],
    summary:
      'action=delete ({"urn"}): hard delete of an entity (admin), as `datahub delete --hard`; action=deleteReferences ({"urn", "dryRun"}, a dry run unless dryRun is false): the references other entities hold to the entity, counted and removed (admin); action=search ({"input", "entity", "start", "count", "filter"?, "sort"?, "searchFlags"?}): a page of the entities of one type that match the query and the filter ({"or": [{"and": [{"field", "values", "condition", "negated"}]}]})',
    parameters: RESTLI_QUERIES.entitiesAction.openapi(),
    requestBody: { required: true, content: json({ type: 'object', properties: { urn: { type: 'string' }, dryRun: { type: 'boolean', default: true }, input: { type: 'string' }, entity: { type: 'string' }, start: { type: 'integer' }, count: { type: 'integer' }, filter: { type: 'object' } } }) },
    responses: {
      '200': {
        description: '`{"value": {"urn", "rows", "timeseriesRows"}}` for delete; `{"value": {"dryRun", "total", "relatedAspects": [{"relationship", "entity", "aspect"}]}}` (the first 10) for deleteReferences; `{"value": {"from", "pageSize", "numEntities", "entities": [{"entity", "matchedFields"}], "metadata"}}` for search',
        content: json(ref('RestliDeleteResult')),
      },
      ...failures,
      ...bodyFailures,
    },
  },
} satisfies Operations;

export function restliRoutes(router: Router, entities: EntityService, timeseries: TimeseriesService, search: SearchService, log: Logger): void {
  const restli = (handler: (req: Request, res: Response) => Promise<void>) => restliHandler(log, 'Rest.li call failed', handler);

  /**
   * Entities as `entitiesV2` answers them (`{"entityName", "urn", "aspects": {name: envelope}}`): the
   * versioned aspects asked for that the entity has, and its key unless `alwaysIncludeKeyAspect=false`.
   * Aspect names svc does not keep for the type are left out, as DataHub leaves out aspects an entity
   * lacks; time series aspects are read with `getTimeseriesAspectValues`.
   */
  const entitiesV2 = async (req: Request, urns: string[]) => {
    const { alwaysIncludeKeyAspect } = RESTLI_QUERIES.entitiesV2.parse(req);
    const names = restliList(req, 'aspects')?.map((n) => n.toLowerCase());
    for (const n of names ?? []) {
      if (!/^[a-z][a-z0-9_]*$/.test(n)) throw SvcError.validation([`query parameter aspects: ${quoted(n)} is not an aspect name; expected List(status,datasetProperties)`]);
    }
    const asked = urns.map((urn) => ({ urn, t: target(urn, 'urn') }));
    const wanted = (t: EntityUrn) => registry.aspectsOf(t.spec).filter((a) => !a.timeseries && (names === undefined || names.includes(a.name.toLowerCase())));
    // The key is read with them: it is what says the entity exists (and when it was made).
    const read = new Set(asked.flatMap(({ t }) => [t.spec.keyAspect, ...wanted(t).map((a) => a.name)]));
    const records = await entities.getMany(principalOf(req), asked.map(({ t }) => t), [...read]);
    const byUrn = new Map(records.map((r) => [r.urn, r.aspects]));
    return asked.map(({ urn, t }) => {
      const stored = byUrn.get(t.urn);
      const aspects: Record<string, unknown> = {};
      for (const spec of wanted(t)) {
        const row = stored?.get(spec.name);
        if (row && !spec.keyOf) aspects[spec.name] = enveloped(spec, inDatahubNamespace(row.value), row);
      }
      const key = stored?.get(t.spec.keyAspect);
      if (alwaysIncludeKeyAspect || (key && wanted(t).some((a) => a.keyOf))) {
        // The key as the URN asked for spells it (an entity type asked for as datahub.dataset keeps that id).
        aspects[t.spec.keyAspect] = enveloped(registry.aspect(t.spec, t.spec.keyAspect), registry.keyAspectValue(registry.resolveUrn(urn)), key);
      }
      return { urn, response: { entityName: t.spec.name, urn, aspects } };
    });
  };

  /**
   * `getTimeseriesAspectValues`: `{urn, entity, aspect, startTimeMillis?, endTimeMillis?, limit?,
   * latestValue?, filter?}`; the entries of one entity, newest first, those the filter holds for
   * (eventFilter.ts: stateful ingestion asks for its pipeline's last checkpoint so), each value a JSON
   * string as DataHub's clients decode it.
   */
  const timeseriesValues = async (req: Request) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const problems: string[] = [];
    const text = (k: string): string => {
      if (typeof body[k] === 'string' && body[k] !== '') return body[k] as string;
      problems.push(`${k} is required: a string`);
      return '';
    };
    const integer = (k: string, what: string, min: number): number | undefined => {
      const v = body[k];
      if (v === undefined || v === null) return undefined;
      if (Number.isSafeInteger(v) && (v as number) >= min) return v as number;
      problems.push(`${k} must be ${what}`);
      return undefined;
    };
    const urn = text('urn');
    const entity = text('entity');
    const aspectName = text('aspect');
    const startTimeMillis = integer('startTimeMillis', 'epoch milliseconds (an integer)', -Number.MAX_SAFE_INTEGER);
    const endTimeMillis = integer('endTimeMillis', 'epoch milliseconds (an integer)', -Number.MAX_SAFE_INTEGER);
    const limit = integer('limit', 'a positive integer', 1) ?? MAX_ENTRY_PAGE;
    if (body.latestValue !== undefined && typeof body.latestValue !== 'boolean') problems.push('latestValue must be true or false');
    if (problems.length) throw SvcError.validation(problems);
    const matches = eventFilter(body.filter);
    const t = target(urn, 'urn');
    if (t.spec.name.toLowerCase() !== entity.toLowerCase()) throw SvcError.validation([`entity ${entity} does not match the URN's type ${t.spec.name}`]);
    const spec = registry.aspect(t.spec, aspectName);
    if (!spec.timeseries) throw SvcError.validation([`${spec.name} is not a time series aspect of ${t.spec.name}; read it with GET /aspects/<urn>?aspect=${spec.name}`]);
    const page = await timeseries.list(principalOf(req), t.spec.name, spec.name, {
      urn: t.urn,
      count: body.latestValue === true ? 1 : Math.min(limit, MAX_ENTRY_PAGE),
      startTimeMillis,
      endTimeMillis,
      systemMetadata: true,
      matches,
    });
    return {
      entityName: t.spec.name,
      aspectName: spec.name,
      limit,
      ...(startTimeMillis === undefined ? {} : { startTimeMillis }),
      ...(endTimeMillis === undefined ? {} : { endTimeMillis }),
      values: page.results.map((e) => ({ aspect: { value: JSON.stringify(e.event), contentType: 'application/json' }, systemMetadata: e.systemMetadata })),
    };
  };

  /**
   * `delete` as DataHub's clients send it: `{urn}` hard-deletes the entity; `{urn, aspectName,
   * startTimeMillis?, endTimeMillis?}` (`datahub delete -a <aspect> --hard --start-time … --end-time …`,
   * the SDK's `hard_delete_timeseries_aspect`) deletes the entries of that time series aspect within
   * the range (ends included; an absent end open), and `{urn, aspectName}` of a versioned aspect that
   * aspect. The entity and its other aspects stay. A range without a time series aspect to apply to is
   * refused: it would otherwise be read as "the whole entity".
   */
  const deleteAction = async (principal: ReturnType<typeof principalOf>, t: EntityUrn, urn: string, params: Record<string, unknown>) => {
    const aspectName = params.aspectName as string | undefined;
    const range = { startTimeMillis: params.startTimeMillis as number | undefined, endTimeMillis: params.endTimeMillis as number | undefined };
    const ranged = range.startTimeMillis !== undefined || range.endTimeMillis !== undefined;
    if (aspectName === undefined) {
      if (ranged) throw SvcError.validation(['startTimeMillis and endTimeMillis select the entries of a time series aspect: name it with aspectName (without aspectName the whole entity is deleted, and a range is refused rather than ignored)']);
      const record = await entities.getEntity(principal, t);
      if (record) await entities.deleteEntity(principal, t);
      // The aspects the entity had (latest values); its time series entries go with it, uncounted here.
      return { urn, rows: record?.aspects.size ?? 0, timeseriesRows: 0 };
    }
    const spec = registry.aspect(t.spec, aspectName);
    if (spec.timeseries) return { urn, timeseriesRows: await entities.deleteTimeseriesRange(principal, t, spec.name, range) };
    if (spec.keyOf) throw SvcError.validation([`${spec.name} is the key aspect of ${t.spec.name}: to delete the entity, send {"urn"} alone`]);
    if (ranged) throw SvcError.validation([`startTimeMillis and endTimeMillis select entries of a time series aspect; ${spec.name} is a versioned aspect of ${t.spec.name}: send {"urn", "aspectName"} alone to delete it`]);
    const deleted = await entities.deleteAspects(principal, t, [spec.name]);
    return { urn, rows: deleted.length, timeseriesRows: 0 };
  };

  serve(router, RESTLI_API, {
    restliGetAspect: restli(async (req, res) => {
      const { aspect: name, version } = RESTLI_QUERIES.aspect.parse(req);
      if (name === undefined) throw SvcError.validation(['The query parameter aspect is required, e.g. ?aspect=status&version=0']);
      const urn = String(req.params.urn);
      // What is no URN at all is refused as everywhere (it was answered as an entity svc does not keep).
      parseUrn(svcTypeUrn(urn));
      let t: EntityUrn;
      try {
        t = target(urn, 'urn');
      } catch {
        // DataHub's clients read aspects of entities svc does not keep (their telemetry id, say): not found.
        throw SvcError.notFound(`svc keeps no entity ${urn}`);
      }
      const spec = registry.aspectsOf(t.spec).find((a) => a.name.toLowerCase() === name.toLowerCase());
      if (!spec?.pegasusClass) throw SvcError.notFound(`svc keeps no aspect ${name} of ${t.spec.name} entities`);
      const stored = await entities.getAspect(principalOf(req), t, spec.name, version);
      if (!stored) throw SvcError.notFound(`${urn} has no aspect ${spec.name}${version ? ` version ${version}` : ''}`);
      // The key as DataHub's URN spells it (an entity type asked for as datahub.dataset keeps that id).
      const value = spec.keyOf ? registry.keyAspectValue(registry.resolveUrn(urn)) : inDatahubNamespace(stored.value);
      sendJson(res, 200, { urn, version, aspect: { [spec.pegasusClass]: value } });
    }),
    restliIngestProposal: restli(async (req, res) => {
      const { action } = RESTLI_QUERIES.aspectsAction.parse(req);
      const body = (req.body ?? {}) as { proposal?: Proposal; proposals?: Proposal[] };
      if (action === 'ingestProposal') {
        if (!body.proposal) throw SvcError.validation(['The body must be {"proposal": {entityType, entityUrn, changeType, aspectName, aspect: {value, contentType}}}']);
        await ingestProposals(entities, principalOf(req), [body.proposal]);
        return sendJson(res, 200, { value: body.proposal.entityUrn });
      }
      if (action === 'ingestProposalBatch') {
        if (!Array.isArray(body.proposals)) throw SvcError.validation(['The body must be {"proposals": [metadata change proposals]}']);
        await ingestProposals(entities, principalOf(req), body.proposals);
        return sendJson(res, 200, {});
      }
      if (action === 'getTimeseriesAspectValues') return sendJson(res, 200, { value: await timeseriesValues(req) });
      throw SvcError.validation(['The query parameter action is required: ingestProposal, ingestProposalBatch or getTimeseriesAspectValues']);
    }),
    restliGetEntityV2: restli(async (req, res) => {
      const [one] = await entitiesV2(req, [String(req.params.urn)]);
      if (Object.keys(one!.response.aspects).length === 0) throw SvcError.notFound(`${one!.urn} has none of the aspects asked for`);
      sendJson(res, 200, one!.response);
    }),
    restliBatchGetEntityV2: restli(async (req, res) => {
      const ids = restliList(req, 'ids');
      if (!ids?.length) throw SvcError.validation(['The query parameter ids is required: ids=List(<percent-encoded urn>,…), or GET /entitiesV2/<urn> for one entity']);
      if (ids.length > MAX_ENTRY_PAGE) throw SvcError.validation([`query parameter ids: at most ${MAX_ENTRY_PAGE} URNs, got ${ids.length}`]);
      const found = await entitiesV2(req, [...new Set(ids)]);
      sendJson(res, 200, { results: Object.fromEntries(found.filter((f) => Object.keys(f.response.aspects).length).map((f) => [f.urn, f.response])), statuses: {}, errors: {} });
    }),
    restliDeleteEntity: restli(async (req, res) => {
      const { action } = RESTLI_QUERIES.entitiesAction.parse(req);
      if (action === undefined) throw SvcError.validation(['The query parameter action is required: delete, deleteReferences or search']);
      if (action === 'search') return sendJson(res, 200, { value: await restliSearch(search, principalOf(req), req.body) });
      const params = readParameters(action, ENTITIES_ACTIONS[action], req.body ?? {});
      const urn = params.urn as string;
      const t = target(urn, 'urn');
      const principal = principalOf(req);
      if (action === 'deleteReferences') {
        const dryRun = params.dryRun !== false;
        const { total, related } = await entities.deleteReferences(principal, t, dryRun);
        return sendJson(res, 200, { value: { dryRun, total, relatedAspects: related } });
      }
      sendJson(res, 200, { value: await deleteAction(principal, t, urn, params) });
    }),
  });
}

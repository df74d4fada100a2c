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
 *   newest first (`latestValue: true` for the newest alone), each value a JSON string;
 * - `POST /entities?action=delete`: a hard delete, answering the rows it removed;
 * - `POST /entities?action=deleteReferences` (`{"urn", "dryRun"}`): the references other entities hold
 *   to the entity (references.ts), counted, and removed unless a dry run (the default, as in DataHub).
 *
 * Failures are Rest.li error responses (`{"message", "status"}`, `X-RestLi-Error-Response: true`).
 */
import type { Request, Response, Router } from 'express';
import type { EntityService, AspectInput } from '../../entities/entityService.ts';
import type { StoredAspect, WriteMode } from '../../entities/aspectStore.ts';
import { MAX_ENTRY_PAGE, type TimeseriesService } from '../../timeseries/timeseriesService.ts';
import type { PatchOperation } from '../../entities/jsonPatch.ts';
import { SvcError, toSvcError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { registry, type AspectSpec, type EntityUrn } from '../../registry/registry.ts';
import { SYSTEM } from '../../auth/authorize.ts';
import { principalOf } from '../auth.ts';
import { quoted } from '../pathGuard.ts';
import { parseUrn } from '../../urn/urn.ts';
import { jsonProblems } from '../inputRules.ts';
import { readParameters, type ParameterSpec } from '../../timeseries/actionParameters.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';

/** The parameters of the `/entities` actions (an unknown one is refused, see actionParameters.ts). */
const ENTITIES_ACTIONS: Record<'delete' | 'deleteReferences', Record<string, ParameterSpec>> = {
  delete: { urn: { kind: 'string', required: true }, aspectName: { kind: 'string' }, startTimeMillis: { kind: 'time' }, endTimeMillis: { kind: 'time' } },
  deleteReferences: { urn: { kind: 'string', required: true }, dryRun: { kind: 'boolean' } },
};

/** The DataHub version `/config` reports: the line whose Rest.li API svc serves (1.x clients switch to OpenAPI writes from 1.0.1). */
export const RESTLI_VERSION = 'v0.14.1';

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
  entitiesAction: queryParams({ action: { type: 'enum', values: ['delete', 'deleteReferences'], required: true, description: 'The action' } }),
};

/**
 * How DataHub addresses the elements of an aspect's arrays in a patch (its GMS templates): the
 * structured properties of an entity by `propertyUrn`, the upstreams of a dataset by `dataset`.
 */
const TEMPLATE_KEYS: Record<string, Record<string, string[]>> = {
  structuredProperties: { properties: ['propertyUrn'] },
  upstreamLineage: { upstreams: ['dataset'] },
};

/** The separator DataHub's 1.x SDK puts between nested field names of an array key (`attribution␟source`). */
const NESTED = '\u241f';

interface Proposal {
  entityType?: unknown;
  entityUrn?: unknown;
  changeType?: unknown;
  aspectName?: unknown;
  aspect?: { value?: unknown; contentType?: unknown };
  systemMetadata?: unknown;
}

/**
 * A URN of svc's data and entity types written in DataHub's namespace (`urn:li:entityType:datahub.dataset`)
 * as svc's (`urn:li:entityType:svc.dataset`): the same entity under DataHub's name. Only the namespace
 * is read so: `urn:li:entityType:dataset` is another entity, as in DataHub (a reference to a type in
 * a definition takes the short forms, see normalize.ts; an entity addressed never does, so that no
 * write or delete reaches an entity it did not name).
 */
function svcTypeUrn(urn: string): string {
  return urn.replace(/^urn:li:(dataType|entityType):datahub\./, 'urn:li:$1:svc.');
}

/** svc's data and entity type URNs in a value as DataHub's clients know them (`urn:li:dataType:datahub.number`): they check them against their own list. */
function inDatahubNamespace(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/^urn:li:(dataType|entityType):svc\./, 'urn:li:$1:datahub.');
  if (Array.isArray(value)) return value.map(inDatahubNamespace);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inDatahubNamespace(v)]));
  return value;
}

function target(urn: unknown, where: string): EntityUrn {
  if (typeof urn !== 'string' || urn === '') throw SvcError.validation([`${where}: entityUrn must be a URN`]);
  return registry.resolveUrn(svcTypeUrn(urn));
}

/**
 * The aspect value of a proposal: the JSON text in `aspect.value`, parsed, and held to the rules of any
 * input (inputRules.ts), as a request body is: it is a body of its own inside the request's.
 */
function valueOf(p: Proposal, where: string): unknown {
  const type = p.aspect?.contentType;
  if (type !== undefined && type !== null && (typeof type !== 'string' || !/^application\/(json|json-patch\+json)\s*(;|$)/i.test(type))) {
    throw SvcError.validation([`${where}: aspect.contentType must be application/json (or application/json-patch+json for a patch: svc reads an aspect as JSON); got ${JSON.stringify(type).slice(0, 80)}`]);
  }
  const raw = p.aspect?.value;
  if (typeof raw !== 'string') throw SvcError.validation([`${where}: aspect.value must be the aspect as a JSON string`]);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw SvcError.validation([`${where}: aspect.value is not JSON: ${(err as Error).message}`]);
  }
  const problems = jsonProblems(value, raw);
  if (problems.length) throw SvcError.validation(problems.map((m) => `${where}: aspect.value${m.replace(/^body/, '')}`));
  return value;
}

/**
 * A proposal's JSON Patch in svc's form: DataHub's keyed array paths for the aspect, a `remove` followed
 * by an `add` of the same element as the `add` alone (how the 0.14 SDK sets a structured property), and
 * the 1.x SDK's attribution-source key (always empty from the SDK) dropped from keys and paths.
 */
function patchOf(aspect: string, value: unknown, where: string): { patch: PatchOperation[]; arrayPrimaryKeys: Record<string, string[]> } {
  const doc = Array.isArray(value) ? { patch: value } : (value as { patch?: unknown; arrayPrimaryKeys?: Record<string, string[]> } | null);
  if (!doc || !Array.isArray(doc.patch)) throw SvcError.validation([`${where}: a PATCH aspect.value must be a JSON Patch array or {"patch": [...], "arrayPrimaryKeys": {...}}`]);
  const keys: Record<string, string[]> = { ...TEMPLATE_KEYS[aspect] };
  const nested = new Set<string>();
  for (const [field, fields] of Object.entries(doc.arrayPrimaryKeys ?? {})) {
    const plain = Array.isArray(fields) ? fields.filter((f) => typeof f === 'string' && !f.includes(NESTED)) : fields;
    if (Array.isArray(fields) && plain.length < fields.length) nested.add(field);
    keys[field] = plain as string[];
  }
  let ops = doc.patch as PatchOperation[];
  if (nested.size) {
    // `/properties/<urn>/` (a trailing empty source): the element of that URN.
    ops = ops.map((op) => (typeof op?.path === 'string' && [...nested].some((f) => op.path.startsWith(`/${f}/`)) ? { ...op, path: op.path.replace(/\/$/, '') } : op));
  }
  ops = ops.filter((op, i) => !(op?.op === 'remove' && ops[i + 1]?.op === 'add' && ops[i + 1]?.path === op.path));
  return { patch: ops, arrayPrimaryKeys: keys };
}

/**
 * A Rest.li list parameter read from the raw query string, where its items are still percent-encoded
 * (a comma inside a URN is `%2C`): `name=List(a,b)` (protocol 2.0) or the parameter repeated (protocol
 * 1.0); undefined when absent.
 */
function restliList(req: Request, name: string): string[] | undefined {
  const at = req.originalUrl.indexOf('?');
  let out: string[] | undefined;
  for (const pair of at < 0 ? [] : req.originalUrl.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || decoded(pair.slice(0, eq), name) !== name) continue;
    const value = pair.slice(eq + 1);
    const list = /^List(?:\(|%28)(.*)(?:\)|%29)$/i.exec(value);
    const items = list ? list[1]!.split(',').filter((x) => x !== '') : [value];
    out = [...(out ?? []), ...items.map((x) => decoded(x, name))];
  }
  return out;
}

function decoded(text: string, name: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw SvcError.validation([`query parameter ${name}: ${quoted(text)} is not valid percent-encoding (expected %XX for each reserved character)`]);
  }
}

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

/** A Rest.li error response: `{"message", "status"}` (and svc's `reason`, when the error has one) and the header `X-RestLi-Error-Response: true`. */
export function sendRestliError(res: Response, err: SvcError): void {
  res.setHeader('X-RestLi-Error-Response', 'true');
  if (err.code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer');
  sendJson(res, err.httpStatus, { message: err.code === 'INTERNAL' ? err.title : err.message, status: err.httpStatus, ...(err.reason ? { reason: err.reason } : {}) });
}

/** A route answering failures as Rest.li does; faults (and an unreachable database) are logged as `what`. */
export function restliHandler(log: Logger, what: string, handler: (req: Request, res: Response) => Promise<unknown>) {
  return async (req: Request, res: Response): Promise<void> => {
    try {
      await handler(req, res);
    } catch (err) {
      const svc = toSvcError(err);
      if (svc.code === 'INTERNAL' || svc.code === 'UNAVAILABLE') log.error({ err: svc.cause ?? svc, url: req.originalUrl }, what);
      sendRestliError(res, svc);
    }
  };
}

export function restliRoutes(router: Router, entities: EntityService, timeseries: TimeseriesService, log: Logger): void {
  const restli = (handler: (req: Request, res: Response) => Promise<void>) => restliHandler(log, 'Rest.li call failed', handler);

  router.get(
    '/aspects/:urn',
    restli(async (req, res) => {
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
  );

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

  router.get(
    '/entitiesV2/:urn',
    restli(async (req, res) => {
      const [one] = await entitiesV2(req, [String(req.params.urn)]);
      if (Object.keys(one!.response.aspects).length === 0) throw SvcError.notFound(`${one!.urn} has none of the aspects asked for`);
      sendJson(res, 200, one!.response);
    }),
  );

  router.get(
    '/entitiesV2',
    restli(async (req, res) => {
      const ids = restliList(req, 'ids');
      if (!ids?.length) throw SvcError.validation(['The query parameter ids is required: ids=List(<percent-encoded urn>,…), or GET /entitiesV2/<urn> for one entity']);
      if (ids.length > MAX_ENTRY_PAGE) throw SvcError.validation([`query parameter ids: at most ${MAX_ENTRY_PAGE} URNs, got ${ids.length}`]);
      const found = await entitiesV2(req, [...new Set(ids)]);
      sendJson(res, 200, { results: Object.fromEntries(found.filter((f) => Object.keys(f.response.aspects).length).map((f) => [f.urn, f.response])), statuses: {}, errors: {} });
    }),
  );

  /**
   * Applies proposals in order (a batch as one write where it can be); returns nothing (Rest.li answers
   * no body for a batch). Every proposal is read and checked before any is applied: a malformed one
   * refuses the batch with nothing written.
   */
  const ingest = async (req: Request, proposals: Proposal[]) => {
    const principal = principalOf(req);
    type Step = { kind: 'write'; mode: WriteMode; inputs: AspectInput[] } | { kind: 'apply'; run: () => Promise<unknown> };
    const steps: Step[] = [];
    for (const [i, p] of proposals.entries()) {
      const where = proposals.length > 1 ? `proposals[${i}]` : 'proposal';
      if (!p || typeof p !== 'object') throw SvcError.validation([`${where} must be a metadata change proposal object`]);
      const t = target(p.entityUrn, where);
      if (typeof p.entityType === 'string' && p.entityType.toLowerCase() !== t.spec.name.toLowerCase()) {
        throw SvcError.validation([`${where}: entityType ${p.entityType} does not match the URN's type ${t.spec.name}`]);
      }
      if (typeof p.aspectName !== 'string') throw SvcError.validation([`${where}: aspectName is required`]);
      const aspectName = p.aspectName;
      const changeType = String(p.changeType ?? 'UPSERT').toUpperCase();
      const mode: WriteMode | undefined = changeType === 'UPSERT' ? 'upsert' : changeType === 'CREATE' ? 'create' : changeType === 'CREATE_ENTITY' ? 'create_entity' : undefined;
      if (mode) {
        // Consecutive writes of the same mode go together (all or nothing), as one batch write.
        const last = steps[steps.length - 1];
        const pending = last?.kind === 'write' && last.mode === mode ? last : { kind: 'write' as const, mode, inputs: [] };
        if (pending !== last) steps.push(pending);
        // A proposal creates its entity, as DataHub's ingestProposal does: the key aspect goes with it
        // (unchanged when the entity exists), so that rules needing the entity (structured property
        // values) see it.
        const key = t.spec.keyAspect;
        if (aspectName !== key && !pending.inputs.some((x) => x.urn === t.urn && x.aspect === key)) {
          pending.inputs.push({ urn: t.urn, target: t, aspect: key, value: registry.keyAspectValue(t), systemMetadata: p.systemMetadata });
        }
        const value = valueOf(p, where);
        // The aspect and its schema are checked here too, before anything of the batch is written.
        const problems = registry.validate(registry.aspect(t.spec, aspectName), value);
        if (problems.length) throw SvcError.validation(problems.map((m) => `${where}: ${m}`));
        pending.inputs.push({ urn: t.urn, target: t, aspect: aspectName, value, systemMetadata: p.systemMetadata });
      } else if (changeType === 'PATCH') {
        const patch = patchOf(registry.aspect(t.spec, aspectName).name, valueOf(p, where), where);
        steps.push({ kind: 'apply', run: () => entities.patch(principal, t, aspectName, patch) });
      } else if (changeType === 'DELETE') {
        registry.aspect(t.spec, aspectName);
        steps.push({ kind: 'apply', run: () => entities.deleteAspects(principal, t, [aspectName]) });
      } else {
        throw SvcError.validation([`${where}: changeType ${changeType} is not supported; expected UPSERT, CREATE, CREATE_ENTITY, PATCH or DELETE`]);
      }
    }
    for (const step of steps) {
      if (step.kind === 'write') await entities.write(principal, step.inputs, step.mode);
      else await step.run();
    }
  };

  /**
   * `getTimeseriesAspectValues`: `{urn, entity, aspect, startTimeMillis?, endTimeMillis?, limit?,
   * latestValue?}`; the entries of one entity, newest first, each value a JSON string as DataHub's
   * clients decode it.
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

  router.post(
    '/aspects',
    restli(async (req, res) => {
      const { action } = RESTLI_QUERIES.aspectsAction.parse(req);
      const body = (req.body ?? {}) as { proposal?: Proposal; proposals?: Proposal[] };
      if (action === 'ingestProposal') {
        if (!body.proposal) throw SvcError.validation(['The body must be {"proposal": {entityType, entityUrn, changeType, aspectName, aspect: {value, contentType}}}']);
        await ingest(req, [body.proposal]);
        return sendJson(res, 200, { value: body.proposal.entityUrn });
      }
      if (action === 'ingestProposalBatch') {
        if (!Array.isArray(body.proposals)) throw SvcError.validation(['The body must be {"proposals": [metadata change proposals]}']);
        await ingest(req, body.proposals);
        return sendJson(res, 200, {});
      }
      if (action === 'getTimeseriesAspectValues') return sendJson(res, 200, { value: await timeseriesValues(req) });
      throw SvcError.validation(['The query parameter action is required: ingestProposal, ingestProposalBatch or getTimeseriesAspectValues']);
    }),
  );

  router.post(
    '/entities',
    restli(async (req, res) => {
      const { action } = RESTLI_QUERIES.entitiesAction.parse(req);
      if (action === undefined) throw SvcError.validation(['The query parameter action is required: delete or deleteReferences']);
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
  );

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
}

/** Rest.li resources of DataHub (those svc serves, and those it does not, or not with that method or action). */
const RESTLI_RESOURCES = /^\/(entitiesV2|entities|aspects|relationships|runs|platform|usageStats|analytics|batchIngestion|entitiesVersionedV2|timeline)(\/|$)/;

/** Whether a path is a Rest.li resource, whose failures take Rest.li's form (see errorHandler.ts). */
export const isRestliResource = (path: string): boolean => RESTLI_RESOURCES.test(path);

/**
 * The Rest.li calls svc does not serve: a 404 in Rest.li's shape naming the call and what is served,
 * instead of a generic miss, so that a DataHub client says which of its calls svc lacks.
 */
export function restliUnsupported(req: Request, res: Response, next: () => void): void {
  if (!RESTLI_RESOURCES.test(req.path)) return next();
  const action = typeof req.query.action === 'string' ? `?action=${req.query.action}` : '';
  sendRestliError(
    res,
    SvcError.notFound(
      `svc does not serve the Rest.li call ${req.method} ${req.path.split('/').slice(0, 2).join('/')}${action}; it serves GET /config, GET /aspects/<urn>?aspect=<name>, GET /entitiesV2/<urn>, GET /entitiesV2?ids=List(…), POST /aspects?action=ingestProposal|ingestProposalBatch|getTimeseriesAspectValues and POST /entities?action=delete|deleteReferences`,
    ),
  );
}

/** `GET /config`: what DataHub's clients check before anything else (served without a token, as DataHub does). */
export function restliConfig(req: Request, res: Response): void {
  sendJson(res, 200, {
    noCode: 'true',
    versions: { 'acryldata/datahub': { version: RESTLI_VERSION, commit: 'svc' } },
    datahub: { serverType: 'prod', serverEnv: 'core' },
    patchCapable: true,
    statefulIngestionCapable: false,
    supportsImpactAnalysis: false,
    retention: 'false',
    telemetry: { enabledCli: false, enabledIngestion: false },
    timeZone: 'GMT',
    models: {},
    managedIngestion: { enabled: false },
  });
}

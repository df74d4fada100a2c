/**
 * The OpenAPI 3.1 document of the entity API, generated from the registry (every entity type, every
 * aspect and its JSON Schema), for both families: `/openapi/v2/entity` and `/openapi/v3/entity`.
 */
import { REASONS } from '../../contract/errors.ts';
import { registry, type AspectSpec, type EntitySpec } from '../../registry/registry.ts';
import { MAX_SCHEMA_FIELD_URN_BYTES, MAX_URN_BYTES } from '../../urn/urn.ts';
import { ROLES } from '../../auth/authorize.ts';
import { TOKEN_REQUEST } from '../../auth/tokens.ts';
import { PATCH_BODY } from '../../entities/jsonPatch.ts';
import { ENTITY_QUERIES } from './entityRoutes.ts';
import { OPERATIONS_QUERIES } from './operationsRoutes.ts';
import { RESTLI_QUERIES } from './restliRoutes.ts';
import { TIMESERIES_QUERIES } from './timeseriesRoutes.ts';
import { SEARCH_DELIVERY_QUERY } from './searchDeliveryRoutes.ts';
import { TASK_QUERIES } from './taskRoutes.ts';
import { ASPECT_BODY, BATCH_ASPECT_BODY, type ApiVersion } from './shapes.ts';

type Obj = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const json = (schema: Obj) => ({ 'application/json': { schema } });

const param = (name: string, where: 'path' | 'query', schema: Obj, description: string, required = where === 'path') => ({
  name,
  in: where,
  required,
  description,
  schema,
});

/** The URN in a path: at most MAX_URN_BYTES encoded (schema fields' URNs, which name a dataset and a field path, MAX_SCHEMA_FIELD_URN_BYTES). */
function urnParamOf(e: EntitySpec): Obj {
  const max = e.name === 'schemaField' ? MAX_SCHEMA_FIELD_URN_BYTES : MAX_URN_BYTES;
  return param('urn', 'path', { type: 'string', maxLength: max }, `The entity URN, percent-encoded (at most ${max} bytes encoded)`);
}

const errors = {
  '400': { description: 'Invalid input: `{"error":"Validation Error","message":…}` or `{"error":"Invalid urn!: …"}`', content: json(ref('Error')) },
  '401': { description: 'Missing or invalid bearer token', content: json(ref('Error')) },
  '403': { description: 'The token role does not permit this operation: `{"error":"<actor> is unauthorized to <OP> entities.","message":…}`', content: json(ref('Error')) },
};
/** Answers of an operation that writes. */
const writeErrors = {
  ...errors,
  '409': {
    description: 'Not written, for now: the write collided with a concurrent one (retry it), or a structured property definition names a qualified name another property holds or that is still being cleaned up after a hard delete',
    content: json(ref('Error')),
  },
};
/** A missing entity or aspect: an empty body, and why in a header (DataHub's `ENTITY` for either). */
const notFound = {
  description: 'Not found: an empty body',
  headers: { 'Not-Found-Reason': { description: 'What is missing: ENTITY for a missing entity or aspect, as DataHub answers both', schema: { enum: ['ENTITY'] } } },
};
/** Answers of a HEAD (no body). */
const headErrors = { '400': { description: 'A malformed URN or query parameter' }, '401': { description: 'Missing or invalid bearer token' }, '403': { description: 'The token role does not permit reading' } };
/** A failure of a Rest.li call: `{"message", "status"}`, with the header X-RestLi-Error-Response: true. */
/** svc's machine-readable kind of a refusal, beside DataHub's fields (contract/errors.ts). */
const REASON = { type: 'string', enum: Object.keys(REASONS), description: 'What kind of refusal this is, when it is one a client may act on (absent otherwise)' };
const restliError = (description: string) => ({ description, content: json({ type: 'object', properties: { message: { type: 'string' }, status: { type: 'integer' }, reason: REASON }, required: ['message', 'status'] }) });
const failures = {
  '400': restliError('A malformed call: {"message", "status"}, with X-RestLi-Error-Response: true'),
  '401': restliError('Missing or invalid bearer token'),
  '403': restliError('A role the call needs'),
};
/** Failures of a Rest.li call with a JSON body. */
const bodyFailures = { '413': restliError('The body is larger than SVC_MAX_BODY_BYTES'), '415': restliError('The body is not sent as application/json') };

/** Answers of an operation that takes a JSON body. */
const bodyErrors = {
  '413': { description: 'The body is larger than SVC_MAX_BODY_BYTES', content: json(ref('Error')) },
  '415': { description: 'The body is not sent as application/json', content: json(ref('Error')) },
};

function aspectSchemaName(a: AspectSpec): string {
  return `${cap(a.name)}Aspect`;
}

/** The body of a write of `a` (v3's {@link ASPECT_BODY}, or a batch's {@link BATCH_ASPECT_BODY}), its value being that aspect. */
function aspectBodySchema(a: AspectSpec, body: Obj & { properties: Obj } = ASPECT_BODY): Obj {
  return { ...body, properties: { ...body.properties, value: ref(aspectSchemaName(a)), systemMetadata: ref('SystemMetadata') } };
}

/** The body of a batch write of `e` entities: each aspect as {@link aspectBodySchema}. */
function batchBodySchema(v: ApiVersion, e: EntitySpec): Obj {
  const aspects = Object.fromEntries(registry.aspectsOf(e).map((a) => [a.name, aspectBodySchema(a, BATCH_ASPECT_BODY)]));
  const urn = { type: 'string', description: 'The entity URN' };
  const item =
    v === 'v3'
      ? { type: 'object', properties: { urn, ...aspects }, required: ['urn'], minProperties: 2, additionalProperties: false }
      : { type: 'object', properties: { urn, aspects: { type: 'object', properties: aspects, minProperties: 1, additionalProperties: false } }, required: ['urn', 'aspects'], additionalProperties: false };
  return { type: 'array', items: item };
}

function wrapperSchema(a: AspectSpec): Obj {
  return {
    type: 'object',
    properties: { value: ref(aspectSchemaName(a)), systemMetadata: ref('SystemMetadata'), auditStamp: ref('AuditStamp') },
    required: ['value'],
  };
}

function entitySchema(v: ApiVersion, e: EntitySpec): Obj {
  const aspects = Object.fromEntries(registry.aspectsOf(e).map((a) => [a.name, wrapperSchema(a)]));
  if (v === 'v3') return { type: 'object', properties: { urn: { type: 'string' }, ...aspects }, required: ['urn'] };
  return { type: 'object', properties: { urn: { type: 'string' }, aspects: { type: 'object', properties: aspects } }, required: ['urn'] };
}

function entityPaths(v: ApiVersion, e: EntitySpec): Obj {
  const base = `/openapi/${v}/entity/${e.name}`;
  const tag = `${v} ${e.name}`;
  const id = (verb: string, aspect = '') => `${v}${verb}${cap(e.name)}${cap(aspect)}`;
  const entityRef = ref(`${cap(e.name)}Entity${v.toUpperCase()}`);
  const aspectNames = registry.aspectsOf(e).map((a) => a.name);
  const q = ENTITY_QUERIES;
  const urnParam = urnParamOf(e);
  const paths: Obj = {
    [base]: {
      get: {
        tags: [tag],
        operationId: id('List'),
        summary: `List ${e.name} entities in URN order`,
        parameters: q.list.openapi(aspectNames),
        responses: {
          '200': {
            description: 'A page of entities',
            content: json({
              type: 'object',
              properties: { scrollId: { type: ['string', 'null'] }, [v === 'v3' ? 'entities' : 'results']: { type: 'array', items: entityRef } },
            }),
          },
          ...errors,
        },
      },
      post: {
        tags: [tag],
        operationId: id('BatchUpsert'),
        summary: `Create or update ${e.name} entities (batch, all or nothing)`,
        parameters: q.batch.openapi(),
        requestBody: { required: true, content: json(batchBodySchema(v, e)) },
        responses: {
          '200': { description: 'Written entities', content: json({ type: 'array', items: entityRef }) },
          '202': { description: 'Written (async=true, the default): the URN of each entity', content: json({ type: 'array', items: { type: 'object', properties: { urn: { type: 'string' } }, required: ['urn'] } }) },
          '412': { description: 'An aspect\'s If-Version-Match does not hold: `{"error":"Validation Error","message":"Expected version <sent>, actual version <n>"}`; nothing is written', content: json(ref('Error')) },
          ...writeErrors,
          ...bodyErrors,
        },
      },
    },
    [`${base}/{urn}`]: {
      get: {
        tags: [tag],
        operationId: id('Get'),
        summary: `Get a ${e.name}`,
        parameters: [urnParam, ...q.getEntity.openapi(aspectNames)],
        responses: { '200': { description: 'The entity', content: json(entityRef) }, '404': notFound, ...errors },
      },
      head: {
        tags: [tag],
        operationId: id('Exists'),
        summary: `Does this ${e.name} exist`,
        parameters: [urnParam, ...q.headEntity.openapi()],
        responses: { '204': { description: 'Exists' }, '404': { description: 'Does not exist' }, ...headErrors },
      },
      delete: {
        tags: [tag],
        operationId: id('Delete'),
        summary: `Hard-delete a ${e.name} (admin), or only the listed aspects`,
        parameters: [urnParam, ...q.deleteEntity.openapi(aspectNames)],
        responses: { '200': { description: 'Deleted (also when it did not exist); empty body' }, ...writeErrors },
      },
    },
  };
  for (const a of registry.aspectsOf(e)) {
    const body = v === 'v3' ? aspectBodySchema(a) : ref(aspectSchemaName(a));
    const single = v === 'v2' ? wrapperSchema(a) : { type: 'object', properties: { urn: { type: 'string' }, [a.name]: wrapperSchema(a) } };
    const written = v === 'v2' ? { type: 'object', properties: { urn: { type: 'string' }, aspects: { type: 'object', properties: { [a.name]: wrapperSchema(a) } } } } : single;
    paths[`${base}/{urn}/${a.name}`] = {
      get: {
        tags: [tag],
        operationId: id('Get', a.name),
        summary: `Get the ${a.name} aspect${a.timeseries ? ' (latest entry of the time series)' : ''}`,
        parameters: [urnParam, ...q.getAspect.openapi()],
        responses: { '200': { description: 'The aspect', content: json(single) }, '404': notFound, ...errors },
      },
      head: {
        tags: [tag],
        operationId: id('Exists', a.name),
        summary: `Does the ${a.name} aspect exist`,
        parameters: [urnParam, ...q.headAspect.openapi()],
        responses: { '204': { description: 'Exists' }, '404': { description: 'Absent' }, ...headErrors },
      },
      post: {
        tags: [tag],
        operationId: id('Write', a.name),
        summary:
          v === 'v3'
            ? `Create the ${a.name} aspect; with createIfNotExists=false, create or update it`
            : `Create or update the ${a.name} aspect; with createIfNotExists=true, only create it`,
        parameters: [urnParam, ...q.postAspect[v].openapi()],
        requestBody: { required: true, content: json(body) },
        responses: {
          '200': { description: 'Written', content: json(written) },
          '202': { description: 'Written, with async=true', content: json(written) },
          '412': {
            description:
              v === 'v3'
                ? 'A CREATE precondition failed (the aspect exists and createIfNotExists is true; with the header If-None-Match: * the write is dropped instead, 200), or If-Version-Match does not hold (`{"error":"Validation Error"}`)'
                : 'A CREATE precondition failed (the aspect exists and createIfNotExists is true)',
            content: json(ref('Error')),
          },
          ...writeErrors,
          ...bodyErrors,
        },
      },
      ...(a.timeseries || a.keyOf
        ? {}
        : {
            patch: {
              tags: [tag],
              operationId: id('Patch', a.name),
              summary: `JSON Patch the ${a.name} aspect`,
              parameters: [urnParam, ...q.patchAspect.openapi()],
              requestBody: { required: true, content: { 'application/json-patch+json': { schema: ref('PatchBody') }, 'application/json': { schema: ref('PatchBody') } } },
              responses: {
                '200': { description: 'The patched aspect', content: json(written) },
                '202': { description: 'Patched, with async=true', content: json(written) },
                '412': {
                  description: 'A precondition of the write failed: the entity does not exist, a structured property it names does not exist, or If-Version-Match does not hold; nothing is written',
                  content: json(ref('Error')),
                },
                ...writeErrors,
                ...bodyErrors,
              },
            },
          }),
      delete: {
        tags: [tag],
        operationId: id('Delete', a.name),
        summary: `Delete the ${a.name} aspect`,
        parameters: [urnParam],
        responses: { '200': { description: 'Deleted; empty body' }, ...writeErrors },
      },
    };
  }
  return paths;
}

/** Builds the whole document. */
export function openapiDocument(): Obj {
  const schemas: Obj = {
    Error: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' }, reason: REASON }, required: ['error'] },
    SystemMetadata: { type: 'object', properties: { lastObserved: { type: 'integer' }, runId: { type: 'string' }, version: { type: 'string', description: "The aspect's version number (1 for its first version, one more for each change), as If-Version-Match takes it; on reads and write results" } }, additionalProperties: true },
    AuditStamp: { type: 'object', properties: { time: { type: 'integer' }, actor: { type: 'string' } } },
    PatchBody: { oneOf: [PATCH_BODY, { type: 'array', items: PATCH_BODY.properties.patch.items, description: 'A bare JSON Patch array, taken as {"patch": [...]}' }] },
  };
  const paths: Obj = {};
  for (const e of registry.entities) {
    for (const a of registry.aspectsOf(e)) schemas[aspectSchemaName(a)] = a.schema;
    for (const v of ['v2', 'v3'] as const) {
      schemas[`${cap(e.name)}Entity${v.toUpperCase()}`] = entitySchema(v, e);
      Object.assign(paths, entityPaths(v, e));
    }
  }
  Object.assign(paths, servicePaths(), restliPaths());
  Object.assign(schemas, serviceSchemas(), restliSchemas());
  return published({
    openapi: '3.1.0',
    info: { title: 'svc metadata catalog', version: '0.1.0', description: 'Entities and their aspects. v3 wraps aspects as {"value": …}; v2 nests them under "aspects".' },
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas },
    paths,
  }) as Obj;
}

/**
 * The document as published: a copy in which ajv-errors' `errorMessage` keyword, which the schemas
 * carry for validation, is the extension `x-errorMessage`, so that strict JSON Schema tools (and
 * generators) take the schemas as they are.
 */
function published(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(published);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k === 'errorMessage' ? 'x-errorMessage' : k, published(x)]));
}

const TOKEN_INFO = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    role: { enum: ROLES },
    createdAt: { type: 'string', format: 'date-time' },
    createdBy: { type: 'string' },
    revokedAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

function serviceSchemas(): Obj {
  return {
    TokenRequest: TOKEN_REQUEST,
    TokenInfo: TOKEN_INFO,
    Readiness: {
      type: 'object',
      description:
        'Search unreachable or lagging does not take the server out of service: writes go on, and search catches up. `search` is DEGRADED when an entity\'s document cannot be delivered or changes wait longer than 30 s',
      properties: {
        status: { enum: ['READY', 'NOT_READY'] },
        database: { enum: ['UP', 'DOWN'] },
        migrations: { enum: ['DONE', 'PENDING'] },
        search: { enum: ['UP', 'DEGRADED', 'UNREACHABLE'] },
        searchDelivery: {
          type: 'object',
          properties: {
            lagSeconds: { type: 'number', description: 'Age of the oldest change not delivered to search yet (0 when none)' },
            outboxDepth: { type: 'integer', description: 'Changes waiting in the search outbox, counted up to 10,000 (svc_search_outbox_depth counts them all)' },
            failingEntities: { type: 'integer', description: 'Entities whose search document could not be delivered (GET /api/search/delivery)' },
          },
          required: ['lagSeconds', 'outboxDepth', 'failingEntities'],
        },
      },
      required: ['status', 'database'],
    },
    SearchDelivery: {
      type: 'object',
      properties: {
        lagSeconds: { type: 'number', description: 'Age of the oldest change not delivered to search yet, in the outbox or of a failing entity (0 when none)' },
        outboxDepth: { type: 'integer', description: 'Changes waiting in the search outbox' },
        outboxOldestSeconds: { type: 'number', description: 'Age of the oldest change in the outbox (0 when empty)' },
        failingEntities: { type: 'integer', description: 'Entities whose search document could not be delivered' },
        failing: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              urn: { type: 'string' },
              error: { type: 'string', description: 'What the search backend said, the last time' },
              attempts: { type: 'integer' },
              ageSeconds: { type: 'number', description: 'Age of its oldest change not delivered' },
              queuedAt: { type: 'string', format: 'date-time' },
              failingSince: { type: 'string', format: 'date-time' },
              lastAttemptAt: { type: 'string', format: 'date-time' },
              nextAttemptAt: { type: 'string', format: 'date-time', description: 'A new change of the entity is tried at once' },
            },
            required: ['urn', 'error', 'attempts', 'ageSeconds', 'queuedAt', 'failingSince', 'lastAttemptAt', 'nextAttemptAt'],
          },
        },
      },
      required: ['lagSeconds', 'outboxDepth', 'outboxOldestSeconds', 'failingEntities', 'failing'],
    },
    Task: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        kind: { type: 'string' },
        subject: { type: 'string' },
        params: { type: 'object' },
        state: { enum: ['PENDING', 'RUNNING', 'SUCCEEDED'] },
        total: { type: ['integer', 'null'] },
        done: { type: 'integer' },
        error: { type: ['string', 'null'] },
        attempts: { type: 'integer' },
        failures: { type: 'integer' },
        createdAt: { type: 'string', format: 'date-time' },
        updatedAt: { type: 'string', format: 'date-time' },
        finishedAt: { type: ['string', 'null'], format: 'date-time' },
      },
    },
  };
}

const STRING = { type: 'string' };
const INTEGER = { type: 'integer' };
const strictObject = (properties: Obj, required = Object.keys(properties)) => ({ type: 'object', properties, required, additionalProperties: false });

/** What the Rest.li calls answer, in DataHub's shapes (aspect values are the aspects' own schemas, so left open here). */
function restliSchemas(): Obj {
  return {
    RestliConfig: {
      type: 'object',
      properties: {
        noCode: STRING,
        versions: { type: 'object', additionalProperties: strictObject({ version: STRING, commit: STRING }) },
        datahub: strictObject({ serverType: STRING, serverEnv: STRING }),
        patchCapable: { type: 'boolean' },
        statefulIngestionCapable: { type: 'boolean' },
        supportsImpactAnalysis: { type: 'boolean' },
        retention: STRING,
        telemetry: strictObject({ enabledCli: { type: 'boolean' }, enabledIngestion: { type: 'boolean' } }),
        timeZone: STRING,
        models: { type: 'object' },
        managedIngestion: strictObject({ enabled: { type: 'boolean' } }),
      },
      required: ['noCode', 'versions'],
    },
    RestliAspect: strictObject({
      urn: STRING,
      version: INTEGER,
      aspect: { type: 'object', description: 'One entry: the Pegasus class name of the aspect and its value', minProperties: 1, maxProperties: 1, additionalProperties: { type: 'object' } },
    }),
    RestliEnvelope: {
      ...strictObject({ name: STRING, type: { const: 'VERSIONED' }, version: INTEGER, value: { type: 'object' }, created: ref('AuditStamp'), systemMetadata: ref('SystemMetadata') }, ['name', 'type', 'version', 'value', 'created']),
      description: 'An aspect as entitiesV2 envelopes it; systemMetadata is left out for a key built from the URN of an entity not stored',
    },
    RestliEntity: strictObject({ entityName: STRING, urn: STRING, aspects: { type: 'object', additionalProperties: ref('RestliEnvelope') } }),
    RestliEntities: strictObject({ results: { type: 'object', additionalProperties: ref('RestliEntity') }, statuses: { type: 'object' }, errors: { type: 'object' } }),
    RestliIngestResult: {
      oneOf: [
        { ...strictObject({ value: STRING }), description: 'ingestProposal: the URN of the proposal' },
        { type: 'object', maxProperties: 0, description: 'ingestProposalBatch: nothing' },
        {
          ...strictObject({
            value: strictObject(
              {
                entityName: STRING,
                aspectName: STRING,
                limit: INTEGER,
                startTimeMillis: INTEGER,
                endTimeMillis: INTEGER,
                values: {
                  type: 'array',
                  items: strictObject({ aspect: strictObject({ value: { type: 'string', description: 'The entry as a JSON string' }, contentType: { const: 'application/json' } }), systemMetadata: ref('SystemMetadata') }),
                },
              },
              ['entityName', 'aspectName', 'limit', 'values'],
            ),
          }),
          description: 'getTimeseriesAspectValues: the entries, newest first',
        },
      ],
    },
    RestliDeleteResult: {
      oneOf: [
        { ...strictObject({ value: strictObject({ urn: STRING, rows: INTEGER, timeseriesRows: INTEGER }) }), description: 'delete: the aspects the entity had' },
        {
          ...strictObject({
            value: strictObject({ dryRun: { type: 'boolean' }, total: INTEGER, relatedAspects: { type: 'array', items: strictObject({ relationship: STRING, entity: STRING, aspect: STRING }) } }),
          }),
          description: 'deleteReferences: the references counted (and removed unless a dry run), the first 10 of them',
        },
      ],
    },
  };
}

/** The Rest.li calls of DataHub's own clients (the `datahub` CLI and Python SDK) that svc serves. */
function restliPaths(): Obj {
  return {
    '/config': {
      get: {
        tags: ['datahub-restli'],
        operationId: 'restliConfig',
        summary: 'The server configuration DataHub clients read first (no token needed): noCode, and the DataHub version whose Rest.li API svc serves',
        security: [],
        responses: { '200': { description: '`{"noCode": "true", "versions": {"acryldata/datahub": {"version": "v0.14.1", …}}, …}`', content: json(ref('RestliConfig')) } },
      },
    },
    '/aspects/{urn}': {
      get: {
        tags: ['datahub-restli'],
        operationId: 'restliGetAspect',
        summary: 'One aspect of an entity under its Pegasus class name: {"urn", "version", "aspect": {"com.linkedin.…": value}}',
        parameters: [param('urn', 'path', { type: 'string' }, 'The entity URN (URL-encoded)'), ...RESTLI_QUERIES.aspect.openapi()],
        responses: { '200': { description: 'The aspect', content: json(ref('RestliAspect')) }, '404': restliError('No such entity, aspect or version'), ...failures },
      },
    },
    '/aspects': {
      post: {
        tags: ['datahub-restli'],
        operationId: 'restliIngestProposal',
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
    },
    '/entitiesV2/{urn}': {
      get: {
        tags: ['datahub-restli'],
        operationId: 'restliGetEntityV2',
        summary: 'An entity with its versioned aspects, each enveloped ({"name", "type", "version", "value", "created", "systemMetadata"}); the key aspect is always included (built from the URN, so an entity that does not exist answers its key alone) unless alwaysIncludeKeyAspect=false',
        parameters: [param('urn', 'path', { type: 'string' }, 'The entity URN (URL-encoded)'), ...RESTLI_QUERIES.entitiesV2.openapi().filter((p) => p.name !== 'ids')],
        responses: { '200': { description: '`{"entityName", "urn", "aspects": {name: envelope}}`', content: json(ref('RestliEntity')) }, '404': restliError('Nothing to answer (no aspect asked for that the entity has, and no key)'), ...failures },
      },
    },
    '/entitiesV2': {
      get: {
        tags: ['datahub-restli'],
        operationId: 'restliBatchGetEntityV2',
        summary: 'Several entities (ids=List(…), at most 1000) as GET /entitiesV2/{urn} answers each',
        parameters: RESTLI_QUERIES.entitiesV2.openapi(),
        responses: { '200': { description: '`{"results": {urn: entity}, "statuses": {}, "errors": {}}`', content: json(ref('RestliEntities')) }, ...failures },
      },
    },
    '/entities': {
      post: {
        tags: ['datahub-restli'],
        operationId: 'restliDeleteEntity',
        summary:
          'action=delete ({"urn"}): hard delete of an entity (admin), as `datahub delete --hard`; action=deleteReferences ({"urn", "dryRun"}, a dry run unless dryRun is false): the references other entities hold to the entity, counted and removed (admin)',
        parameters: RESTLI_QUERIES.entitiesAction.openapi(),
        requestBody: { required: true, content: json({ type: 'object', properties: { urn: { type: 'string' }, dryRun: { type: 'boolean', default: true } }, required: ['urn'] }) },
        responses: {
          '200': { description: '`{"value": {"urn", "rows", "timeseriesRows"}}` for delete; `{"value": {"dryRun", "total", "relatedAspects": [{"relationship", "entity", "aspect"}]}}` (the first 10) for deleteReferences', content: json(ref('RestliDeleteResult')) },
          ...failures,
          ...bodyFailures,
        },
      },
    },
  };
}

/** Tokens, tasks and the operational routes. */
function servicePaths(): Obj {
  const admin = 'Needs a token with the admin role.';
  const open = { security: [] };
  return {
    '/api/tokens': {
      post: {
        tags: ['tokens'],
        operationId: 'createToken',
        summary: 'Create a token (admin); its secret is in the answer only',
        description: admin,
        requestBody: { required: true, content: json(ref('TokenRequest')) },
        responses: {
          '201': { description: 'The token, with its secret `token`', content: json({ allOf: [ref('TokenInfo'), { type: 'object', properties: { token: { type: 'string' } } }] }) },
          ...errors,
          ...bodyErrors,
        },
      },
      get: {
        tags: ['tokens'],
        operationId: 'listTokens',
        summary: 'List tokens, without their secrets (admin)',
        description: admin,
        responses: { '200': { description: 'Every token', content: json({ type: 'object', properties: { tokens: { type: 'array', items: ref('TokenInfo') } } }) }, ...errors },
      },
    },
    '/api/tokens/{id}': {
      delete: {
        tags: ['tokens'],
        operationId: 'revokeToken',
        summary: 'Revoke a token (admin)',
        description: admin,
        parameters: [param('id', 'path', { type: 'string' }, 'The token id')],
        responses: { '200': { description: 'The revoked token', content: json(ref('TokenInfo')) }, '404': { description: 'No such token', content: json(ref('Error')) }, ...errors },
      },
    },
    '/api/tasks': {
      get: {
        tags: ['tasks'],
        operationId: 'listTasks',
        summary: 'List background tasks (value cleanups), newest first',
        parameters: TASK_QUERIES.list.openapi(),
        responses: { '200': { description: 'The tasks', content: json({ type: 'object', properties: { tasks: { type: 'array', items: ref('Task') } } }) }, ...errors },
      },
    },
    '/api/tasks/{id}': {
      get: {
        tags: ['tasks'],
        operationId: 'getTask',
        summary: 'A background task: state and progress',
        parameters: [param('id', 'path', { type: 'integer', minimum: 1 }, 'The task id')],
        responses: { '200': { description: 'The task', content: json(ref('Task')) }, '404': { description: 'No such task', content: json(ref('Error')) }, ...errors },
      },
    },
    '/api/search/delivery': {
      get: {
        tags: ['search'],
        operationId: 'searchDelivery',
        summary: 'How far behind search is, and the entities whose search document could not be delivered (tried again with a pause)',
        parameters: SEARCH_DELIVERY_QUERY.openapi(),
        responses: { '200': { description: 'The lag and the failing entities', content: json(ref('SearchDelivery')) }, ...errors },
      },
    },
    '/gms/operations': {
      post: {
        tags: ['operations'],
        operationId: 'operationsAction',
        summary: 'Rest.li operations actions (also at /operations and /api/gms/operations), admin only',
        description:
          'truncateTimeseriesAspect: body {entityType, aspect, endTimeMillis, dryRun? (true), batchSize? (10000), timeoutSeconds?, forceDeleteByQuery?, forceReindex?}; ' +
          'answers {"value": "<dry-run message>"} or {"value": "svc:<task id>"}. getEsTaskStatus: body {task} or {nodeId, taskId}; answers {"value": "<status as a JSON string>"}. ' +
          'getIndexSizes: answers {"value": {"indexSizes": [{indexName, entityName, aspectName, sizeMb}]}}. Failures: {"message", "status"} with X-RestLi-Error-Response: true.',
        parameters: OPERATIONS_QUERIES.action.openapi(),
        requestBody: { content: json({ type: 'object' }) },
        responses: {
          '200': { description: 'The action\'s value', content: json({ type: 'object', properties: { value: {} } }) },
          ...failures,
          '400': restliError('A missing or invalid parameter'),
          '403': restliError('Not an admin token'),
          ...bodyFailures,
        },
      },
    },
    '/openapi/v2/timeseries/{entityName}/{aspectName}': {
      get: {
        tags: ['timeseries'],
        operationId: 'listTimeseriesEntries',
        summary: 'Entries of a time series aspect of an entity type, newest first: {"scrollId", "results": [{"urn", "messageId"?, "timestampMillis", "event"}]}',
        parameters: [
          param('entityName', 'path', { type: 'string' }, 'Entity type, e.g. dataset'),
          param('aspectName', 'path', { type: 'string' }, 'A time series aspect, e.g. datasetProfile'),
          ...TIMESERIES_QUERIES.list.openapi(),
        ],
        responses: {
          '200': {
            description: 'A page of entries',
            content: json({
              type: 'object',
              properties: {
                scrollId: { type: ['string', 'null'] },
                results: {
                  type: 'array',
                  items: { type: 'object', properties: { urn: { type: 'string' }, messageId: { type: 'string' }, timestampMillis: { type: 'integer' }, event: { type: 'object' } }, required: ['urn', 'timestampMillis', 'event'] },
                },
              },
              required: ['scrollId', 'results'],
            }),
          },
          ...errors,
        },
      },
    },
    '/openapi/operations/elasticSearch/getTaskStatus': {
      get: {
        tags: ['operations'],
        operationId: 'getTaskStatus',
        summary: 'The status of a truncation task (admin): {completed, taskId, status, runTimeNanos}',
        parameters: OPERATIONS_QUERIES.taskStatus.openapi(),
        responses: {
          '200': {
            description: 'The task status',
            content: json({
              type: 'object',
              properties: { completed: { type: 'boolean' }, taskId: { type: 'string' }, status: { type: 'object', description: 'total, deleted, batches, … as OpenSearch reports a delete by query or a reindex' }, runTimeNanos: { type: 'integer' } },
              required: ['completed', 'taskId', 'status'],
            }),
          },
          '404': { description: 'No such task', content: json(ref('Error')) }, ...errors },
      },
    },
    '/health': {
      get: {
        tags: ['operations'],
        operationId: 'health',
        summary: 'Liveness: the process answers (no token needed)',
        ...open,
        responses: { '200': { description: 'The process is up', content: json({ type: 'object', properties: { status: { const: 'UP' } }, required: ['status'] }) } },
      },
    },
    '/ready': {
      get: {
        tags: ['operations'],
        operationId: 'ready',
        summary: 'Readiness: the database answers and every migration is applied (no token needed)',
        ...open,
        responses: { '200': { description: 'Ready: the database up, the migrations applied', content: json(ref('Readiness')) }, '503': { description: 'Not ready', content: json(ref('Readiness')) } },
      },
    },
    '/metrics': {
      get: {
        tags: ['operations'],
        operationId: 'metrics',
        summary: 'Prometheus metrics (no token needed)',
        ...open,
        responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
  };
}

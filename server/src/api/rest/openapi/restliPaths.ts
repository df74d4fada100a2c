/** DataHub's Rest.li routes in the OpenAPI document (`/entities`, `/aspects`, `/entitiesV2`, …). */
import { RESTLI_QUERIES } from '../restliRoutes.ts';
import { type Obj, ref, json, param, errors, restliError, failures, bodyFailures } from './parts.ts';

const STRING = { type: 'string' };
const INTEGER = { type: 'integer' };
const strictObject = (properties: Obj, required = Object.keys(properties)) => ({ type: 'object', properties, required, additionalProperties: false });

/** What the Rest.li calls answer, in DataHub's shapes (aspect values are the aspects' own schemas, so left open here). */
export function restliSchemas(): Obj {
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
export function restliPaths(): Obj {
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

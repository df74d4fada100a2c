/**
 * The schemas the routes' operations refer to by name (`ref('TokenInfo')`), components of the OpenAPI
 * document: svc's own (tokens, readiness, search delivery, tasks, truncations) and the answers of the
 * Rest.li calls in DataHub's shapes.
 */
import { ROLES } from '../../../auth/authorize.ts';
import { TOKEN_REQUEST } from '../../../auth/tokens.ts';
import { TASK_STATES } from '../../../contract/tasks.ts';
import { type Obj, ref } from './parts.ts';

/** The routes' schemas, svc's first, then the Rest.li calls'. */
export function routeSchemas(): Obj {
  return { ...serviceSchemas(), ...restliSchemas() };
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
    expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'When the token stops being taken; null: never' },
  },
};

/** The figures of search delivery that `/ready` and `/api/search/delivery` both report. */
const LAG_SECONDS = { type: 'number', description: 'Age of the oldest change not delivered to search yet, in the outbox or of a failing entity (0 when none)' };
const FAILING_ENTITIES = { type: 'integer', description: 'Entities whose search document could not be delivered (listed by GET /api/search/delivery)' };

/** What svc's own routes take and answer: tokens, readiness, search delivery, tasks, truncations. */
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
            lagSeconds: LAG_SECONDS,
            outboxDepth: { type: 'integer', description: 'Changes waiting in the search outbox, counted up to 10,000 (svc_search_outbox_depth counts them all)' },
            failingEntities: FAILING_ENTITIES,
          },
          required: ['lagSeconds', 'outboxDepth', 'failingEntities'],
        },
      },
      required: ['status', 'database'],
    },
    SearchDelivery: {
      type: 'object',
      properties: {
        lagSeconds: LAG_SECONDS,
        outboxDepth: { type: 'integer', description: 'Changes waiting in the search outbox' },
        outboxOldestSeconds: { type: 'number', description: 'Age of the oldest change in the outbox (0 when empty)' },
        failingEntities: FAILING_ENTITIES,
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
        state: { enum: [...TASK_STATES] },
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
    TruncationRequest: {
      type: 'object',
      properties: {
        entityType: { type: 'string', description: 'e.g. dataset' },
        aspect: { type: 'string', description: 'A time series aspect, e.g. datasetProfile' },
        endTimeMillis: { type: 'integer', description: 'Entries at or before this time go (epoch milliseconds)' },
        dryRun: { type: 'boolean', default: true, description: 'Only count, and say what would be done' },
        batchSize: { type: 'integer', default: 10000 },
        timeoutSeconds: { type: 'integer', minimum: 1 },
        forceDeleteByQuery: { type: 'boolean' },
        forceReindex: { type: 'boolean' },
      },
      required: ['entityType', 'aspect', 'endTimeMillis'],
    },
    TruncationAnswer: {
      oneOf: [
        {
          type: 'object',
          description: 'A dry run: how many entries would go of how many, whether the index would be rebuilt without them, and DataHub’s sentence',
          properties: { dryRun: { const: true }, toDelete: { type: 'integer' }, total: { type: 'integer' }, reindex: { type: 'boolean' }, message: { type: 'string' } },
          required: ['dryRun', 'toDelete', 'total', 'reindex', 'message'],
        },
        {
          type: 'object',
          description: 'A real run: its task id (node:number, e.g. svc:42), followed through getEsTaskStatus',
          properties: { dryRun: { const: false }, task: { type: 'string' } },
          required: ['dryRun', 'task'],
        },
      ],
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
        {
          ...strictObject({
            value: strictObject({
              from: INTEGER,
              pageSize: INTEGER,
              numEntities: INTEGER,
              entities: { type: 'array', items: strictObject({ entity: STRING, matchedFields: { type: 'array', maxItems: 0 } }) },
              metadata: strictObject({ aggregations: { type: 'array', maxItems: 0 } }),
            }),
          }),
          description: 'search: a page of the matching entities and how many match in all',
        },
      ],
    },
  };
}

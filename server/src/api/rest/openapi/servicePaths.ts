/** svc's own routes in the OpenAPI document: tokens, health, tasks, search delivery, time series, operations. */
import { ROLES } from '../../../auth/authorize.ts';
import { TOKEN_REQUEST } from '../../../auth/tokens.ts';
import { OPERATIONS_QUERIES } from '../operationsRoutes.ts';
import { TIMESERIES_QUERIES } from '../timeseriesRoutes.ts';
import { SEARCH_DELIVERY_QUERY } from '../searchDeliveryRoutes.ts';
import { TASK_QUERIES } from '../taskRoutes.ts';
import { TASK_STATES } from '../../../contract/tasks.ts';
import { TRUNCATIONS_PATH } from '../../../contract/truncation.ts';
import { type Obj, ref, json, param, errors, restliError, failures, bodyFailures, bodyErrors } from './parts.ts';

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

export function serviceSchemas(): Obj {
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

export function servicePaths(): Obj {
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
    [TRUNCATIONS_PATH]: {
      post: {
        tags: ['timeseries'],
        operationId: 'truncateTimeseries',
        summary: 'Truncate a time series aspect (admin): truncateTimeseriesAspect with its counts or task in fields',
        description: `${admin} The parameters and rules of the operations action truncateTimeseriesAspect; both force flags set alike is refused (400).`,
        requestBody: { required: true, content: json(ref('TruncationRequest')) },
        responses: {
          '200': { description: 'A dry run’s counts', content: json(ref('TruncationAnswer')) },
          '202': { description: 'A real run’s task', content: json(ref('TruncationAnswer')) },
          ...errors,
          ...bodyErrors,
        },
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

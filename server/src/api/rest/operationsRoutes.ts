/**
 * DataHub's Rest.li `operations` actions, `POST /gms/operations?action=<name>` (also at `/operations`
 * and `/api/gms/operations`, where DataHub's clients and its frontend proxy send them):
 * `truncateTimeseriesAspect`, `getEsTaskStatus` and `getIndexSizes`. Answers are `{"value": …}`;
 * failures are Rest.li error responses, `{"message", "status"}` with the header
 * `X-RestLi-Error-Response: true`. And the OpenAPI form of the task status,
 * `GET /openapi/operations/elasticSearch/getTaskStatus?task=<node:number>`.
 */
import type { Request, Response, Router } from 'express';
import { SvcError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { TimeseriesService } from '../../timeseries/timeseriesService.ts';
import { principalOf } from '../auth.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';
import { restliHandler } from './restliProtocol.ts';
import { serve, type Operations } from './openapi/operations.ts';
import { errors, bodyFailures, failures, json, ref, restliError } from './openapi/parts.ts';

const ACTIONS = ['truncateTimeseriesAspect', 'getEsTaskStatus', 'getIndexSizes'] as const;

export const OPERATIONS_QUERIES = {
  action: queryParams({ action: { type: 'enum', values: ACTIONS, required: true, description: 'The action to run' } }),
  taskStatus: queryParams({ task: { type: 'string', required: true, description: 'The task id, node:number (e.g. svc:42)' } }),
};

/** The operations routes and their OpenAPI operations. */
export const OPERATIONS_API = {
  operationsAction: {
    method: 'post',
    path: '/gms/operations',
    aliases: ['/operations', '/api/gms/operations'],
    tags: ['operations'],
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
  getTaskStatus: {
    method: 'get',
    path: '/openapi/operations/elasticSearch/getTaskStatus',
    tags: ['operations'],
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
      '404': { description: 'No such task', content: json(ref('Error')) },
      ...errors,
    },
  },
} satisfies Operations;

/** The paths of the operations actions (Rest.li's: failures there take Rest.li's form, see errorHandler.ts). */
export const OPERATIONS_PATHS: readonly string[] = [OPERATIONS_API.operationsAction.path, ...OPERATIONS_API.operationsAction.aliases];

export function operationsRoutes(router: Router, timeseries: TimeseriesService, log: Logger): void {
  serve(router, OPERATIONS_API, {
    operationsAction: restliHandler(log, 'operations action failed', async (req, res) => {
      const { action: name } = OPERATIONS_QUERIES.action.parse(req);
      if (name === undefined) throw SvcError.validation([`The query parameter action is required: one of ${ACTIONS.join(', ')}`]);
      const principal = principalOf(req);
      switch (name) {
        case 'truncateTimeseriesAspect':
          return sendJson(res, 200, { value: await timeseries.truncate(principal, req.body) });
        case 'getEsTaskStatus':
          // DataHub returns the status as a JSON string inside `value`.
          return sendJson(res, 200, { value: JSON.stringify(await timeseries.taskStatus(principal, req.body ?? {})) });
        case 'getIndexSizes':
          return sendJson(res, 200, { value: await timeseries.indexSizes(principal, req.body ?? {}) });
      }
    }),
    getTaskStatus: async (req, res) => {
      const { task } = OPERATIONS_QUERIES.taskStatus.parse(req);
      const principal = principalOf(req);
      let status: Record<string, unknown>;
      try {
        status = await timeseries.statusOf(principal, task ?? '', 'Task ID should be in the form nodeId:taskId e.g. aB1cdEf2GHI-JKLMnoPQr3:123456');
      } catch (err) {
        // This route words the refusal as DataHub's OpenAPI controller does.
        if (err instanceof SvcError && err.code === 'FORBIDDEN') throw SvcError.forbidden(`${principal.actor} is not authorized to get ElasticSearch task status`, err.detail ?? '');
        throw err;
      }
      if ('error' in status) throw SvcError.notFound(String(status.error));
      sendJson(res, 200, status);
    },
  });
}

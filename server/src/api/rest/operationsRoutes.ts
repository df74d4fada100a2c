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

export const OPERATIONS_PATHS = ['/gms/operations', '/operations', '/api/gms/operations'];
const ACTIONS = ['truncateTimeseriesAspect', 'getEsTaskStatus', 'getIndexSizes'] as const;

export const OPERATIONS_QUERIES = {
  action: queryParams({ action: { type: 'enum', values: ACTIONS, required: true, description: 'The action to run' } }),
  taskStatus: queryParams({ task: { type: 'string', required: true, description: 'The task id, node:number (e.g. svc:42)' } }),
};

export function operationsRoutes(router: Router, timeseries: TimeseriesService, log: Logger): void {
  const action = restliHandler(log, 'operations action failed', async (req, res) => {
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
  });
  for (const path of OPERATIONS_PATHS) router.post(path, action);

  router.get('/openapi/operations/elasticSearch/getTaskStatus', async (req, res) => {
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
  });
}

/**
 * `GET /openapi/v2/timeseries/{entity}/{aspect}`: the entries of a time series aspect of an entity
 * type, newest first, as DataHub's generic time series controller lists them
 * (`{"scrollId", "results": [{"urn", "messageId"?, "timestampMillis", "event"}]}`). And svc's own form
 * of a truncation, `POST /api/timeseries/truncations` (contract/truncation.ts): a dry run's counts, or
 * the task of a real run, in fields (DataHub's action answers them in a sentence).
 */
import type { Router } from 'express';
import type { TimeseriesService } from '../../timeseries/timeseriesService.ts';
import { principalOf } from '../auth.ts';
import { TRUNCATIONS_PATH } from '../../contract/truncation.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';

export const TIMESERIES_QUERIES = {
  list: queryParams({
    count: { type: 'integer', default: 10, minimum: 1, description: 'Page size (larger than 1000 is read as 1000)' },
    scrollId: { type: 'string', description: 'The scrollId of the previous page, to read the next one' },
    urn: { type: 'string', description: 'Only the entries of this entity' },
    startTimeMillis: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, description: 'Only entries at or after this time (epoch milliseconds)' },
    endTimeMillis: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, description: 'Only entries at or before this time (epoch milliseconds)' },
    systemMetadata: { type: 'boolean', default: false, description: 'Include each entry’s system metadata' },
  }),
  truncate: queryParams({}),
};

export function timeseriesRoutes(router: Router, timeseries: TimeseriesService): void {
  router.get('/openapi/v2/timeseries/:entityName/:aspectName', async (req, res) => {
    const q = TIMESERIES_QUERIES.list.parse(req);
    const page = await timeseries.list(principalOf(req), String(req.params.entityName), String(req.params.aspectName), {
      count: q.count,
      scrollId: q.scrollId,
      urn: q.urn,
      startTimeMillis: q.startTimeMillis,
      endTimeMillis: q.endTimeMillis,
      systemMetadata: q.systemMetadata,
    });
    sendJson(res, 200, page);
  });
  router.post(TRUNCATIONS_PATH, async (req, res) => {
    TIMESERIES_QUERIES.truncate.parse(req);
    const answer = await timeseries.truncations(principalOf(req), req.body);
    sendJson(res, answer.dryRun ? 200 : 202, answer);
  });
}

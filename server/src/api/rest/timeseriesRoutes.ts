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
import { serve, type Operations } from './openapi/operations.ts';
import { errors, bodyErrors, json, param, ref } from './openapi/parts.ts';

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

/** The time series routes and their OpenAPI operations. */
export const TIMESERIES_API = {
  truncateTimeseries: {
    method: 'post',
    path: TRUNCATIONS_PATH,
    tags: ['timeseries'],
    summary: 'Truncate a time series aspect (admin): truncateTimeseriesAspect with its counts or task in fields',
    description: 'Needs a token with the admin role. The parameters and rules of the operations action truncateTimeseriesAspect; both force flags set alike is refused (400).',
    requestBody: { required: true, content: json(ref('TruncationRequest')) },
    responses: {
      '200': { description: 'A dry run’s counts', content: json(ref('TruncationAnswer')) },
      '202': { description: 'A real run’s task', content: json(ref('TruncationAnswer')) },
      ...errors,
      ...bodyErrors,
    },
  },
  listTimeseriesEntries: {
    method: 'get',
    path: '/openapi/v2/timeseries/{entityName}/{aspectName}',
    tags: ['timeseries'],
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
} satisfies Operations;

export function timeseriesRoutes(router: Router, timeseries: TimeseriesService): void {
  serve(router, TIMESERIES_API, {
    listTimeseriesEntries: async (req, res) => {
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
    },
    truncateTimeseries: async (req, res) => {
      TIMESERIES_QUERIES.truncate.parse(req);
      const answer = await timeseries.truncations(principalOf(req), req.body);
      sendJson(res, answer.dryRun ? 200 : 202, answer);
    },
  });
}

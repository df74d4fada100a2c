/** `GET /api/search/delivery`: search's lag and the entities whose document could not be delivered. */
import { Router } from 'express';
import type { SearchDeliveryService } from '../../search/searchDeliveryService.ts';
import { principalOf } from '../auth.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';
import { serve, type Operations } from './openapi/operations.ts';
import { errors, json, ref } from './openapi/parts.ts';

/** The query parameters of the route (also the OpenAPI document's). */
export const SEARCH_DELIVERY_QUERY = queryParams({
  count: { type: 'integer', default: 100, minimum: 1, description: 'Most failing entities to list, the longest waiting first (larger than 1000 is read as 1000)' },
});

/** The route and its OpenAPI operation. */
export const SEARCH_DELIVERY_API = {
  searchDelivery: {
    method: 'get',
    path: '/api/search/delivery',
    tags: ['search'],
    summary: 'How far behind search is, and the entities whose search document could not be delivered (tried again with a pause)',
    parameters: SEARCH_DELIVERY_QUERY.openapi(),
    responses: { '200': { description: 'The lag and the failing entities', content: json(ref('SearchDelivery')) }, ...errors },
  },
} satisfies Operations;

export function searchDeliveryRoutes(delivery: SearchDeliveryService): Router {
  return serve(Router(), SEARCH_DELIVERY_API, {
    searchDelivery: async (req, res) => {
      const q = SEARCH_DELIVERY_QUERY.parse(req);
      sendJson(res, 200, await delivery.report(principalOf(req), Math.min(q.count, 1000)));
    },
  });
}

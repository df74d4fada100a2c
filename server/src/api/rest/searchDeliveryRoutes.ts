/** `GET /api/search/delivery`: search's lag and the entities whose document could not be delivered. */
import { Router } from 'express';
import type { SearchDeliveryService } from '../../search/searchDeliveryService.ts';
import { principalOf } from '../auth.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';

/** The query parameters of the route (also the OpenAPI document's). */
export const SEARCH_DELIVERY_QUERY = queryParams({
  count: { type: 'integer', default: 100, minimum: 1, description: 'Most failing entities to list, the longest waiting first (larger than 1000 is read as 1000)' },
});

export function searchDeliveryRoutes(delivery: SearchDeliveryService): Router {
  const router = Router();
  router.get('/api/search/delivery', async (req, res) => {
    const q = SEARCH_DELIVERY_QUERY.parse(req);
    sendJson(res, 200, await delivery.report(principalOf(req), Math.min(q.count, 1000)));
  });
  return router;
}

/**
 * Search delivery as a resource for callers (`GET /api/search/delivery`): how far behind search is, and
 * the entities whose document could not be delivered, with why and since when (deliveryFailures.ts).
 */
import { authorize, type Principal } from '../auth/authorize.ts';
import type { Pool } from '../db/pool.ts';
import { deliveryLag, failingEntities, type DeliveryLag, type FailingEntity } from './deliveryFailures.ts';

export interface SearchDeliveryReport extends DeliveryLag {
  /** The failing entities, the longest waiting first (at most the limit asked for). */
  failing: FailingEntity[];
}

export class SearchDeliveryService {
  constructor(private readonly pool: Pool) {}

  async report(principal: Principal, limit: number): Promise<SearchDeliveryReport> {
    authorize(principal, 'READ');
    const [lag, failing] = await Promise.all([deliveryLag(this.pool), failingEntities(this.pool, limit)]);
    return { ...lag, failing };
  }
}

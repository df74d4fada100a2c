/** `/health` (the process is up), `/ready` (database reachable, migrations applied; search reachable or not), `/metrics`. */
import type { Router } from 'express';
import type { Catalog } from '../catalog.ts';
import type { Metrics } from './metrics.ts';

/**
 * Adds the operational routes to `router` (the app itself): directly, not in a router of their own,
 * which every other request would leave unanswered and so pass on only at the event loop's next turn.
 */
export function healthRoutes(router: Router, catalog: Catalog, metrics: Metrics): void {
  router.get('/health', (_req, res) => {
    res.json({ status: 'UP' });
  });
  router.get('/ready', async (_req, res) => {
    try {
      const [migrated, search] = await Promise.all([catalog.ready(), catalog.searchReachable()]);
      // Search unreachable does not take the server out of service: writes go on, and search catches up.
      res.status(migrated ? 200 : 503).json({
        status: migrated ? 'READY' : 'NOT_READY',
        database: 'UP',
        migrations: migrated ? 'DONE' : 'PENDING',
        search: search ? 'UP' : 'UNREACHABLE',
      });
    } catch {
      res.status(503).json({ status: 'NOT_READY', database: 'DOWN' });
    }
  });
  router.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

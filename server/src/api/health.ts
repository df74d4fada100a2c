/** `/health` (the process is up), `/ready` (database reachable, migrations applied; search's state and lag), `/metrics`. */
import type { Router } from 'express';
import type { Catalog } from '../catalog.ts';
import { deliveryLag, type DeliveryLag } from '../search/deliveryFailures.ts';
import type { Metrics } from './metrics.ts';
import { serve, type Operations } from './rest/openapi/operations.ts';
import { json, ref } from './rest/openapi/parts.ts';

/** Search lagging more than this many seconds is reported as `DEGRADED` by `/ready` (the target is 1 s). */
export const SEARCH_LAG_DEGRADED_SECONDS = 30;
/** The most outbox rows `/ready` counts: a probe must stay fast under any backlog (`/metrics` counts them all). */
const READY_COUNT_UP_TO = 10_000;

/**
 * Search's state as `/ready` reports it: `UNREACHABLE` when its backend does not answer, `DEGRADED`
 * when an entity's document cannot be delivered or changes wait longer than
 * {@link SEARCH_LAG_DEGRADED_SECONDS}, `UP` otherwise.
 */
export function searchState(reachable: boolean, lag: DeliveryLag | undefined): 'UP' | 'DEGRADED' | 'UNREACHABLE' {
  if (!reachable) return 'UNREACHABLE';
  return lag && (lag.failingEntities > 0 || lag.lagSeconds > SEARCH_LAG_DEGRADED_SECONDS) ? 'DEGRADED' : 'UP';
}

/** The operational routes and their OpenAPI operations: served without a token. */
export const HEALTH_API = {
  health: {
    method: 'get',
    path: '/health',
    tags: ['operations'],
    summary: 'Liveness: the process answers (no token needed)',
    security: [],
    responses: { '200': { description: 'The process is up', content: json({ type: 'object', properties: { status: { const: 'UP' } }, required: ['status'] }) } },
  },
  ready: {
    method: 'get',
    path: '/ready',
    tags: ['operations'],
    summary: 'Readiness: the database answers and every migration is applied (no token needed)',
    security: [],
    responses: { '200': { description: 'Ready: the database up, the migrations applied', content: json(ref('Readiness')) }, '503': { description: 'Not ready', content: json(ref('Readiness')) } },
  },
  metrics: {
    method: 'get',
    path: '/metrics',
    tags: ['operations'],
    summary: 'Prometheus metrics (no token needed)',
    security: [],
    responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
  },
} satisfies Operations;

/**
 * Adds the operational routes to `router` (the app itself): directly, not in a router of their own,
 * which every other request would leave unanswered and so pass on only at the event loop's next turn.
 */
export function healthRoutes(router: Router, catalog: Catalog, metrics: Metrics): void {
  serve(router, HEALTH_API, {
    health: (_req, res) => {
      res.json({ status: 'UP' });
    },
    ready: async (_req, res) => {
      try {
        const [migrated, reachable] = await Promise.all([catalog.ready(), catalog.searchReachable()]);
        // Unknown until the migrations are applied (the table of failing entities may not exist yet).
        const lag = migrated ? await deliveryLag(catalog.pool, READY_COUNT_UP_TO) : undefined;
        // Neither search unreachable nor search lagging takes the server out of service: writes go on, and
        // search catches up. Every server shares the one outbox, so failing readiness for it would take
        // them all out together, for something none of them can mend by restarting. The body says it.
        res.status(migrated ? 200 : 503).json({
          status: migrated ? 'READY' : 'NOT_READY',
          database: 'UP',
          migrations: migrated ? 'DONE' : 'PENDING',
          search: searchState(reachable, lag),
          ...(lag && { searchDelivery: { lagSeconds: round(lag.lagSeconds), outboxDepth: lag.outboxDepth, failingEntities: lag.failingEntities } }),
        });
      } catch {
        res.status(503).json({ status: 'NOT_READY', database: 'DOWN' });
      }
    },
    metrics: async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    },
  });
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** Prometheus metrics: requests by route and status, a latency histogram, and the Postgres pool. */
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Pool } from '../db/pool.ts';

export interface Metrics {
  registry: Registry;
  middleware(req: Request, res: Response, next: NextFunction): void;
}

export function createMetrics(pool: Pool): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const poolGauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  poolGauge('svc_db_pool_connections', 'Open Postgres connections of the pool', () => pool.totalCount);
  poolGauge('svc_db_pool_idle', 'Idle Postgres connections of the pool', () => pool.idleCount);
  poolGauge('svc_db_pool_waiting', 'Requests waiting for a Postgres connection', () => pool.waitingCount);

  return {
    registry,
    middleware(req, res, next) {
      const start = process.hrtime.bigint();
      res.on('finish', () => {
        // The route template (not the URL) keeps label cardinality bounded.
        const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        requests.inc({ method: req.method, route, status: String(res.statusCode) });
        latency.observe({ method: req.method, route }, seconds);
      });
      next();
    },
  };
}

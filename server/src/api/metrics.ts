/** Prometheus metrics: requests by route and status, a latency histogram, and the Postgres pool. */
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { transactionRetries, type Pool } from '../db/pool.ts';
import type { WriteBatchStats } from '../entities/writeBatcher.ts';
import { checkedWriteCounts } from '../entities/entityService.ts';
import { deliveryLag, type DeliveryLag } from '../search/deliveryFailures.ts';
import type { SearchOutbox } from '../search/outbox.ts';
import { opensearchStats } from '../search/opensearchStats.ts';

export interface Metrics {
  registry: Registry;
  middleware(req: Request, res: Response, next: NextFunction): void;
}

export function createMetrics(pool: Pool, writeBatches: () => Readonly<WriteBatchStats>, outbox: Pick<SearchOutbox, 'stats' | 'onDelivered'>): Metrics {
  const search = outbox.stats;
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
  // Metrics read at each scrape from a number svc keeps: a gauge is set to it, a counter to it as its
  // running total.
  const collected = (kind: 'gauge' | 'counter', name: string, help: string, read: () => number | Promise<number>) =>
    kind === 'gauge'
      ? new Gauge({ name, help, registers: [registry], async collect() { this.set(await read()); } })
      : new Counter({ name, help, registers: [registry], async collect() { this.reset(); this.inc(await read()); } });
  collected('gauge', 'svc_db_pool_connections', 'Open Postgres connections of the pool', () => pool.totalCount);
  collected('gauge', 'svc_db_pool_idle', 'Idle Postgres connections of the pool', () => pool.idleCount);
  collected('gauge', 'svc_db_pool_waiting', 'Requests waiting for a Postgres connection', () => pool.waitingCount);
  // Group commit of single-aspect writes: writes per statement is what it saves under load.
  collected('counter', 'svc_db_grouped_writes_total', 'Single-aspect writes sent through the group commit', () => writeBatches().writes);
  collected('counter', 'svc_db_grouped_write_statements_total', 'Statements the group commit sent for them', () => writeBatches().statements);
  collected('counter', 'svc_db_grouped_write_fallbacks_total', 'Batches that failed as a whole and were sent again one write at a time', () => writeBatches().fallbacks);
  collected('counter', 'svc_db_deadlock_retries_total', 'Transactions run again after a deadlock (svc locks in one order: expected 0)', () => transactionRetries.deadlock);
  collected('counter', 'svc_write_stale_total', 'Writes prepared without locks that found what they read changed, and were prepared again', () => checkedWriteCounts.stale);
  collected('counter', 'svc_write_kept_total', 'Writes prepared from what the last write of their aspect on this server left, without reading it', () => checkedWriteCounts.kept);
  collected('counter', 'svc_write_guessed_total', 'Writes to entities nothing was kept of, prepared from a guess of what a read would find (a wrong one is refused by its statement and counted as stale)', () => checkedWriteCounts.guessed);
  collected('counter', 'svc_write_locked_total', 'Writes prepared without locks that went under locks instead: after conflicting twice, or at their rules\' asking', () => checkedWriteCounts.locked);
  collected('counter', 'svc_db_serialization_retries_total', 'Transactions run again after a serialization failure', () => transactionRetries.serialization);
  // Search: how far behind it is, and what its dispatcher did. One read of the lag serves the gauges of
  // one scrape (they are collected together).
  let reading: Promise<DeliveryLag> | undefined;
  const lag = () =>
    (reading ??= deliveryLag(pool)
      .catch(() => ({ outboxDepth: NaN, failingEntities: NaN, lagSeconds: NaN, outboxOldestSeconds: NaN }))
      .finally(() => setImmediate(() => (reading = undefined))));
  collected('gauge', 'svc_search_lag_seconds', 'Age of the oldest change not delivered to search yet, waiting in the outbox or of an entity failing delivery (0 when none)', async () => (await lag()).lagSeconds);
  collected('gauge', 'svc_search_outbox_depth', 'Changes waiting in the search outbox', async () => (await lag()).outboxDepth);
  collected('gauge', 'svc_search_outbox_oldest_seconds', 'Age of the oldest change waiting in the search outbox (0 when empty)', async () => (await lag()).outboxOldestSeconds);
  collected('gauge', 'svc_search_failing_entities', 'Entities whose search document could not be delivered, tried again with a pause (listed by GET /api/search/delivery)', async () => (await lag()).failingEntities);
  const delivery = new Histogram({
    name: 'svc_search_delivery_seconds',
    help: 'Time from a change committed to its entity\'s search document delivered, per entity a dispatcher step of this process delivered (OpenSearch shows it at its next refresh)',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  outbox.onDelivered((ages) => {
    for (const a of ages) delivery.observe(a);
  });
  collected('counter', 'svc_search_delivered_total', 'Entities whose search documents this process applied', () => search.delivered);
  collected('counter', 'svc_search_delivery_steps_total', 'Outbox steps of this process that delivered something (delivered over steps: entities per step)', () => search.steps);
  collected('counter', 'svc_search_delivery_failures_total', 'Outbox steps that failed (search unreachable, …) and were retried', () => search.failures);
  collected('counter', 'svc_search_entity_failures_total', 'Tries of single entities\' search documents that failed (the entity is tried again later; see svc_search_failing_entities)', () => search.entityFailures);
  collected('counter', 'svc_search_timeseries_failures_total', 'Shipping steps of time series entries that failed while search documents went on', () => search.timeseriesFailures);
  collected('counter', 'svc_search_rejected_total', 'Search documents OpenSearch refused (their entities are tried again later)', () => opensearchStats.rejected);
  collected('counter', 'svc_search_mapping_conflicts_total', 'Search fields that exist with another type until the index is rebuilt', () => opensearchStats.mappingConflicts);

  // The series of each (method, route, status), looked up once: prom-client hashes label objects on
  // every call otherwise, and this runs on every request.
  const series = new Map<string, { count: { inc(): void }; latency: { observe(v: number): void } }>();
  const seriesOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      s = { count: requests.labels(method, route, String(status)), latency: latency.labels(method, route) };
      series.set(key, s);
    }
    return s;
  };

  return {
    registry,
    middleware(req, res, next) {
      const start = process.hrtime.bigint();
      res.on('finish', () => {
        // The route template (not the URL) keeps label cardinality bounded.
        const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
        const s = seriesOf(req.method, route, res.statusCode);
        s.count.inc();
        s.latency.observe(Number(process.hrtime.bigint() - start) / 1e9);
      });
      next();
    },
  };
}

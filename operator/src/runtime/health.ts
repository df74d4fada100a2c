/**
 * The operator's HTTP endpoint: `/healthz` (the process serves), `/readyz` (its caches are synced, or
 * it is a standby replica waiting for the lease) and `/metrics` (Prometheus text).
 */
import { createServer, type Server } from 'node:http';
import type { OperatorMetrics } from './metrics.ts';

export interface Probes {
  /** Why the operator is not ready, or undefined when it is. */
  notReady(): string | undefined;
}

/** Listens on `port` (0: a free one) on every interface; resolves with the server and the port. */
export async function startHealthServer(port: number, probes: Probes, metrics: OperatorMetrics): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (path === '/readyz') {
      const why = probes.notReady();
      res.writeHead(why ? 503 : 200, { 'content-type': 'text/plain' }).end(why ?? 'ok');
    } else if (path === '/metrics') {
      metrics.expose().then(
        ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /healthz, /readyz or /metrics');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : port };
}

/** Assembles the HTTP application: open operational routes, docs, then authenticated API routes. */
import express, { type Express } from 'express';
import { IncomingMessage, ServerResponse, createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { Catalog } from '../catalog.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../shared/log.ts';
import { SvcError } from '../shared/errors.ts';
import { authenticate } from './auth.ts';
import { clientErrorHandler } from './clientErrors.ts';
import { errorHandler } from './errorHandler.ts';
import { healthRoutes } from './health.ts';
import { requestBody } from './requestBody.ts';
import { createMetrics } from './metrics.ts';
import { pathGuard } from './pathGuard.ts';
import { queryGuard } from './queryGuard.ts';
import { GRAPHQL_PATH, graphqlEndpoint, wantsGraphiQL } from './graphql/endpoint.ts';
import { GRAPHIQL_FILES_ROUTE, serveGraphiQLFile } from './graphql/graphiql.ts';
import { restliConfigRoutes, restliUnsupported } from './rest/restliProtocol.ts';
import { restliRoutes } from './rest/restliRoutes.ts';
import { entityRoutes } from './rest/entityRoutes.ts';
import { tokenRoutes } from './rest/tokenRoutes.ts';
import { searchDeliveryRoutes } from './rest/searchDeliveryRoutes.ts';
import { taskRoutes } from './rest/taskRoutes.ts';
import { operationsRoutes } from './rest/operationsRoutes.ts';
import { timeseriesRoutes } from './rest/timeseriesRoutes.ts';
import { timelineRoutes } from './rest/timelineRoutes.ts';

export interface AppDeps {
  config: Config;
  catalog: Catalog;
  log: Logger;
}

const SWAGGER_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>svc API</title>
<link rel="stylesheet" href="./swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="./swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi/v3/api-docs', dom_id: '#ui', deepLinking: true, docExpansion: 'none' });</script>
</body></html>`;

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const { catalog } = deps;
  const metrics = createMetrics(catalog.pool, () => catalog.entities.writeBatchStats, catalog.searchOutbox);
  app.use(metrics.middleware);
  app.use(pathGuard);
  app.use(queryGuard);
  if (deps.log.isLevelEnabled('debug')) {
    app.use((req, res, next) => {
      const start = Date.now();
      res.on('finish', () => deps.log.debug({ method: req.method, url: req.originalUrl, status: res.statusCode, ms: Date.now() - start }, 'request'));
      next();
    });
  }
  healthRoutes(app, catalog, metrics);

  // The API documentation holds no data: it is open, so the browsable page works without a token. The
  // document is built by the first request for it.
  let doc: Promise<string> | undefined;
  app.get('/openapi/v3/api-docs', async (_req, res) => {
    doc ??= import('./rest/openapiDocument.ts').then((m) => JSON.stringify(m.openapiDocument()));
    res.type('application/json').send(await doc);
  });
  const swaggerDir = (createRequire(import.meta.url)('swagger-ui-dist') as { getAbsoluteFSPath(): string }).getAbsoluteFSPath();
  app.get(['/openapi/swagger-ui', '/openapi/swagger-ui/', '/openapi/swagger-ui/index.html'], (req, res) => {
    if (!req.path.endsWith('/') && !req.path.endsWith('.html')) return res.redirect(301, '/openapi/swagger-ui/');
    res.type('html').send(SWAGGER_PAGE);
  });
  app.use('/openapi/swagger-ui', express.static(swaggerDir, { index: false }));

  // GraphiQL holds no data either: a browser asking for HTML gets it, and its files, without a token
  // (the queries it sends carry one).
  const graphql = graphqlEndpoint(catalog, deps.log);
  app.get(GRAPHQL_PATH, (req, res, next) => {
    if (wantsGraphiQL(req)) return graphql(req, res);
    next();
  });
  app.get(GRAPHIQL_FILES_ROUTE, serveGraphiQLFile);

  // DataHub's clients ask for the server's configuration before anything else, without needing a token.
  restliConfigRoutes(app);

  // Authentication first: a caller without a valid token gets 401 before any body is read.
  const api = express.Router();
  api.use(authenticate(catalog.tokens, deps.config.authEnabled));
  api.use(requestBody(deps.config));
  api
    .route(GRAPHQL_PATH)
    .get(graphql)
    .post(graphql);
  entityRoutes(api, catalog.entities, catalog.search, 'v2');
  entityRoutes(api, catalog.entities, catalog.search, 'v3');
  api.use(tokenRoutes(catalog.tokens));
  api.use(taskRoutes(catalog.tasks));
  api.use(searchDeliveryRoutes(catalog.searchDelivery));
  operationsRoutes(api, catalog.timeseries, deps.log);
  timeseriesRoutes(api, catalog.timeseries);
  timelineRoutes(api, catalog.timeline);
  restliRoutes(api, catalog.entities, catalog.timeseries, catalog.search, deps.log);
  app.use(api);
  app.use(restliUnsupported);

  app.use((req) => {
    throw new SvcError('NOT_FOUND', `No route for ${req.method} ${req.path}: see /openapi/v3/api-docs for the API`);
  });
  app.use(errorHandler(deps.log));
  return app;
}

/**
 * The HTTP server of an Express app, whose requests and responses are created with the app's own
 * prototypes. Express otherwise re-parents each request and response as it enters
 * (`Object.setPrototypeOf`), which de-optimises every later access to them, in Node's HTTP code as in
 * Express': a minimal one-route app measured ~120 µs of CPU per request that way and ~40 µs this way.
 * Express' own `setPrototypeOf` call then finds the prototype already in place and changes nothing.
 */
export function createHttpServer(app: Express, requestTimeoutMs: number): Server {
  type Ctor = (this: unknown, ...args: unknown[]) => void;
  function SvcRequest(this: unknown, ...args: unknown[]) {
    (IncomingMessage as unknown as Ctor).apply(this, args);
  }
  SvcRequest.prototype = app.request;
  function SvcResponse(this: unknown, ...args: unknown[]) {
    (ServerResponse as unknown as Ctor).apply(this, args);
  }
  SvcResponse.prototype = app.response;
  const server = createServer(
    {
      IncomingMessage: SvcRequest as unknown as typeof IncomingMessage,
      ServerResponse: SvcResponse as unknown as typeof ServerResponse,
      // A stalled or slow request (headers or body) is cut off after requestTimeoutMs, checked every
      // second (Node's default check is every 30 s).
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs),
    },
    app,
  );
  server.on('clientError', clientErrorHandler(requestTimeoutMs));
  return server;
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Express } from 'express';
import type { Catalog } from '../../catalog.ts';
import { loadConfig } from '../../config.ts';
import type { Logger } from '../../shared/log.ts';
import { createApp } from '../app.ts';
import { GRAPHQL_PATH } from '../graphql/endpoint.ts';
import { GRAPHIQL_FILES_ROUTE } from '../graphql/graphiql.ts';
import { ROUTE_TABLES, openapiDocument } from './openapiDocument.ts';

/** Routes the app serves that the document leaves out, and why. */
const UNDOCUMENTED: Record<string, string> = {
  'get /openapi/v3/api-docs': 'the document itself',
  'get /openapi/swagger-ui': 'the page showing the document',
  'get /openapi/swagger-ui/': 'the page showing the document',
  'get /openapi/swagger-ui/index.html': 'the page showing the document',
  [`get ${GRAPHQL_PATH}`]: 'GraphQL, which its own schema describes',
  [`post ${GRAPHQL_PATH}`]: 'GraphQL, which its own schema describes',
  [`get ${GRAPHIQL_FILES_ROUTE}`]: "GraphiQL's files",
};

interface Served {
  method: string;
  /** Express' form: `/api/tokens/:id`. */
  path: string;
  /** Served before authentication (on the app itself, not in the API router). */
  open: boolean;
  /** Whether this route serves a path of the document (`/openapi/v3/entity/:entityName/:urn` serves `/openapi/v3/entity/dataset/{urn}`). */
  serves(documented: string): boolean;
}

/** Express 5's router internals, as far as the walk below reads them. */
interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  /** A router mounted at `/`. */
  slash?: boolean;
}

/** The routes `app` serves, from its router and the routers mounted in it. */
function servedRoutes(app: Express): Served[] {
  const out: Served[] = [];
  const walk = (stack: Layer[], open: boolean) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const path of paths) {
          const pattern = new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`);
          for (const method of Object.keys(layer.route.methods)) out.push({ method, path, open, serves: (documented) => pattern.test(documented) });
        }
      } else if (layer.handle.stack) {
        // The walk reads paths as whole: a router mounted under a prefix would need it added.
        assert.ok(layer.slash, 'a router mounted under a path prefix');
        walk(layer.handle.stack, false);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, true);
  return out;
}

/** The routes of an app built without services: routes only close over theirs, and none is called here. */
const served = servedRoutes(createApp({ config: loadConfig({}), catalog: { searchOutbox: { stats: {}, onDelivered: () => undefined } } as unknown as Catalog, log: { isLevelEnabled: () => false } as unknown as Logger }));
const doc = openapiDocument() as { paths: Record<string, Record<string, { security?: unknown[] }>> };

test('every route the server serves is in the OpenAPI document, and every operation of the document is served', () => {
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method, path, op })));
  const aliases = new Set(ROUTE_TABLES.flatMap((table) => Object.values(table).flatMap((op) => (op.aliases ?? []).map((a) => `${op.method} ${a}`))));

  const undescribed = served.filter((r) => !UNDOCUMENTED[`${r.method} ${r.path}`] && !aliases.has(`${r.method} ${r.path}`) && !operations.some((o) => o.method === r.method && r.serves(o.path)));
  assert.deepEqual(undescribed, [], 'served without an operation in the document: declare it in its module\'s table of operations');

  const unserved = operations.filter((o) => !served.some((r) => r.method === o.method && r.serves(o.path))).map((o) => `${o.method} ${o.path}`);
  assert.deepEqual(unserved, [], 'in the document but not served');

  // And every route the document leaves out is one the app serves (a stale entry would hide nothing).
  const stale = [...Object.keys(UNDOCUMENTED), ...aliases].filter((key) => !served.some((r) => `${r.method} ${r.path}` === key));
  assert.deepEqual(stale, []);
});

test('the operations the document says need no token are the ones served before authentication', () => {
  const documented = served.filter((r) => !UNDOCUMENTED[`${r.method} ${r.path}`]);
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const route = documented.find((r) => r.method === method && r.serves(path));
      assert.ok(route, `${method} ${path} is served`);
      assert.equal(Array.isArray(op.security) && op.security.length === 0, route.open, `${method} ${path}: security ${JSON.stringify(op.security)}, served ${route.open ? 'without' : 'with'} a token`);
    }
  }
});

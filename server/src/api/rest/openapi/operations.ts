/**
 * Routes and what the OpenAPI document says of them, declared together: a route module holds a table of
 * its operations (each one's method, path, summary, parameters, body and answers, keyed by its
 * operationId), serves the table with a handler for each, and the document's paths are assembled from
 * the tables (openapiDocument.ts). A route served outside a table, or a table the document leaves out,
 * is caught by openapiDocument.test.ts.
 */
import type { RequestHandler, Router } from 'express';
import type { Obj } from './parts.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';

/**
 * One operation: where it is served (`path` in OpenAPI's form, `/api/tokens/{id}`; `aliases`, other
 * paths serving it that the document does not list), then its fields in the document, in their order
 * there (the operationId is its key in the table).
 */
export interface Operation {
  method: Method;
  path: string;
  aliases?: readonly string[];
  tags: string[];
  summary: string;
  description?: string;
  /** `[]` for an operation served without a token. */
  security?: [];
  parameters?: Obj[];
  requestBody?: Obj;
  responses: Obj;
}

/** A route module's operations, keyed by operationId (declared `satisfies Operations`, so that the keys stay known). */
export type Operations = Readonly<Record<string, Operation>>;

/** An OpenAPI path as Express matches it: `/api/tokens/{id}` is `/api/tokens/:id`. */
export const expressPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * Serves the operations of `table` on `router`, each by its handler: the type checker asks for a
 * handler for every operation and takes none for another. Methods of one path share one route, so a
 * path is matched once. Answers `router`.
 */
export function serve<T extends Operations>(router: Router, table: T, handlers: { [K in keyof T]: RequestHandler }): Router {
  const routes = new Map<string, ReturnType<Router['route']>>();
  for (const [id, op] of Object.entries(table)) {
    for (const path of [op.path, ...(op.aliases ?? [])]) {
      let route = routes.get(path);
      if (!route) routes.set(path, (route = router.route(expressPath(path))));
      route[op.method](handlers[id]!);
    }
  }
  return router;
}

/** The document's `paths` from tables: `{path: {method: {tags, operationId, …}}}`, in the tables' order. */
export function documentPaths(tables: readonly Operations[]): Record<string, Obj> {
  const paths: Record<string, Obj> = {};
  for (const table of tables) {
    for (const [operationId, op] of Object.entries(table)) {
      const { method, path, aliases: _served, tags, ...fields } = op;
      (paths[path] ??= {})[method] = { tags, operationId, ...fields };
    }
  }
  return paths;
}

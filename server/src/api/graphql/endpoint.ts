/**
 * `/api/graphql` as the HTTP app mounts it, without GraphQL's libraries: the path, how a browser's
 * request for GraphiQL is told apart from a query, and the handler, built by the first request that
 * needs it. graphql-yoga, graphql-jit, graphql-armor and the schema cost about 1 s of CPU and 25 MB to
 * load: a server that is only called over REST never loads them, and the start does not wait for them.
 */
import type { Request, Response } from 'express';
import type { Catalog } from '../../catalog.ts';
import type { Logger } from '../../shared/log.ts';

export const GRAPHQL_PATH = '/api/graphql';

/** Whether a GET asks for GraphiQL (a browser asking for HTML) rather than for a query's answer. */
export function wantsGraphiQL(req: Pick<Request, 'accepts'>): boolean {
  return req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
}

/** Serves a GraphQL request (graphqlHandler.ts), loading GraphQL's machinery on the first one. */
export function graphqlEndpoint(catalog: Catalog, log: Logger): (req: Request, res: Response) => Promise<void> {
  let serve: Promise<(req: Request, res: Response) => Promise<void>> | undefined;
  return async (req, res) => {
    serve ??= import('./graphqlHandler.ts').then(
      (m) => m.createGraphQLHandler(catalog, log).serve,
      (err: unknown) => {
        // Not kept: the next request tries again (and fails the same way if the install is broken).
        serve = undefined;
        throw err;
      },
    );
    return (await serve)(req, res);
  };
}

/**
 * `/api/graphql` (graphql-yoga): the schema of schema.graphql, resolvers that are thin adapters over
 * the catalog's services, the caller's principal from the API's bearer-token authentication, and
 * limits on what one document may ask (depth, aliases, tokens, cost) so that no query reads the whole
 * catalog at once (a page is at most 1000 entities).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSchema, createYoga } from 'graphql-yoga';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { Request, Response } from 'express';
import type { Catalog } from '../../catalog.ts';
import type { Logger } from '../../log.ts';
import { principalOf } from '../auth.ts';
import { createContext } from './context.ts';
import { directParams, serveDirect } from './directPost.ts';
import { maskError, useExtensionsObject } from './errorMasking.ts';
import { entityResolvers } from './resolvers/entityResolvers.ts';
import { propertyResolvers } from './resolvers/propertyResolvers.ts';
import { searchResolvers } from './resolvers/searchResolvers.ts';
import { useStringFilterFlags } from './stringFlags.ts';

export const GRAPHQL_PATH = '/api/graphql';

/** Limits of one document: DataHub's deepest common query (search → entity → properties → definition → types → info) is depth 9. */
export const GRAPHQL_LIMITS = { depth: 12, aliases: 30, tokens: 5000, cost: 5000 };

export const typeDefs = readFileSync(join(import.meta.dirname, 'schema.graphql'), 'utf8');

export interface GraphQLHandler {
  /** Yoga, which serves every GraphQL request but the plain JSON POST (see directPost.ts). */
  yoga: ReturnType<typeof createYoga<{ req: Request; res: Response }>>;
  /** Serves a GraphQL request: a plain JSON POST directly, any other through yoga. */
  serve(req: Request, res: Response): Promise<void>;
}

export function createGraphQLHandler(catalog: Catalog, log: Logger): GraphQLHandler {
  const schema = createSchema<{ req: Request; res: Response }>({
    typeDefs,
    resolvers: [entityResolvers, propertyResolvers, searchResolvers] as never,
  });
  const yoga = createYoga<{ req: Request; res: Response }>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    graphiql: { title: 'svc GraphQL' },
    batching: false,
    // Yoga reports every error it returns; the faults among them are logged once by maskError.
    logging: { debug: (...a) => log.debug({ args: a }, 'graphql'), info: (...a) => log.debug({ args: a }, 'graphql'), warn: (...a) => log.warn({ args: a }, 'graphql'), error: (...a) => log.debug({ args: a }, 'graphql') },
    maskedErrors: { maskError: maskError(log) },
    context: ({ req }) => createContext(catalog, principalOf(req)),
    plugins: [
      maxDepthPlugin({ n: GRAPHQL_LIMITS.depth, ignoreIntrospection: true }),
      maxAliasesPlugin({ n: GRAPHQL_LIMITS.aliases }),
      maxTokensPlugin({ n: GRAPHQL_LIMITS.tokens }),
      costLimitPlugin({ maxCost: GRAPHQL_LIMITS.cost, ignoreIntrospection: true }),
      useExtensionsObject(),
      useStringFilterFlags(),
      useGraphQlJit(),
    ],
  });
  return {
    yoga,
    async serve(req, res) {
      const params = directParams(req);
      if (params) return serveDirect(yoga, params, req, res);
      await yoga.requestListener(req, res);
    },
  };
}

/**
 * `/api/graphql` (graphql-yoga): the schema of schema.graphql, resolvers that are thin adapters over
 * the catalog's services, the caller's principal from the API's bearer-token authentication, and
 * limits on what one document may ask (length, nesting, depth, aliases, tokens, cost: see limits.ts)
 * so that no query reads the whole catalog at once (a page is at most 1000 entities) or overflows the
 * stack.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GraphQLError, type ValidationContext } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { Request, Response } from 'express';
import type { Catalog } from '../../catalog.ts';
import { SvcError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { principalOf } from '../auth.ts';
import { createContext } from './context.ts';
import { ENTITY_TYPE_DEFS } from './entityTypes.ts';
import { COMMON_FIELD_DEFS, otherTypeFields } from './resolvers/commonAspects.ts';
import { modelAspectFields } from './resolvers/modelAspects.ts';
import { directParams, serveDirect } from './directPost.ts';
import { GRAPHQL_PATH, wantsGraphiQL } from './endpoint.ts';
import { renderGraphiQL } from './graphiql.ts';
import { useDocumentShape } from './documentShape.ts';
import { isIntrospection, useIntrospectionDepth } from './introspection.ts';
import { GRAPHQL_LIMITS } from './limits.ts';
import { useInputLiteralRules } from './inputLiterals.ts';
import { useVariableValues } from './variableValues.ts';
import { useVariablesShape } from './variablesShape.ts';
import { maskError, useExtensionsObject, useReadableValidationAbort } from './errorMasking.ts';
import { entityResolvers } from './resolvers/entityResolvers.ts';
import { propertyResolvers } from './resolvers/propertyResolvers.ts';
import { searchResolvers } from './resolvers/searchResolvers.ts';
import { tokenResolvers } from './resolvers/tokenResolvers.ts';
import { useStringFilterFlags } from './stringFlags.ts';
import { useValidationCache } from './validationCache.ts';

/**
 * A limit exceeded is reported as a validation error (code GRAPHQL_VALIDATION_FAILED), as any query
 * that GraphQL refuses before running it: graphql-armor would throw it, prefixed "Syntax Error: ",
 * and yoga would pass it on without a code.
 */
const asValidationError = {
  propagateOnRejection: false,
  onReject: [(ctx: ValidationContext | null, err: GraphQLError) => ctx?.reportError(new GraphQLError(err.message.replace(/^Syntax Error: /, '')))],
};

const sdl = (file: string) => readFileSync(join(import.meta.dirname, file), 'utf8');

/** svc's schema; the other entity types of DataHub's model and their fields come after the types they extend. */
export const typeDefs = sdl('schema.graphql') + ENTITY_TYPE_DEFS + COMMON_FIELD_DEFS + sdl('modelFields.graphql');

const REQUEST_FORM = '{"query": "…", "variables": {…}}';

/**
 * What is wrong with the parsed body of a GraphQL POST that yoga would answer badly: nothing (a bare
 * 415), JSON that is not an object or an empty one (yoga reads those as "invalid JSON"), or an
 * `operationName` that is not a string (yoga would look for an operation of that name: "Could not
 * determine what operation to execute", as if it were only absent from the document). A batch or an
 * object with other parameters goes to yoga, which names what is wrong with them.
 */
export function postBodyProblem(body: unknown): string | undefined {
  if (body === undefined) return `A GraphQL request needs a body: ${REQUEST_FORM}, sent with Content-Type application/json`;
  if (typeof body !== 'object' || body === null) return `A GraphQL request is a JSON object, ${REQUEST_FORM}; got ${body === null ? 'null' : `a ${typeof body}`}`;
  if (Array.isArray(body)) return undefined;
  // Yoga would answer 200 with "Must provide query string." and a code of its own.
  if ((body as { query?: unknown }).query == null) return `A GraphQL request needs a query: ${REQUEST_FORM}`;
  const { operationName } = body as { operationName?: unknown };
  if (operationName != null && typeof operationName !== 'string') return `Expected "operationName" param to be a string, but given ${Array.isArray(operationName) ? 'array' : typeof operationName}.`;
  return undefined;
}

/**
 * What is wrong with the parameters of a GraphQL GET that yoga would answer badly: no query (200 with
 * a code of its own), a parameter given twice (yoga reads the first, and an operation name looked up
 * as another), JSON parameters (`variables`, `extensions`) that do not parse, which yoga would parse
 * without catching the error (a fault, masked as a 500); nothing otherwise. Read from the URL as yoga
 * reads them (an empty value is no value).
 */
export function getParamsProblem(url: string): string | undefined {
  const search = new URLSearchParams(url.slice(url.indexOf('?') + 1));
  for (const name of ['query', 'operationName', 'variables', 'extensions']) {
    const n = search.getAll(name).length;
    if (n > 1) return `The query parameter ${name} is given ${n} times; give it once`;
  }
  if (!search.get('query')) return 'A GraphQL GET request needs a query: ?query=…&variables=… (URL-encoded)';
  for (const name of ['variables', 'extensions']) {
    const value = search.get(name);
    if (!value) continue;
    try {
      JSON.parse(value);
    } catch (err) {
      return `The query parameter ${name} must be a JSON object: ${(err as Error).message}`;
    }
  }
  return undefined;
}

export interface GraphQLHandler {
  /** Yoga, which serves every GraphQL request but the plain JSON POST (see directPost.ts). */
  yoga: ReturnType<typeof createYoga<{ req: Request; res: Response }>>;
  /** Serves a GraphQL request: a plain JSON POST directly, any other through yoga. */
  serve(req: Request, res: Response): Promise<void>;
}

export function createGraphQLHandler(catalog: Catalog, log: Logger): GraphQLHandler {
  const schema = createSchema<{ req: Request; res: Response }>({
    typeDefs,
    resolvers: [entityResolvers, otherTypeFields, modelAspectFields, propertyResolvers, searchResolvers, tokenResolvers] as never,
  });
  const yoga = createYoga<{ req: Request; res: Response }>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    graphiql: { title: 'svc GraphQL' },
    // Its files served by svc (graphiql.ts), not loaded from a CDN.
    renderGraphiQL,
    batching: false,
    // Validation results are cached by document (see validationCache.ts); parsed documents by yoga.
    parserAndValidationCache: { validationCache: false },
    // Yoga reports every error it returns; the faults among them are logged once by maskError.
    logging: { debug: (...a) => log.debug({ args: a }, 'graphql'), info: (...a) => log.debug({ args: a }, 'graphql'), warn: (...a) => log.warn({ args: a }, 'graphql'), error: (...a) => log.debug({ args: a }, 'graphql') },
    maskedErrors: { maskError: maskError(log) },
    context: ({ req }) => createContext(catalog, principalOf(req)),
    plugins: [
      maxDepthPlugin({ n: GRAPHQL_LIMITS.depth, ignoreIntrospection: true, ...asValidationError }),
      maxAliasesPlugin({ n: GRAPHQL_LIMITS.aliases, ...asValidationError }),
      maxTokensPlugin({ n: GRAPHQL_LIMITS.tokens }),
      // After the token limit's parser, which it wraps: the text is checked before either parses it.
      useDocumentShape(),
      useIntrospectionDepth(),
      costLimitPlugin({ maxCost: GRAPHQL_LIMITS.cost, ignoreIntrospection: true, ...asValidationError }),
      useInputLiteralRules(),
      useVariableValues(),
      useExtensionsObject(),
      useValidationCache(),
      useReadableValidationAbort(),
      // Before useStringFilterFlags, which copies the variables.
      useVariablesShape(),
      useStringFilterFlags(),
      // Introspection runs on graphql-js's executor (see introspection.ts).
      useGraphQlJit({}, { enableIf: (args) => !isIntrospection(args) }),
    ],
  });
  return {
    yoga,
    async serve(req, res) {
      const problem = req.method === 'POST' ? postBodyProblem(req.body) : req.method === 'GET' && !wantsGraphiQL(req) ? getParamsProblem(req.originalUrl) : undefined;
      if (problem) throw new SvcError('BAD_REQUEST', problem);
      const params = directParams(req);
      if (params) return serveDirect(yoga, params, req, res);
      await yoga.requestListener(req, res);
    },
  };
}

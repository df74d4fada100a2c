/**
 * The common GraphQL request, a JSON POST of `{query, variables, operationName}` answered as
 * `application/json`, run by yoga's own GraphQL pipeline without its fetch-API adaptation of Node's
 * request and response.
 *
 * What runs is yoga's: `getResultForParams` (its parameter checks and the plugins' `onParams`,
 * envelop's parse and validation caches, the query limits, error masking, the compiled execution)
 * and `processRegularResult` (status, headers and the serialised body, as yoga answers
 * `application/json`; a result without errors gets what it would give, 200 and the serialised
 * result, written at once). What is left out is what the request does not need: a fetch `Response`
 * streamed back to Node, the abort signal and listeners of the request, the `onRequest` hooks
 * (health check, CORS, GraphiQL, landing page), the choice of a request parser (the body is already
 * parsed and checked, see jsonBody.ts) and of a result processor by the Accept header. That is about
 * 0.15 ms of a 2 ms search request (see docs/decisions/0024-graphql-direct-post.md).
 *
 * A request of any other form goes to yoga whole: another Accept (GraphQL over HTTP's own media type
 * changes the status codes), an `Origin` (CORS headers), a batch, parameters of the wrong type or
 * unknown ones (yoga's messages).
 */
import type { Request, Response } from 'express';
import type { ExecutionResult } from 'graphql';
import { processRegularResult, type GraphQLParams, type YogaServerInstance } from 'graphql-yoga';
import { withExtensionsObject } from './errorMasking.ts';

// The user context is `{}`, as createYoga infers it when the context factory is typed by the server context.
type Yoga = YogaServerInstance<{ req: Request; res: Response }, {}>;

/** The Accept headers (spaces removed, lower case) yoga answers with `application/json` alone. */
const JSON_ACCEPTS = new Set(['*/*', 'application/json', 'application/json;charset=utf-8']);

const PARAMS = new Set(['query', 'variables', 'operationName', 'extensions']);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** The GraphQL parameters of a request served directly; undefined when yoga serves it. */
export function directParams(req: Pick<Request, 'method' | 'headers' | 'body'>): GraphQLParams | undefined {
  if (req.method !== 'POST' || req.headers.origin !== undefined) return undefined;
  const accept = req.headers.accept;
  if (accept !== undefined && !JSON_ACCEPTS.has(accept.replace(/\s/g, '').toLowerCase())) return undefined;
  const body: unknown = req.body;
  if (!isPlainObject(body) || typeof body.query !== 'string') return undefined;
  for (const key of Object.keys(body)) if (!PARAMS.has(key)) return undefined;
  const { variables, operationName, extensions } = body;
  if (variables != null && !isPlainObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (extensions != null && !isPlainObject(extensions)) return undefined;
  return body as GraphQLParams;
}

type YogaResult = NonNullable<Awaited<ReturnType<Yoga['getResultForParams']>>>;

/**
 * A single result without errors and without `extensions.http`: yoga answers it 200 with its
 * serialisation as is (processRegularResult; jsonStringifyResultWithoutInternals changes only errors
 * and `extensions.http`).
 */
function isPlainSuccess(result: YogaResult): result is ExecutionResult & { stringify: (r: ExecutionResult) => string } {
  if (Array.isArray(result) || Symbol.asyncIterator in result) return false;
  const r = result as ExecutionResult;
  return !r.errors?.length && !(r.extensions as { http?: unknown } | undefined)?.http && typeof (r as { stringify?: unknown }).stringify === 'function';
}

/**
 * Answers a request of {@link directParams}. A throw before the operation was handed to GraphQL (an
 * `onParams` hook refusing the parameters) is answered by yoga whole, as yoga answers it; a throw
 * after that (none of svc's plugins throws there) is not, since a mutation may have run: it is a
 * fault of svc's own.
 */
export async function serveDirect(yoga: Yoga, params: GraphQLParams, req: Request, res: Response): Promise<void> {
  const request = new yoga.fetchAPI.Request(`http://${req.headers.host ?? 'localhost'}${req.originalUrl}`, {
    method: 'POST',
    headers: req.headers as Record<string, string>,
  });
  // Yoga puts the parameters in the server context as it hands them to GraphQL (handleParams).
  const context: { req: Request; res: Response; params?: unknown } = { req, res };
  let result: Awaited<ReturnType<Yoga['getResultForParams']>>;
  try {
    result = await yoga.getResultForParams({ params, request }, context);
  } catch (err) {
    if (context.params !== undefined) throw err;
    return yoga.requestListener(req, res);
  }
  if (result === undefined) throw new Error('yoga returned no result for a GraphQL request');
  withExtensionsObject(result);
  if (isPlainSuccess(result)) {
    // What processRegularResult answers for it, without a fetch Response in between.
    const text = result.stringify(result);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  const response = processRegularResult(result, yoga.fetchAPI, 'application/json');
  const body = await response.text();
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

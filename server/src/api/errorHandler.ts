/**
 * The one place where failures become HTTP responses: the status comes from the error code table;
 * bodies follow DataHub's OpenAPI forms: `{"error":"Validation Error","message":…}` for a refused
 * request, `{"error":"Invalid urn!: <urn>"}` for an unparsable URN, an empty body with a
 * `Not-Found-Reason` header for a missing entity or aspect, and `{"error":"Internal server error
 * occurred"}` (the cause only in the log) for a fault of svc's own. On the GraphQL path, the same
 * failures (a missing token, a body that is not JSON) take GraphQL's error form, and on DataHub's
 * Rest.li paths (the operations endpoint, `/aspects`, `/entities`, …) Rest.li's. Each form carries the
 * error's `reason` (contract/errors.ts), when it has one.
 */
import type { NextFunction, Request, Response } from 'express';
import { SvcError, toSvcError, type ErrorCode } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import { GRAPHQL_PATH } from './graphql/endpoint.ts';
import { graphqlErrorBody } from './graphql/errorBody.ts';
import { sendJson } from './json.ts';
import { OPERATIONS_PATHS } from './rest/operationsRoutes.ts';
import { isRestliResource, sendRestliError } from './rest/restliProtocol.ts';

/**
 * The JSON body for an error; undefined means an empty body (a missing entity or aspect, as DataHub).
 * A refusal with a {@link SvcError.reason} carries it as `reason`, beside DataHub's fields.
 */
export function errorBody(err: SvcError): Record<string, unknown> | undefined {
  const body = dataHubBody(err);
  return body && err.reason ? { ...body, reason: err.reason } : body;
}

/** DataHub's body for an error (its `error` and `message`). */
function dataHubBody(err: SvcError): Record<string, unknown> | undefined {
  switch (err.code) {
    case 'NOT_FOUND':
      // Something without a reason (no route for the path, say) tells the caller what was not found.
      return err.notFoundReason ? undefined : { error: err.title, message: err.message };
    case 'INVALID_URN':
      return { error: err.message };
    case 'FORBIDDEN':
      // DataHub's one line, `<actor> is unauthorized to <OP> entities.`, and what the operation needs.
      return err.detail ? { error: err.message, message: err.detail } : { error: err.message };
    case 'INTERNAL':
      return { error: err.title };
    default:
      return { error: err.title, message: err.message };
  }
}

const BY_STATUS: Partial<Record<number, ErrorCode>> = { 400: 'BAD_REQUEST', 408: 'REQUEST_TIMEOUT', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

/**
 * A client error raised by Express or a library it uses (an `http-errors` object: `status` 4xx and
 * `expose`), as an SvcError. svc's own guards catch these inputs first; this keeps one that slips
 * past them a 4xx.
 */
function fromHttpError(err: unknown): SvcError | undefined {
  const e = err as { status?: unknown; expose?: unknown; message?: unknown } | undefined;
  if (typeof e?.status !== 'number' || e.expose !== true || e.status < 400 || e.status > 499) return undefined;
  return new SvcError(BY_STATUS[e.status] ?? 'BAD_REQUEST', String(e.message), { cause: err });
}

export function sendError(res: Response, err: SvcError, graphql = false): void {
  if (err.notFoundReason) res.setHeader('Not-Found-Reason', err.notFoundReason);
  if (err.code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer');
  // GraphQL's clients read `errors[]` whatever went wrong, even before GraphQL ran.
  const body = graphql ? graphqlErrorBody(err) : errorBody(err);
  if (body === undefined) res.status(err.httpStatus).end();
  else sendJson(res, err.httpStatus, body);
}

export function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const svcErr = err instanceof SvcError ? err : (fromHttpError(err) ?? toSvcError(err));
    if (svcErr.code === 'INTERNAL') log.error({ err: svcErr.cause ?? svcErr, method: req.method, url: req.originalUrl }, 'request failed');
    // A dependency out of reach fails every request meanwhile: one line each, without the stack trace
    // (the outage shows in /ready and in the components' own logs).
    else if (svcErr.code === 'UNAVAILABLE') log.warn({ method: req.method, url: req.originalUrl, cause: (svcErr.cause as Error | undefined)?.message }, `request answered 503: ${svcErr.message}`);
    // A response already begun cannot change; a connection already answered (a request that timed
    // out, see clientErrors.ts) or gone takes no answer.
    if (res.headersSent || !res.socket?.writable) {
      if (res.headersSent) res.end();
      return;
    }
    // Failures before a Rest.li route ran (no token, a body that is not JSON) take Rest.li's form too.
    if (OPERATIONS_PATHS.includes(req.path) || isRestliResource(req.path)) return sendRestliError(res, svcErr);
    sendError(res, svcErr, req.path === GRAPHQL_PATH);
  };
}

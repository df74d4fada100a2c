/**
 * The one place where failures become HTTP responses: the status comes from the error code table;
 * bodies follow DataHub's OpenAPI forms (see DECISIONS.md, Wire behaviour).
 */
import type { NextFunction, Request, Response } from 'express';
import { SvcError, toSvcError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { sendJson } from './json.ts';

/** The JSON body for an error; undefined means an empty body (a missing entity or aspect, as DataHub). */
export function errorBody(err: SvcError): Record<string, unknown> | undefined {
  switch (err.code) {
    case 'NOT_FOUND':
      // Something without a reason (no route for the path, say) tells the caller what was not found.
      return err.notFoundReason ? undefined : { error: err.title, message: err.message };
    case 'INVALID_URN':
    case 'FORBIDDEN':
      // DataHub's forms: {"error":"Invalid urn!: <urn>"}, {"error":"<actor> is unauthorized to <OP> entities."}
      return { error: err.message };
    case 'INTERNAL':
      return { error: err.title };
    default:
      return { error: err.title, message: err.message };
  }
}

/** Body-parser failures are caller mistakes: malformed JSON and oversized bodies. */
function fromBodyParser(err: unknown): SvcError | undefined {
  const e = err as { type?: string; limit?: number; message?: string } | undefined;
  if (e?.type === 'entity.parse.failed') return new SvcError('BAD_REQUEST', `Malformed JSON in the request body: ${e.message}`, { cause: err });
  if (e?.type === 'entity.too.large') {
    return new SvcError('PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${e.limit} bytes`, { cause: err });
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') return new SvcError('UNSUPPORTED_MEDIA_TYPE', String(e.message));
  return undefined;
}

export function sendError(res: Response, err: SvcError): void {
  if (err.notFoundReason) res.setHeader('Not-Found-Reason', err.notFoundReason);
  if (err.code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer');
  const body = errorBody(err);
  if (body === undefined) res.status(err.httpStatus).end();
  else sendJson(res, err.httpStatus, body);
}

export function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const svcErr = fromBodyParser(err) ?? toSvcError(err);
    if (svcErr.code === 'INTERNAL' || svcErr.code === 'UNAVAILABLE') {
      log.error({ err: svcErr.cause ?? svcErr, method: req.method, url: req.originalUrl }, 'request failed');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    sendError(res, svcErr);
  };
}

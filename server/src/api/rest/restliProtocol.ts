/**
 * The Rest.li protocol as DataHub's clients speak it: list parameters, error responses
 * (`{"message", "status"}`, `X-RestLi-Error-Response: true`), which paths are Rest.li resources, the
 * calls svc does not serve, and `GET /config`.
 */
import type { Request, Response, Router } from 'express';
import { SvcError, toSvcError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { quoted } from '../pathGuard.ts';
import { sendJson } from '../json.ts';
import { serve, type Operations } from './openapi/operations.ts';
import { json, ref } from './openapi/parts.ts';

/** The DataHub version `/config` reports: the line whose Rest.li API svc serves (1.x clients switch to OpenAPI writes from 1.0.1). */
export const RESTLI_VERSION = 'v0.14.1';

/**
 * A Rest.li list parameter read from the raw query string, where its items are still percent-encoded
 * (a comma inside a URN is `%2C`): `name=List(a,b)` (protocol 2.0) or the parameter repeated (protocol
 * 1.0); undefined when absent.
 */
export function restliList(req: Request, name: string): string[] | undefined {
  const at = req.originalUrl.indexOf('?');
  let out: string[] | undefined;
  for (const pair of at < 0 ? [] : req.originalUrl.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || decoded(pair.slice(0, eq), name) !== name) continue;
    const value = pair.slice(eq + 1);
    const list = /^List(?:\(|%28)(.*)(?:\)|%29)$/i.exec(value);
    const items = list ? list[1]!.split(',').filter((x) => x !== '') : [value];
    out = [...(out ?? []), ...items.map((x) => decoded(x, name))];
  }
  return out;
}

function decoded(text: string, name: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw SvcError.validation([`query parameter ${name}: ${quoted(text)} is not valid percent-encoding (expected %XX for each reserved character)`]);
  }
}

/** A Rest.li error response: `{"message", "status"}` (and svc's `reason`, when the error has one) and the header `X-RestLi-Error-Response: true`. */
export function sendRestliError(res: Response, err: SvcError): void {
  res.setHeader('X-RestLi-Error-Response', 'true');
  if (err.code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer');
  sendJson(res, err.httpStatus, { message: err.code === 'INTERNAL' ? err.title : err.message, status: err.httpStatus, ...(err.reason ? { reason: err.reason } : {}) });
}

/** A route answering failures as Rest.li does; faults (and an unreachable database) are logged as `what`. */
export function restliHandler(log: Logger, what: string, handler: (req: Request, res: Response) => Promise<unknown>) {
  return async (req: Request, res: Response): Promise<void> => {
    try {
      await handler(req, res);
    } catch (err) {
      const svc = toSvcError(err);
      if (svc.code === 'INTERNAL' || svc.code === 'UNAVAILABLE') log.error({ err: svc.cause ?? svc, url: req.originalUrl }, what);
      sendRestliError(res, svc);
    }
  };
}

/** Rest.li resources of DataHub (those svc serves, and those it does not, or not with that method or action). */
const RESTLI_RESOURCES = /^\/(entitiesV2|entities|aspects|relationships|runs|platform|usageStats|analytics|batchIngestion|entitiesVersionedV2|timeline)(\/|$)/;

/** Whether a path is a Rest.li resource, whose failures take Rest.li's form (see errorHandler.ts). */
export const isRestliResource = (path: string): boolean => RESTLI_RESOURCES.test(path);

/**
 * The Rest.li calls svc does not serve: a 404 in Rest.li's shape naming the call and what is served,
 * instead of a generic miss, so that a DataHub client says which of its calls svc lacks.
 */
export function restliUnsupported(req: Request, res: Response, next: () => void): void {
  if (!RESTLI_RESOURCES.test(req.path)) return next();
  const action = typeof req.query.action === 'string' ? `?action=${req.query.action}` : '';
  sendRestliError(
    res,
    SvcError.notFound(
      `svc does not serve the Rest.li call ${req.method} ${req.path.split('/').slice(0, 2).join('/')}${action}; it serves GET /config, GET /aspects/<urn>?aspect=<name>, GET /entitiesV2/<urn>, GET /entitiesV2?ids=List(…), POST /aspects?action=ingestProposal|ingestProposalBatch|getTimeseriesAspectValues and POST /entities?action=delete|deleteReferences|search`,
    ),
  );
}

/** `GET /config` and its OpenAPI operation: what DataHub's clients check before anything else (served without a token, as DataHub does). */
export const RESTLI_CONFIG_API = {
  restliConfig: {
    method: 'get',
    path: '/config',
    tags: ['datahub-restli'],
    summary: 'The server configuration DataHub clients read first (no token needed): noCode, and the DataHub version whose Rest.li API svc serves',
    security: [],
    responses: { '200': { description: '`{"noCode": "true", "versions": {"acryldata/datahub": {"version": "v0.14.1", …}}, …}`', content: json(ref('RestliConfig')) } },
  },
} satisfies Operations;

function restliConfig(_req: Request, res: Response): void {
  sendJson(res, 200, {
    noCode: 'true',
    versions: { 'acryldata/datahub': { version: RESTLI_VERSION, commit: 'svc' } },
    datahub: { serverType: 'prod', serverEnv: 'core' },
    patchCapable: true,
    statefulIngestionCapable: true,
    supportsImpactAnalysis: false,
    retention: 'false',
    telemetry: { enabledCli: false, enabledIngestion: false },
    timeZone: 'GMT',
    models: {},
    managedIngestion: { enabled: false },
  });
}

/** Serves {@link RESTLI_CONFIG_API} on `router` (the app itself, before authentication). */
export function restliConfigRoutes(router: Router): void {
  serve(router, RESTLI_CONFIG_API, { restliConfig });
}

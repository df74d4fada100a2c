/**
 * Which body limit a request is held to: DataHub's ingestion calls (`POST /aspects?action=ingestProposal`
 * and `ingestProposalBatch`) take SVC_MAX_INGEST_BODY_BYTES, as large as DataHub's own limit, since its
 * clients fill a batch up to 15 MiB; every other body SVC_MAX_BODY_BYTES. A body that large is read
 * only for a caller who may write: a reader is refused before it is read.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config.ts';
import { authorize } from '../auth/authorize.ts';
import { toSvcError } from '../shared/errors.ts';
import { principalOf } from './auth.ts';
import { jsonBody, refusedUnread } from './jsonBody.ts';

const INGEST_ACTIONS = new Set(['ingestProposal', 'ingestProposalBatch']);

/** Whether a request is one of DataHub's ingestion calls. */
export function isIngestCall(req: Request): boolean {
  return req.method === 'POST' && req.path === '/aspects' && typeof req.query.action === 'string' && INGEST_ACTIONS.has(req.query.action);
}

export function requestBody(config: Pick<Config, 'maxBodyBytes' | 'maxIngestBodyBytes'>) {
  const body = jsonBody(config.maxBodyBytes);
  const ingestBody = jsonBody(config.maxIngestBodyBytes, 'SVC_MAX_INGEST_BODY_BYTES');
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!isIngestCall(req)) return body(req, res, next);
    try {
      authorize(principalOf(req), 'UPDATE');
    } catch (err) {
      throw refusedUnread(req, res, toSvcError(err));
    }
    ingestBody(req, res, next);
  };
}

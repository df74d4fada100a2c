/**
 * Reads the JSON body of an API request, where every body enters svc: the Content-Type must say JSON
 * (415 otherwise), the size must be within the limit (413 at once when the declared length is over
 * it, without waiting for the body), it must be uncompressed (415) and UTF-8 (400), the text must
 * parse (400), and what it holds must pass
 * {@link jsonProblems} (400). A request without a body goes on with `req.body` undefined.
 */
import type { NextFunction, Request, Response } from 'express';
import contentType from 'content-type';
import getRawBody from 'raw-body';
import { SvcError } from '../shared/errors.ts';
import { jsonProblems } from './inputRules.ts';
import { lingerOnClose } from './lingeringClose.ts';

/** Bodies are UTF-8: a byte sequence that is not is refused, not replaced by U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** JSON Patch routes take their own media type and plain JSON (DataHub's clients send either). */
const PATCH_TYPES = ['application/json-patch+json', 'application/json'];
const JSON_TYPES = ['application/json'];

/**
 * Answers `err` before the body is read: the rest of the body is read and dropped before the
 * connection closes (a client still sending would otherwise see a reset instead of the answer).
 */
export function refusedUnread(req: Request, res: Response, err: SvcError): SvcError {
  res.setHeader('Connection', 'close');
  lingerOnClose(req);
  return err;
}

function tooLarge(req: Request, res: Response, limit: number, setting: string): SvcError {
  return refusedUnread(req, res, new SvcError('PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${limit} bytes (${setting})`));
}

/** The media type and charset of a request, or undefined when the header is absent or malformed. */
function mediaType(req: Request): { type: string; charset: string | undefined } | undefined {
  if (!req.headers['content-type']) return undefined;
  try {
    const parsed = contentType.parse(req.headers['content-type']);
    return { type: parsed.type, charset: parsed.parameters.charset };
  } catch {
    return undefined;
  }
}

/** The body reader of requests up to `limit` bytes; `setting` names the limit in a 413. */
export function jsonBody(limit: number, setting = 'SVC_MAX_BODY_BYTES') {
  return (req: Request, res: Response, next: NextFunction): void => {
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return next();
    const accepted = req.method === 'PATCH' ? PATCH_TYPES : JSON_TYPES;
    const media = mediaType(req);
    if (!media || !accepted.includes(media.type)) {
      const got = req.headers['content-type'] ? `"${req.headers['content-type'].slice(0, 100)}"` : 'none';
      throw new SvcError('UNSUPPORTED_MEDIA_TYPE', `The request body must be sent with Content-Type ${accepted.join(' or ')}; got ${got}`);
    }
    if (media.charset !== undefined && !/^utf-?8$/i.test(media.charset)) {
      throw new SvcError('UNSUPPORTED_MEDIA_TYPE', `The request body must be UTF-8; got charset "${media.charset.slice(0, 40)}"`);
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      throw new SvcError('UNSUPPORTED_MEDIA_TYPE', `The request body must be sent uncompressed; got Content-Encoding "${encoding.slice(0, 40)}"`);
    }
    if (length !== undefined && Number(length) > limit) throw tooLarge(req, res, limit, setting);
    const readBody = (err: (Error & { type?: string }) | null, bytes: Buffer): void => {
      if (err) {
        if (err.type === 'entity.too.large') return next(tooLarge(req, res, limit, setting));
        return next(new SvcError('BAD_REQUEST', `The request body could not be read: ${err.message}`, { cause: err }));
      }
      let raw: string;
      try {
        raw = UTF8.decode(bytes);
      } catch (decodeErr) {
        return next(new SvcError('BAD_REQUEST', 'The request body is not valid UTF-8', { cause: decodeErr }));
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch (parseErr) {
        return next(new SvcError('BAD_REQUEST', `Malformed JSON in the request body: ${(parseErr as Error).message}`, { cause: parseErr }));
      }
      const problems = jsonProblems(body, raw);
      if (problems.length > 0) return next(SvcError.validation(problems));
      req.body = body;
      next();
    };
    // The callback runs outside Express' promise chain: whatever it throws would end the process, so
    // every failure of reading, decoding or checking the body is passed on as the request's error.
    getRawBody(req, { length, limit }, (err, bytes) => {
      try {
        readBody(err, bytes);
      } catch (fault) {
        next(fault);
      }
    });
  };
}

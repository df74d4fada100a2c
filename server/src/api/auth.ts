/**
 * Bearer-token authentication of API requests: the principal a request acts as is put on
 * `req.principal`, for the catalog's services to authorize. `/health`, `/ready`, `/metrics` and the
 * API documentation are mounted outside it.
 */
import type { NextFunction, Request, Response } from 'express';
import { SvcError } from '../shared/errors.ts';
import type { Principal } from '../auth/authorize.ts';
import type { TokenService } from '../auth/tokens.ts';

const ANONYMOUS: Principal = { actor: 'urn:li:corpuser:anonymous', role: 'admin', tokenId: 'none' };

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/**
 * Authenticates every request (when enabled). A token known without the database (the root token, a
 * recently verified one) is settled synchronously: this runs on every API request.
 */
export function authenticate(tokens: TokenService, enabled: boolean) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!enabled) {
      req.principal = ANONYMOUS;
      return next();
    }
    const header = req.headers.authorization;
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    if (!match) {
      throw new SvcError('UNAUTHORIZED', header ? 'The Authorization header must be "Bearer <token>"' : 'Missing Authorization header: send "Authorization: Bearer <token>"');
    }
    const known = tokens.known(match[1]!);
    if (known) {
      req.principal = known;
      return next();
    }
    tokens.authenticate(match[1]!).then((principal) => {
      req.principal = principal;
      next();
    }, next);
  };
}

/** The principal of an authenticated request. */
export function principalOf(req: Request): Principal {
  return req.principal!;
}

/**
 * Bearer-token authentication and role checks for API routes. `/health`, `/ready`, `/metrics` and the
 * API documentation are mounted outside it.
 */
import type { NextFunction, Request, Response } from 'express';
import { SvcError } from '../errors.ts';
import { allows, type Principal, type Role, type TokenService } from '../auth/tokens.ts';

const ANONYMOUS: Principal = { actor: 'urn:li:corpuser:anonymous', role: 'admin', tokenId: 'none' };

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/**
 * Authenticates every request (when enabled); the principal is put on `req.principal`. A token known
 * without the database (the root token, a recently verified one) is settled synchronously: this runs
 * on every API request.
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

/**
 * Fails with FORBIDDEN unless the request's principal has at least `need`. `operation` is DataHub's
 * word for entity operations (`UPDATE`, `DELETE`), or a phrase of its own (`manage tokens`).
 */
export function requireRole(req: Request, need: Role, operation: string): void {
  const p = req.principal!;
  if (!allows(p.role, need)) {
    const line = /^[A-Z_]+$/.test(operation) ? `${p.actor} is unauthorized to ${operation} entities.` : `${p.actor} is unauthorized to ${operation}.`;
    throw SvcError.forbidden(line, `This needs a token with the ${need} role; the token used has the ${p.role} role`);
  }
}

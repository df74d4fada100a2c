/** Token management (admin only): `POST /api/tokens`, `GET /api/tokens`, `DELETE /api/tokens/:id`. */
import { Router } from 'express';
import type { TokenService } from '../../auth/tokens.ts';
import { principalOf } from '../auth.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';

/** Token routes take no query parameter: an unknown one is refused, as on every route. */
export const TOKEN_QUERIES = queryParams({});

export function tokenRoutes(tokens: TokenService): Router {
  const router = Router();
  router.post('/api/tokens', async (req, res) => {
    TOKEN_QUERIES.parse(req);
    sendJson(res, 201, await tokens.create(principalOf(req), req.body));
  });
  router.get('/api/tokens', async (req, res) => {
    TOKEN_QUERIES.parse(req);
    sendJson(res, 200, { tokens: await tokens.list(principalOf(req)) });
  });
  router.delete('/api/tokens/:id', async (req, res) => {
    TOKEN_QUERIES.parse(req);
    sendJson(res, 200, await tokens.revoke(principalOf(req), req.params.id));
  });
  return router;
}

/** Token management (admin only): `POST /api/tokens`, `GET /api/tokens`, `DELETE /api/tokens/:id`. */
import { Router } from 'express';
import type { TokenService } from '../../auth/tokens.ts';
import { requireRole } from '../auth.ts';
import { sendJson } from '../json.ts';

export function tokenRoutes(tokens: TokenService): Router {
  const router = Router();
  router.use('/api/tokens', (req, _res, next) => {
    requireRole(req, 'admin', 'manage tokens');
    next();
  });
  router.post('/api/tokens', async (req, res) => {
    sendJson(res, 201, await tokens.create(req.body, req.principal!));
  });
  router.get('/api/tokens', async (_req, res) => {
    sendJson(res, 200, { tokens: await tokens.list() });
  });
  router.delete('/api/tokens/:id', async (req, res) => {
    sendJson(res, 200, await tokens.revoke(req.params.id));
  });
  return router;
}

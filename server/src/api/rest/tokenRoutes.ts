/** Token management (admin only): `POST /api/tokens`, `GET /api/tokens`, `DELETE /api/tokens/:id`. */
import { Router } from 'express';
import type { TokenService } from '../../auth/tokens.ts';
import { principalOf } from '../auth.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';
import { serve, type Operations } from './openapi/operations.ts';
import { errors, bodyErrors, json, param, ref } from './openapi/parts.ts';

/** Token routes take no query parameter: an unknown one is refused, as on every route. */
export const TOKEN_QUERIES = queryParams({});

const admin = 'Needs a token with the admin role.';

/** The token routes and their OpenAPI operations. */
export const TOKEN_API = {
  createToken: {
    method: 'post',
    path: '/api/tokens',
    tags: ['tokens'],
    summary: 'Create a token (admin); its secret is in the answer only',
    description: admin,
    requestBody: { required: true, content: json(ref('TokenRequest')) },
    responses: {
      '201': { description: 'The token, with its secret `token`', content: json({ allOf: [ref('TokenInfo'), { type: 'object', properties: { token: { type: 'string' } } }] }) },
      ...errors,
      ...bodyErrors,
    },
  },
  listTokens: {
    method: 'get',
    path: '/api/tokens',
    tags: ['tokens'],
    summary: 'List tokens, without their secrets (admin)',
    description: admin,
    responses: { '200': { description: 'Every token', content: json({ type: 'object', properties: { tokens: { type: 'array', items: ref('TokenInfo') } } }) }, ...errors },
  },
  revokeToken: {
    method: 'delete',
    path: '/api/tokens/{id}',
    tags: ['tokens'],
    summary: 'Revoke a token (admin)',
    description: admin,
    parameters: [param('id', 'path', { type: 'string' }, 'The token id')],
    responses: { '200': { description: 'The revoked token', content: json(ref('TokenInfo')) }, '404': { description: 'No such token', content: json(ref('Error')) }, ...errors },
  },
} satisfies Operations;

export function tokenRoutes(tokens: TokenService): Router {
  return serve(Router(), TOKEN_API, {
    createToken: async (req, res) => {
      TOKEN_QUERIES.parse(req);
      sendJson(res, 201, await tokens.create(principalOf(req), req.body));
    },
    listTokens: async (req, res) => {
      TOKEN_QUERIES.parse(req);
      sendJson(res, 200, { tokens: await tokens.list(principalOf(req)) });
    },
    revokeToken: async (req, res) => {
      TOKEN_QUERIES.parse(req);
      sendJson(res, 200, await tokens.revoke(principalOf(req), String(req.params.id)));
    },
  });
}

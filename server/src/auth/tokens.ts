/**
 * API tokens: the root token (from `SVC_ADMIN_TOKEN`, or generated once and saved under
 * `SVC_DATA_DIR`) and tokens an admin creates, stored as SHA-256 hashes with a role and, optionally,
 * a time they expire at (refused from then on, until revoked: DataHub's `datahub-gc` revokes them).
 */
import { hash as digest, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SvcError } from '../shared/errors.ts';
import { compileSchema } from '../shared/validation.ts';
import { dbError, type Pool } from '../db/pool.ts';
import { authorize, ROLES, type Principal, type Role } from './authorize.ts';


export interface TokenInfo {
  id: string;
  name: string;
  role: Role;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
  /** When the token stops being taken; null: never. */
  expiresAt: string | null;
}

/**
 * Which tokens {@link TokenService.list} answers: those not revoked, expiring before a time (tokens
 * that never expire are not among them), acting as an actor (`urn:li:corpuser:<name>`) or created by
 * one. Absent criteria select every token.
 */
export interface TokenQuery {
  active?: boolean;
  expiresBefore?: { at: number; inclusive: boolean };
  expiresAfter?: { at: number; inclusive: boolean };
  actor?: string;
  createdBy?: string;
}

// One-shot hashing: this runs on every API request.
const hash = (token: string) => digest('sha256', token, 'hex');
/** What `POST /api/tokens` takes (also shown in the OpenAPI document). */
export const TOKEN_REQUEST = {
  type: 'object',
  properties: {
    name: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
      description: 'Recorded as the actor urn:li:corpuser:<name>',
      errorMessage: 'must be 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit',
    },
    role: {
      enum: ROLES,
      description: 'reader reads; writer also writes aspects; admin also hard-deletes, truncates and manages tokens',
      errorMessage: `must be one of ${ROLES.join(', ')}`,
    },
    expiresAt: {
      type: 'integer',
      minimum: 0,
      description: 'When the token stops being taken, in epoch milliseconds (absent: never)',
      errorMessage: 'must be a time in epoch milliseconds',
    },
  },
  required: ['name', 'role'],
  additionalProperties: false,
  errorMessage: { type: 'must be an object {"name", "role"}' },
};
const checkTokenRequest = compileSchema(TOKEN_REQUEST, '');
/**
 * How long a verified token is trusted without asking the database again. A revocation is immediate on
 * the server (worker) that handles it; other workers and replicas notice within this time.
 */
const CACHE_MS = 5_000;
const ROOT: Principal = Object.freeze({ actor: 'urn:li:corpuser:admin', role: 'admin', tokenId: 'root' });

/**
 * Resolves the root token: the configured one, else the one saved under `dataDir`, else a new one
 * that is saved there (mode 600); `generated` tells the caller to print it, once.
 */
export function rootToken(configured: string | undefined, dataDir: string): { token: string; generated: boolean } {
  if (configured) return { token: configured, generated: false };
  const path = join(dataDir, 'admin-token');
  if (existsSync(path)) return { token: readFileSync(path, 'utf8').trim(), generated: false };
  mkdirSync(dataDir, { recursive: true });
  const token = `svc_${randomBytes(32).toString('base64url')}`;
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return { token, generated: true };
}

export class TokenService {
  private readonly rootHash: Buffer;
  private readonly cache = new Map<string, { principal: Principal; until: number }>();

  constructor(
    private readonly pool: Pool,
    root: string,
  ) {
    this.rootHash = Buffer.from(hash(root), 'hex');
  }

  /**
   * The principal of a bearer token when it is known without asking the database: the root token, or
   * a token verified less than {@link CACHE_MS} ago. Undefined means {@link authenticate} must decide.
   */
  known(token: string): Principal | undefined {
    return this.knownByHash(hash(token));
  }

  private knownByHash(h: string): Principal | undefined {
    if (timingSafeEqual(Buffer.from(h, 'hex'), this.rootHash)) return ROOT;
    const cached = this.cache.get(h);
    return cached && cached.until > Date.now() ? cached.principal : undefined;
  }

  /** The principal of a bearer token; UNAUTHORIZED when it is unknown, revoked or expired. */
  async authenticate(token: string): Promise<Principal> {
    const h = hash(token);
    const known = this.knownByHash(h);
    if (known) return known;
    let rows: { id: string; name: string; role: Role; expires_at: Date | null }[];
    try {
      rows = (await this.pool.query('SELECT id, name, role, expires_at FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())', [h])).rows;
    } catch (err) {
      throw dbError(err);
    }
    const row = rows[0];
    if (!row) throw new SvcError('UNAUTHORIZED', 'The bearer token is not valid (unknown, revoked or expired)');
    const principal: Principal = { actor: `urn:li:corpuser:${row.name}`, role: row.role, tokenId: row.id };
    this.cache.set(h, { principal, until: Math.min(Date.now() + CACHE_MS, row.expires_at?.getTime() ?? Infinity) });
    return principal;
  }

  /** Creates a token (admin); the secret is returned once and only its hash is kept. */
  async create(by: Principal, input: unknown): Promise<TokenInfo & { token: string }> {
    authorize(by, 'MANAGE_TOKENS');
    const problems = checkTokenRequest(input);
    if (problems.length) throw SvcError.validation(problems);
    const { name, role, expiresAt } = input as { name: string; role: Role; expiresAt?: number };
    if (expiresAt !== undefined && expiresAt <= Date.now()) throw SvcError.validation([`expiresAt: must be in the future (got ${new Date(expiresAt).toISOString()})`]);
    const token = `svc_${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    try {
      const { rows } = await this.pool.query(
        'INSERT INTO api_tokens (id, name, role, token_hash, created_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
        [id, name, role, hash(token), by.actor, expiresAt === undefined ? null : new Date(expiresAt)],
      );
      return { ...toInfo(rows[0]), token };
    } catch (err) {
      throw dbError(err);
    }
  }

  /** The tokens a query selects (every one by default), without their secrets, oldest first (admin). */
  async list(principal: Principal, query: TokenQuery = {}): Promise<TokenInfo[]> {
    authorize(principal, 'MANAGE_TOKENS');
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (condition: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(condition(`$${params.length}`));
    };
    if (query.active) where.push('revoked_at IS NULL');
    if (query.expiresBefore) add((p) => `expires_at ${query.expiresBefore!.inclusive ? '<=' : '<'} ${p}`, new Date(query.expiresBefore.at));
    if (query.expiresAfter) add((p) => `expires_at ${query.expiresAfter!.inclusive ? '>=' : '>'} ${p}`, new Date(query.expiresAfter.at));
    if (query.actor !== undefined) add((p) => `'urn:li:corpuser:' || name = ${p}`, query.actor);
    if (query.createdBy !== undefined) add((p) => `created_by = ${p}`, query.createdBy);
    try {
      const { rows } = await this.pool.query(`SELECT * FROM api_tokens${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, id`, params);
      return rows.map(toInfo);
    } catch (err) {
      throw dbError(err);
    }
  }

  /** Revokes a token at once (admin; for this server, other replicas within the cache time). */
  async revoke(principal: Principal, id: string): Promise<TokenInfo> {
    authorize(principal, 'MANAGE_TOKENS');
    let rows: Record<string, unknown>[];
    try {
      rows = (await this.pool.query('UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING *', [id])).rows;
    } catch (err) {
      throw dbError(err);
    }
    if (!rows[0]) throw SvcError.notFound(`No token with id ${id}`);
    this.cache.clear();
    return toInfo(rows[0]);
  }
}

function toInfo(r: Record<string, unknown>): TokenInfo {
  return {
    id: r.id as string,
    name: r.name as string,
    role: r.role as Role,
    createdAt: (r.created_at as Date).toISOString(),
    createdBy: r.created_by as string,
    revokedAt: r.revoked_at ? (r.revoked_at as Date).toISOString() : null,
    expiresAt: r.expires_at ? (r.expires_at as Date).toISOString() : null,
  };
}

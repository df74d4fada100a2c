/**
 * Who may do what: one decision for every surface (REST, GraphQL, CLI, operator). Service methods of
 * the catalog take the caller's principal and call {@link authorize} before they act.
 */
import { SvcError } from '../shared/errors.ts';

export const ROLES = ['reader', 'writer', 'admin'] as const;
/** Readers read; writers also write and delete aspects; admins also hard-delete, truncate and manage tokens. */
export type Role = (typeof ROLES)[number];

/** Whether `role` has at least the rights of `need` (roles are ordered reader < writer < admin). */
export function allows(role: Role, need: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(need);
}

/** Who a caller is, once its token checked out. */
export interface Principal {
  /** Actor URN recorded in audit stamps, e.g. `urn:li:corpuser:ingest-bot`. */
  actor: string;
  role: Role;
  tokenId: string;
}

/**
 * What a caller asks to do. `DELETE` removes aspects; `HARD_DELETE` removes more than the aspects
 * named (an entity, or a structured property and its values everywhere).
 */
export type Operation = 'READ' | 'UPDATE' | 'DELETE' | 'HARD_DELETE' | 'MANAGE_TOKENS' | 'TRUNCATE_TIMESERIES' | 'GET_TASK_STATUS' | 'GET_INDEX_SIZES';

const RULES: Record<Operation, { role: Role; line: (actor: string) => string }> = {
  READ: { role: 'reader', line: (a) => `${a} is unauthorized to READ entities.` },
  UPDATE: { role: 'writer', line: (a) => `${a} is unauthorized to UPDATE entities.` },
  DELETE: { role: 'writer', line: (a) => `${a} is unauthorized to DELETE entities.` },
  HARD_DELETE: { role: 'admin', line: (a) => `${a} is unauthorized to DELETE entities.` },
  MANAGE_TOKENS: { role: 'admin', line: (a) => `${a} is unauthorized to manage tokens.` },
  // The operations actions answer with DataHub's lines, which do not name the actor.
  TRUNCATE_TIMESERIES: { role: 'admin', line: () => 'User is unauthorized to truncate timeseries index' },
  GET_TASK_STATUS: { role: 'admin', line: () => 'User is unauthorized to get ES task status' },
  GET_INDEX_SIZES: { role: 'admin', line: () => 'User is unauthorized to get index sizes.' },
};

/**
 * Fails with FORBIDDEN unless `principal` may do `operation`: DataHub's one line
 * (`<actor> is unauthorized to UPDATE entities.`), and what the operation needs. `target` (a URN)
 * is named in the detail when given.
 */
export function authorize(principal: Principal, operation: Operation, target?: string): void {
  const rule = RULES[operation];
  if (allows(principal.role, rule.role)) return;
  const what = target ? ` (${target})` : '';
  throw SvcError.forbidden(rule.line(principal.actor), `This needs a token with the ${rule.role} role; the token used has the ${principal.role} role${what}`);
}

/** The catalog itself, acting on its own behalf: bootstrapping, cleanups, system update. */
export const SYSTEM: Principal = Object.freeze({ actor: 'urn:li:corpuser:__svc_system', role: 'admin', tokenId: 'system' });

/**
 * Whose a failure of search delivery is: the backend's or the database's as a whole (the step waits and
 * is tried again whole), or some entity's (the step isolates it, see outbox.ts); and what is kept of an
 * entity's failure in `search_failures`.
 */
import { SvcError } from '../shared/errors.ts';

/** SQLSTATEs of a database that cannot do the work now, whatever the work: connection, concurrency, resources, shutdown, system, lock wait. */
const TRANSIENT_SQLSTATE = /^(08|40|53|57P|58)|^55P03$/;

/**
 * Whether a failure is the backend's or the database's as a whole (unreachable, overloaded, a conflict
 * between transactions), for the whole step to wait and be tried again, rather than some entity's.
 * What is not known to be so is taken to be an entity's: taken that way wrongly, it delays the entities
 * it is blamed on (they are tried again, after a pause); taken the other way wrongly, it would stop
 * every later change.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof SvcError) {
    if (err.code === 'UNAVAILABLE' || err.code === 'CONFLICT') return true;
    const sqlstate = (err.cause as { code?: unknown } | undefined)?.code;
    return typeof sqlstate === 'string' && TRANSIENT_SQLSTATE.test(sqlstate);
  }
  const e = err as { name?: unknown; meta?: { statusCode?: unknown } } | undefined;
  // The OpenSearch client's: no connection, a timeout, a 429, or a 5xx for a request as a whole.
  if (typeof e?.name === 'string' && /^(ConnectionError|TimeoutError|NoLivingConnectionsError)$/.test(e.name)) return true;
  const status = e?.meta?.statusCode;
  return typeof status === 'number' && (status === 429 || status >= 500);
}

/** What is kept of an error that failed an entity: the driver's or OpenSearch's words, not svc's wrapper. */
export function describeFailure(err: unknown): string {
  const cause = err instanceof SvcError && err.cause instanceof Error ? err.cause : err;
  const e = cause as { message?: unknown; code?: unknown; meta?: { statusCode?: unknown; body?: { error?: { type?: unknown; reason?: unknown } } } };
  const reason = e.meta?.body?.error;
  if (reason?.type) return `OpenSearch ${String(e.meta?.statusCode ?? '')} ${String(reason.type)}: ${String(reason.reason ?? '')}`;
  const message = typeof e.message === 'string' ? e.message : String(cause);
  return typeof e.code === 'string' ? `${message} (SQLSTATE ${e.code})` : message;
}

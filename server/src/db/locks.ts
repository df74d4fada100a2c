/**
 * Entity locks and the order they are taken in. A write holds its entities' locks (exclusive) and the
 * locks of what it references (shared, e.g. the structured properties whose values it sets) until its
 * transaction ends. It takes its entities' locks first, in URN order (code-unit order, as Postgres'
 * "C" collation sorts), then the shared ones, in URN order: a write waiting for an entity holds no lock
 * on what it references, so a definition write (which locks only its property) never queues behind a
 * value write that waits for an entity. Two writes can wait for each other only if each writes an
 * entity the other references (values on two property entities naming each other); Postgres detects
 * that deadlock and the write is retried (see pool.ts). The lock of a URN is the advisory lock
 * `hashtextextended(urn, 0)`, the one the write statements take.
 */
import { query, type Db } from './pool.ts';

/** Compares URNs in lock order. */
export function compareUrns(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The distinct URNs in lock order. */
export function inLockOrder(urns: Iterable<string>): string[] {
  return [...new Set(urns)].sort(compareUrns);
}

/** Takes the entity's write lock until the transaction ends. */
export async function lockEntity(tx: Db, urn: string): Promise<void> {
  await query(tx, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [urn], 'svc_lock_entity');
}

/**
 * Shared locks on the URNs, in lock order, until the transaction ends: a writer of one of them (which
 * takes its exclusive lock) waits for this transaction, or this one waits for it and then sees it.
 */
export async function lockShared(tx: Db, urns: Iterable<string>): Promise<void> {
  const ordered = inLockOrder(urns);
  if (ordered.length === 0) return;
  await query(tx, 'SELECT pg_advisory_xact_lock_shared(hashtextextended(u, 0)) FROM unnest($1::text[]) WITH ORDINALITY AS t(u, n) ORDER BY n', [ordered], 'svc_lock_shared');
}

/**
 * How far behind search is: changes waiting in the outbox, and entities whose document could not be
 * delivered (`search_failures`, db/migrations/V001__baseline.sql). The dispatcher (outbox.ts) records a
 * failing entity in the step that tried it and takes it out of the outbox, so that it holds back no
 * other change; it tries it again, backing off, until a try delivers it. `/ready`, `/metrics` and
 * `GET /api/search/delivery` read what is here.
 */
import { query, type Db } from '../db/pool.ts';

/** The longest wait between two tries of a failing entity: 1 s after the first failure, doubling up to this. */
export const MAX_RETRY_SECONDS = 300;
/** The longest error kept of a failure (OpenSearch's reasons may quote the value). */
const MAX_ERROR_CHARS = 1_000;

/** Search's lag now. */
export interface DeliveryLag {
  /** Changes waiting in the outbox (at most the count asked for). */
  outboxDepth: number;
  /** Entities whose document could not be delivered, waiting for their next try. */
  failingEntities: number;
  /** Age in seconds of the oldest change not delivered yet, in the outbox or of a failing entity (0 when none). */
  lagSeconds: number;
  /** Age in seconds of the oldest change in the outbox, the first queued (0 when empty). */
  outboxOldestSeconds: number;
}

/** An entity whose search document could not be delivered. */
export interface FailingEntity {
  urn: string;
  /** What the search backend (or the dispatcher) said, the last time. */
  error: string;
  attempts: number;
  /** Age in seconds of its oldest change not delivered. */
  ageSeconds: number;
  queuedAt: Date;
  failingSince: Date;
  lastAttemptAt: Date;
  nextAttemptAt: Date;
}

/**
 * Search's lag now. `countUpTo`: the most outbox rows counted (`/ready` asks for a bounded count, to
 * stay fast under a backlog of millions; the rest is read by index whatever the backlog).
 */
export async function deliveryLag(db: Db, countUpTo?: number): Promise<DeliveryLag> {
  const [r] = await query<{ depth: string; failing: string; lag: number | null; oldest: number | null }>(
    db,
    `SELECT o.depth, f.failing,
            extract(epoch FROM clock_timestamp() - least(o.oldest, f.oldest))::float8 AS lag,
            extract(epoch FROM clock_timestamp() - o.oldest)::float8 AS oldest
       FROM (SELECT (SELECT count(*) FROM (SELECT 1 FROM search_outbox LIMIT $1) c) AS depth,
                    (SELECT queued_at FROM search_outbox ORDER BY id LIMIT 1) AS oldest) o,
            (SELECT count(*) AS failing, min(queued_at) AS oldest FROM search_failures) f`,
    [countUpTo ?? null],
  );
  return { outboxDepth: Number(r!.depth), failingEntities: Number(r!.failing), lagSeconds: Math.max(0, r!.lag ?? 0), outboxOldestSeconds: Math.max(0, r!.oldest ?? 0) };
}

/** The failing entities, the longest waiting first, at most `limit`. */
export async function failingEntities(db: Db, limit: number): Promise<FailingEntity[]> {
  const rows = await query<{ urn: string; error: string; attempts: number; age: number; queued_at: Date; failing_since: Date; last_attempt_at: Date; retry_at: Date }>(
    db,
    `SELECT urn, error, attempts, extract(epoch FROM clock_timestamp() - queued_at)::float8 AS age, queued_at, failing_since, last_attempt_at, retry_at
       FROM search_failures ORDER BY queued_at, urn LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    urn: r.urn,
    error: r.error,
    attempts: r.attempts,
    ageSeconds: Math.max(0, r.age),
    queuedAt: r.queued_at,
    failingSince: r.failing_since,
    lastAttemptAt: r.last_attempt_at,
    nextAttemptAt: r.retry_at,
  }));
}

/**
 * The failing entities a step tries: those whose next try is due (the earliest first, at most `limit`),
 * and those among `urns` (changed again: the change may be what mends them, so it is tried at once).
 */
export async function failuresToTry(tx: Db, urns: string[], limit: number): Promise<string[]> {
  const rows = await query<{ urn: string }>(
    tx,
    `(SELECT urn FROM search_failures WHERE retry_at <= clock_timestamp() ORDER BY retry_at LIMIT $2)
     UNION
     SELECT urn FROM search_failures WHERE urn = ANY($1::text[])`,
    [urns, limit],
  );
  return rows.map((r) => r.urn);
}

/**
 * Records failed tries: a new failure is tried again after 1 s, a repeated one after twice the wait
 * before (at most {@link MAX_RETRY_SECONDS}). `queuedAt`: the oldest change of the entity the step took
 * from the outbox (a failure already recorded keeps its own if older).
 */
export async function recordFailures(tx: Db, failures: { urn: string; error: string; queuedAt?: Date }[]): Promise<void> {
  if (failures.length === 0) return;
  await query(
    tx,
    `INSERT INTO search_failures AS f (urn, queued_at, failing_since, attempts, error, last_attempt_at, retry_at)
       SELECT u, coalesce(q, clock_timestamp()), clock_timestamp(), 1, e, clock_timestamp(), clock_timestamp() + interval '1 second'
         FROM unnest($1::text[], $2::timestamptz[], $3::text[]) AS t(u, q, e)
       ON CONFLICT (urn) DO UPDATE SET
         queued_at = least(f.queued_at, excluded.queued_at),
         attempts = f.attempts + 1,
         error = excluded.error,
         last_attempt_at = excluded.last_attempt_at,
         retry_at = excluded.last_attempt_at + make_interval(secs => least($4::int, 2 ^ least(f.attempts, 30)))`,
    [failures.map((f) => f.urn), failures.map((f) => f.queuedAt ?? null), failures.map((f) => clip(f.error)), MAX_RETRY_SECONDS],
  );
}

/** At most {@link MAX_ERROR_CHARS} characters of an error, never half of one. */
function clip(error: string): string {
  return error.length <= MAX_ERROR_CHARS ? error : `${[...error.slice(0, MAX_ERROR_CHARS + 1)].slice(0, MAX_ERROR_CHARS - 1).join('')}…`;
}

/** Forgets the failures of entities a step delivered. */
export async function clearFailures(tx: Db, urns: string[]): Promise<void> {
  if (urns.length) await query(tx, 'DELETE FROM search_failures WHERE urn = ANY($1::text[])', [urns]);
}

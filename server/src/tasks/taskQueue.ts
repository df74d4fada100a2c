/**
 * Durable background work as a resource: a task is queued in the transaction of the write that causes
 * it, claimed under a lease (so the task of a killed server is picked up again once the lease runs
 * out), reports its counts as it goes, and can be read through `/api/tasks`.
 */
import { SvcError } from '../shared/errors.ts';
import { query as rows, type Db } from '../db/pool.ts';
import type { Task, TaskState } from '../contract/tasks.ts';

export type { Task, TaskState } from '../contract/tasks.ts';

/** How long a claimed task stays with its runner without a sign of life. */
export const LEASE_SECONDS = 10;

function toTask(r: Record<string, unknown>): Task {
  const iso = (d: unknown) => (d ? (d as Date).toISOString() : null);
  return {
    id: r.id as number,
    kind: r.kind as string,
    subject: r.subject as string,
    params: r.params as Record<string, unknown>,
    state: r.state as TaskState,
    total: (r.total as number | null) ?? null,
    done: r.done as number,
    error: (r.error as string | null) ?? null,
    attempts: r.attempts as number,
    failures: r.failures as number,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    finishedAt: iso(r.finished_at),
  };
}

/** The channel on which a queued task is announced: its kind, delivered when the queuing transaction commits. */
export const TASK_CHANNEL = 'svc_tasks';

/**
 * Queues a task (call inside the transaction of the write that causes it). Runners listening on
 * {@link TASK_CHANNEL}, in any process, hear of it as that transaction commits.
 */
export async function enqueueTask(db: Db, kind: string, subject: string, params: Record<string, unknown> = {}): Promise<Task> {
  const [r] = await rows(
    db,
    'WITH t AS (INSERT INTO tasks (kind, subject, params) VALUES ($1, $2, $3) RETURNING *) SELECT t.*, pg_notify($4, t.kind) FROM t',
    [kind, subject, JSON.stringify(params), TASK_CHANNEL],
  );
  return toTask(r!);
}

export async function getTask(db: Db, id: number): Promise<Task> {
  const [r] = await rows(db, 'SELECT * FROM tasks WHERE id = $1', [id]);
  if (!r) throw SvcError.notFound(`No task with id ${id}`);
  return toTask(r);
}

export async function listTasks(db: Db, filter: { subject?: string; kind?: string; state?: string; limit: number }): Promise<Task[]> {
  const rs = await rows(
    db,
    `SELECT * FROM tasks WHERE ($1::text IS NULL OR subject = $1) AND ($2::text IS NULL OR kind = $2) AND ($3::text IS NULL OR state = $3)
      ORDER BY id DESC LIMIT $4`,
    [filter.subject ?? null, filter.kind ?? null, filter.state ?? null, filter.limit],
  );
  return rs.map(toTask);
}

/** A claimed task: every later update names the claim, so a runner that lost its lease changes nothing. */
export interface Claim {
  task: Task;
  claimId: string;
}

/** Claims the oldest runnable task (pending, or running with an expired lease), if any. */
export async function claimTask(db: Db, kinds: string[]): Promise<Claim | undefined> {
  const [r] = await rows(
    db,
    `UPDATE tasks SET state = 'RUNNING', claim_id = gen_random_uuid(), lease_until = now() + make_interval(secs => $2),
                      attempts = attempts + 1, updated_at = now()
      WHERE id = (SELECT id FROM tasks WHERE state IN ('PENDING', 'RUNNING') AND kind = ANY($1)
                    AND (lease_until IS NULL OR lease_until < now())
                  ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
      RETURNING *`,
    [kinds, LEASE_SECONDS],
  );
  return r && { task: toTask(r), claimId: r.claim_id as string };
}

/** Renews the lease; false when the claim was lost (another runner took the task over). */
export async function renewLease(db: Db, claim: Claim): Promise<boolean> {
  const rs = await rows(db, "UPDATE tasks SET lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND claim_id = $2 AND state = 'RUNNING' RETURNING id", [
    claim.task.id,
    claim.claimId,
    LEASE_SECONDS,
  ]);
  return rs.length === 1;
}

/** Records progress (and renews the lease); false when the claim was lost. */
export async function reportProgress(db: Db, claim: Claim, progress: { total?: number; doneDelta?: number }): Promise<boolean> {
  const rs = await rows(
    db,
    `UPDATE tasks SET total = coalesce($3, total), done = done + $4, lease_until = now() + make_interval(secs => $5), updated_at = now()
      WHERE id = $1 AND claim_id = $2 RETURNING id`,
    [claim.task.id, claim.claimId, progress.total ?? null, progress.doneDelta ?? 0, LEASE_SECONDS],
  );
  return rs.length === 1;
}

/** The longest wait before a failed task is tried again. */
const MAX_BACKOFF_SECONDS = 300;

/**
 * Ends a claim: SUCCEEDED, or after a failure PENDING again with an exponential backoff (capped): a
 * cleanup must finish some day, so a task is retried rather than given up; `failures` and `error` show it.
 */
export async function finishTask(db: Db, claim: Claim, error?: string): Promise<void> {
  if (error === undefined) {
    await rows(
      db,
      "UPDATE tasks SET state = 'SUCCEEDED', claim_id = NULL, lease_until = NULL, error = NULL, finished_at = now(), updated_at = now() WHERE id = $1 AND claim_id = $2",
      [claim.task.id, claim.claimId],
    );
    return;
  }
  await rows(
    db,
    `UPDATE tasks SET state = 'PENDING', claim_id = NULL, failures = failures + 1, error = $3, updated_at = now(),
                      lease_until = now() + make_interval(secs => least(power(2, failures + 1), $4))
      WHERE id = $1 AND claim_id = $2`,
    [claim.task.id, claim.claimId, error, MAX_BACKOFF_SECONDS],
  );
}

/** Gives a task back at once (graceful shutdown mid-task): the next runner resumes it without waiting for the lease. */
export async function releaseTask(db: Db, claim: Claim): Promise<void> {
  await rows(db, "UPDATE tasks SET claim_id = NULL, lease_until = NULL, updated_at = now() WHERE id = $1 AND claim_id = $2 AND state = 'RUNNING'", [
    claim.task.id,
    claim.claimId,
  ]);
}

/**
 * Durable background work as a resource: a task is queued in the transaction of the write that causes
 * it, claimed under a lease (so the task of a killed server is picked up again once the lease runs
 * out), reports its counts as it goes, and can be read through `/api/tasks`.
 */
import { SvcError } from '../errors.ts';
import type { Db } from '../db/pool.ts';
import { dbError } from '../entities/aspectStore.ts';

export type TaskState = 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

export interface Task {
  id: number;
  kind: string;
  /** What the task works on, e.g. the URN of a hard-deleted structured property. */
  subject: string;
  params: Record<string, unknown>;
  state: TaskState;
  total: number | null;
  done: number;
  error: string | null;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

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
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    finishedAt: iso(r.finished_at),
  };
}

async function rows(db: Db, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  try {
    return (await db.query(sql, params)).rows;
  } catch (err) {
    throw dbError(err);
  }
}

/** Queues a task (call inside the transaction of the write that causes it). */
export async function enqueueTask(db: Db, kind: string, subject: string, params: Record<string, unknown> = {}): Promise<Task> {
  const [r] = await rows(db, 'INSERT INTO tasks (kind, subject, params) VALUES ($1, $2, $3) RETURNING *', [kind, subject, JSON.stringify(params)]);
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

/** Whether an unfinished task of `kind` exists for `subject`. */
export async function openTask(db: Db, kind: string, subject: string): Promise<Task | undefined> {
  const [r] = await rows(db, "SELECT * FROM tasks WHERE kind = $1 AND subject = $2 AND state IN ('PENDING', 'RUNNING') ORDER BY id LIMIT 1", [kind, subject]);
  return r && toTask(r);
}

/** Claims the oldest runnable task (pending, or running with an expired lease), if any. */
export async function claimTask(db: Db, kinds: string[]): Promise<Task | undefined> {
  const [r] = await rows(
    db,
    `UPDATE tasks SET state = 'RUNNING', lease_until = now() + make_interval(secs => $2), attempts = attempts + 1, updated_at = now()
      WHERE id = (SELECT id FROM tasks WHERE state IN ('PENDING', 'RUNNING') AND kind = ANY($1)
                    AND (lease_until IS NULL OR lease_until < now())
                  ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
      RETURNING *`,
    [kinds, LEASE_SECONDS],
  );
  return r && toTask(r);
}

/** Records progress and renews the lease. */
export async function reportProgress(db: Db, id: number, progress: { total?: number; doneDelta?: number }): Promise<void> {
  await rows(
    db,
    `UPDATE tasks SET total = coalesce($2, total), done = done + $3, lease_until = now() + make_interval(secs => $4), updated_at = now()
      WHERE id = $1`,
    [id, progress.total ?? null, progress.doneDelta ?? 0, LEASE_SECONDS],
  );
}

export async function finishTask(db: Db, id: number, outcome: { error?: string; retryInSeconds?: number }): Promise<void> {
  if (outcome.error === undefined) {
    await rows(db, "UPDATE tasks SET state = 'SUCCEEDED', lease_until = NULL, error = NULL, finished_at = now(), updated_at = now() WHERE id = $1", [id]);
  } else if (outcome.retryInSeconds !== undefined) {
    await rows(db, "UPDATE tasks SET state = 'PENDING', lease_until = now() + make_interval(secs => $3), error = $2, updated_at = now() WHERE id = $1", [
      id,
      outcome.error,
      outcome.retryInSeconds,
    ]);
  } else {
    await rows(db, "UPDATE tasks SET state = 'FAILED', lease_until = NULL, error = $2, finished_at = now(), updated_at = now() WHERE id = $1", [id, outcome.error]);
  }
}

/** Gives a task back at once (graceful shutdown mid-task): the next runner resumes it without waiting for the lease. */
export async function releaseTask(db: Db, id: number): Promise<void> {
  await rows(db, "UPDATE tasks SET lease_until = NULL, updated_at = now() WHERE id = $1 AND state = 'RUNNING'", [id]);
}

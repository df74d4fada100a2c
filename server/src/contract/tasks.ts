/**
 * Background tasks as the API shows them (`GET /api/tasks`, `GET /api/tasks/{id}`): their kinds, the
 * states they go through, their shape, and the status of a truncation task as the operations action
 * `getEsTaskStatus` reports it (OpenSearch's form, for svc's own tasks too), read into counts once for
 * every client.
 */

/** Removes every value of a hard-deleted structured property (server: properties/propertyHooks.ts). */
export const HARD_DELETE_TASK = 'property-hard-delete';
/** Re-checks values after a property's definition changed (server: properties/propertyHooks.ts). */
export const STALE_VALUES_TASK = 'property-stale-values';
/** Rebuilds a search index (server: search/indexRebuild.ts; OpenSearch only). */
export const INDEX_REBUILD_TASK = 'search-index-rebuild';
/** Deletes old entries of a time series aspect (server: timeseries/). */
export const TRUNCATE_TASK = 'timeseries-truncate';

export const TASK_KINDS = [HARD_DELETE_TASK, STALE_VALUES_TASK, TRUNCATE_TASK, INDEX_REBUILD_TASK] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

export const TASK_STATES = ['PENDING', 'RUNNING', 'SUCCEEDED'] as const;
/** PENDING (queued, or waiting after a failure to be tried again), RUNNING, SUCCEEDED. */
export type TaskState = (typeof TASK_STATES)[number];

/** A task as `/api/tasks` shows it. */
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
  /** How many times a runner claimed it (resumes included). */
  attempts: number;
  /** How many of those ended in an error (each retried after a backoff). */
  failures: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** The node part of the ids of svc's own tasks, `svc:42` (42 being the task's id in `/api/tasks`). */
export const TASK_NODE = 'svc';

/** A task id as the truncation answers one, `node:number`: svc's (`svc:42`), or OpenSearch's in `opensearch` mode. */
export const TASK_ID = /^[a-zA-Z0-9_-]+:[0-9]+$/;

/** The number of an svc task id (`svc:42` → 42), as `/api/tasks/{id}` takes it; undefined for another node's id. */
export function svcTaskNumber(taskId: string): number | undefined {
  const m = /^svc:([1-9][0-9]*)$/.exec(taskId);
  return m && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : undefined;
}

/**
 * `getEsTaskStatus`' answer (the JSON text in its `value`): a task's state and OpenSearch's counters,
 * or `{error}` when there is no such task. An OpenSearch task that failed may give its error as an
 * object.
 */
export interface EsTaskStatus {
  completed?: boolean;
  taskId?: string;
  status?: { total?: number; deleted?: number; created?: number };
  error?: string | { reason?: string };
  runTimeNanos?: number;
}

/**
 * A truncation task's progress: `found: false` when the server knows no such task; else whether it
 * completed, how many entries it deletes (`total`, once known), has deleted, and, for an index rebuilt
 * without the old entries (a reindex), how many it has kept; `error` when it failed.
 */
export type TruncationProgress =
  | { found: false; error: string }
  | { found: true; completed: boolean; total: number | undefined; deleted: number; kept: number; error: string | undefined };

const errorText = (e: string | { reason?: string }) => (typeof e === 'string' ? e : (e.reason ?? JSON.stringify(e)));

/** The progress of a truncation task from its {@link EsTaskStatus}. */
export function truncationProgress(s: EsTaskStatus): TruncationProgress {
  if (s.completed === undefined && s.error !== undefined) return { found: false, error: errorText(s.error) };
  return {
    found: true,
    completed: s.completed === true,
    total: s.status?.total,
    deleted: s.status?.deleted ?? 0,
    kept: s.status?.created ?? 0,
    error: s.error === undefined ? undefined : errorText(s.error),
  };
}

/**
 * The kinds of task svc queues and the states a task goes through, named once for the server (its
 * handlers, `GET /api/tasks`) and the `svc` CLI (which imports nothing else of the server for them).
 */
import type { TaskState } from './taskQueue.ts';

/** Removes every value of a hard-deleted structured property (properties/propertyHooks.ts). */
export const HARD_DELETE_TASK = 'property-hard-delete';
/** Re-checks values after a property's definition changed (properties/propertyHooks.ts). */
export const STALE_VALUES_TASK = 'property-stale-values';
/** Rebuilds a search index (search/indexRebuild.ts; OpenSearch only). */
export const INDEX_REBUILD_TASK = 'search-index-rebuild';
/** Deletes old entries of a time series aspect (timeseries/). */
export const TRUNCATE_TASK = 'timeseries-truncate';

export const TASK_KINDS = [HARD_DELETE_TASK, STALE_VALUES_TASK, TRUNCATE_TASK, INDEX_REBUILD_TASK] as const;

// A record of TaskState, so that a state added to the type does not compile until it is listed here.
const STATES: Record<TaskState, null> = { PENDING: null, RUNNING: null, SUCCEEDED: null };
export const TASK_STATES = Object.keys(STATES) as TaskState[];

/** Background tasks as resources for callers: one task, or the tasks of a subject, kind or state. */
import { authorize } from '../auth/authorize.ts';
import type { Principal } from '../auth/authorize.ts';
import type { Pool } from '../db/pool.ts';
import { SvcError } from '../shared/errors.ts';
import { getTask, listTasks, type Task, type TaskState } from './taskQueue.ts';

export class TaskService {
  constructor(private readonly pool: Pool) {}

  /** A task by id; NOT_FOUND (with a message) when there is none. */
  async get(principal: Principal, id: number): Promise<Task> {
    authorize(principal, 'READ');
    // Task ids are positive and below 2^53: a larger number names no task.
    if (!Number.isSafeInteger(id) || id <= 0) throw SvcError.notFound(`No task with id ${id}`);
    return getTask(this.pool, id);
  }

  /** The newest tasks matching the filter, at most `limit`. */
  async list(principal: Principal, filter: { subject?: string; kind?: string; state?: TaskState; limit: number }): Promise<Task[]> {
    authorize(principal, 'READ');
    return listTasks(this.pool, filter);
  }
}

/** Background tasks as resources: `GET /api/tasks/{id}` and `GET /api/tasks?subject=&kind=&state=`. */
import { Router } from 'express';
import { SvcError } from '../../shared/errors.ts';
import type { TaskService } from '../../tasks/taskService.ts';
import { TASK_KINDS, TASK_STATES } from '../../contract/tasks.ts';
import { principalOf } from '../auth.ts';
import { sendJson } from '../json.ts';
import { quoted } from '../pathGuard.ts';
import { queryParams } from './queryParams.ts';
import { serve, type Operations } from './openapi/operations.ts';
import { errors, json, param, ref } from './openapi/parts.ts';

/** The query parameters of each task route (also the OpenAPI document's). */
export const TASK_QUERIES = {
  list: queryParams({
    subject: { type: 'string', description: 'Only tasks working on this subject, e.g. the URN of a hard-deleted structured property' },
    kind: { type: 'enum', values: TASK_KINDS, description: 'Only tasks of this kind (the index rebuild only in `opensearch` mode)' },
    state: { type: 'enum', values: TASK_STATES, description: 'Only tasks in this state' },
    count: { type: 'integer', default: 100, minimum: 1, description: 'Most tasks to return, newest first (larger than 1000 is read as 1000)' },
  }),
  get: queryParams({}),
};

/** The task routes and their OpenAPI operations. */
export const TASK_API = {
  listTasks: {
    method: 'get',
    path: '/api/tasks',
    tags: ['tasks'],
    summary: 'List background tasks (value cleanups), newest first',
    parameters: TASK_QUERIES.list.openapi(),
    responses: { '200': { description: 'The tasks', content: json({ type: 'object', properties: { tasks: { type: 'array', items: ref('Task') } } }) }, ...errors },
  },
  getTask: {
    method: 'get',
    path: '/api/tasks/{id}',
    tags: ['tasks'],
    summary: 'A background task: state and progress',
    parameters: [param('id', 'path', { type: 'integer', minimum: 1 }, 'The task id')],
    responses: { '200': { description: 'The task', content: json(ref('Task')) }, '404': { description: 'No such task', content: json(ref('Error')) }, ...errors },
  },
} satisfies Operations;

export function taskRoutes(tasks: TaskService): Router {
  return serve(Router(), TASK_API, {
    listTasks: async (req, res) => {
      const q = TASK_QUERIES.list.parse(req);
      const found = await tasks.list(principalOf(req), { subject: q.subject, kind: q.kind, state: q.state, limit: Math.min(q.count, 1000) });
      sendJson(res, 200, { tasks: found });
    },
    getTask: async (req, res) => {
      TASK_QUERIES.get.parse(req);
      const raw = String(req.params.id);
      if (!/^[0-9]+$/.test(raw)) throw SvcError.validation([`task id: expected a number such as 42, got ${quoted(raw)}`]);
      // Task ids are positive and below 2^53: a larger number names no task.
      if (!Number.isSafeInteger(Number(raw))) throw SvcError.notFound(`No task with id ${raw}`);
      sendJson(res, 200, await tasks.get(principalOf(req), Number(raw)));
    },
  });
}

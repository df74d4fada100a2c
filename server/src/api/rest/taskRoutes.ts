/** Background tasks as resources: `GET /api/tasks/{id}` and `GET /api/tasks?subject=&kind=&state=`. */
import { Router } from 'express';
import type { Pool } from '../../db/pool.ts';
import { SvcError } from '../../errors.ts';
import { getTask, listTasks } from '../../tasks/taskQueue.ts';
import { sendJson } from '../json.ts';
import { enumParam, intParam, stringParam } from './queryParams.ts';

export function taskRoutes(pool: Pool): Router {
  const router = Router();
  router.get('/api/tasks', async (req, res) => {
    const tasks = await listTasks(pool, {
      subject: stringParam(req, 'subject'),
      kind: stringParam(req, 'kind'),
      state: enumParam(req, 'state', ['PENDING', 'RUNNING', 'SUCCEEDED', ''] as const, '') || undefined,
      limit: Math.min(intParam(req, 'count', 100, 1), 1000),
    });
    sendJson(res, 200, { tasks });
  });
  router.get('/api/tasks/:id', async (req, res) => {
    const id = Number(req.params.id);
    if (!Number.isSafeInteger(id) || id <= 0) throw SvcError.validation([`task id: expected a positive integer, got "${req.params.id}"`]);
    sendJson(res, 200, await getTask(pool, id));
  });
  return router;
}

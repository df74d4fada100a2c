/** Background tasks through a test server's `/api/tasks`. */
import assert from 'node:assert/strict';
import { text, type TestServer } from './testServer.ts';

export interface Task {
  id: number;
  kind: string;
  subject: string;
  state: 'PENDING' | 'RUNNING' | 'SUCCEEDED';
  total: number | null;
  done: number;
  error: string | null;
  failures: number;
}

export const HARD_DELETE_TASK = 'property-hard-delete';
export const STALE_VALUES_TASK = 'property-stale-values';

export async function tasksOf(s: TestServer, subject: string): Promise<Task[]> {
  const body = JSON.parse(await text(await s.request(`/api/tasks?subject=${encodeURIComponent(subject)}`), 200)) as { tasks: Task[] };
  return body.tasks;
}

/** Polls GET /api/tasks?subject=<urn> until the task of `kind` has SUCCEEDED (fails on a failed step or after 20 s). */
export async function waitForTask(s: TestServer, subject: string, kind: string): Promise<Task> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const task = (await tasksOf(s, subject)).find((t) => t.kind === kind);
    if (task?.state === 'SUCCEEDED') return task;
    assert.equal(task?.failures ?? 0, 0, `a step of the task failed: ${JSON.stringify(task)}`);
    assert.ok(Date.now() < deadline, `task ${kind} of ${subject} did not succeed in time: ${JSON.stringify(task)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

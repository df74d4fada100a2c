/**
 * Runs durable tasks in the server process: claims one task at a time, calls the handler of its kind,
 * and records the outcome. Handlers work in small idempotent steps, so a task cut off anywhere (crash,
 * kill, shutdown) is simply resumed by whichever runner claims it next.
 */
import type { Pool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { claimTask, finishTask, releaseTask, reportProgress, type Task } from './taskQueue.ts';

export interface TaskContext {
  task: Task;
  /** Records progress (and renews the lease). */
  progress(p: { total?: number; doneDelta?: number }): Promise<void>;
  /** True once the runner is stopping: return between steps, the task is resumed later. */
  readonly stopping: boolean;
}

export type TaskHandler = (ctx: TaskContext) => Promise<void>;

const MAX_ATTEMPTS = 5;
const POLL_MS = 500;

export class TaskRunner {
  private readonly handlers = new Map<string, TaskHandler>();
  private stopping = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
  ) {}

  register(kind: string, handler: TaskHandler): void {
    this.handlers.set(kind, handler);
  }

  /** Asks the runner to look for work now (e.g. right after a task was queued). */
  kick(): void {
    this.wake?.();
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Stops claiming tasks; a task in progress returns at its next step and is released. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.kick();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let task: Task | undefined;
      try {
        task = await claimTask(this.pool, [...this.handlers.keys()]);
      } catch (err) {
        this.log.warn({ err }, 'could not claim a task; retrying');
      }
      if (task) {
        await this.run(task);
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async run(task: Task): Promise<void> {
    const handler = this.handlers.get(task.kind)!;
    const runner = this;
    const ctx: TaskContext = {
      task,
      progress: (p) => reportProgress(this.pool, task.id, p),
      get stopping() {
        return runner.stopping;
      },
    };
    this.log.info({ task: task.id, kind: task.kind, subject: task.subject, attempt: task.attempts }, 'task started');
    try {
      await handler(ctx);
      if (this.stopping) {
        await releaseTask(this.pool, task.id);
        this.log.info({ task: task.id }, 'task released for a later runner (shutting down)');
        return;
      }
      await finishTask(this.pool, task.id, {});
      this.log.info({ task: task.id, kind: task.kind }, 'task succeeded');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const retry = task.attempts < MAX_ATTEMPTS;
      this.log.warn({ err, task: task.id, retry }, 'task step failed');
      await finishTask(this.pool, task.id, retry ? { error: message, retryInSeconds: 2 ** task.attempts } : { error: message }).catch((e: unknown) =>
        this.log.error({ err: e, task: task.id }, 'could not record the task outcome'),
      );
    }
  }
}

/**
 * Runs durable tasks in the server process: claims one task at a time, calls the handler of its kind,
 * and records the outcome. Handlers work in small idempotent steps, so a task cut off anywhere (crash,
 * kill, shutdown) is simply resumed by whichever runner claims it next.
 */
import type { Pool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { claimTask, finishTask, LEASE_SECONDS, releaseTask, renewLease, reportProgress, type Claim, type Task } from './taskQueue.ts';

export interface TaskContext {
  task: Task;
  /** Records progress (and renews the lease). */
  progress(p: { total?: number; doneDelta?: number }): Promise<void>;
  /** True once the runner is stopping or lost the task's lease: return between steps (it is resumed later). */
  readonly stopping: boolean;
}

export type TaskHandler = (ctx: TaskContext) => Promise<void>;

const POLL_MS = 500;
const KICK_DELAY_MS = 20;

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

  /**
   * Asks the runner to look for work soon: kicks come from inside the transaction that queues the
   * task, so the claim waits a moment for that commit (the poll is the fallback).
   */
  kick(): void {
    setTimeout(() => this.wake?.(), KICK_DELAY_MS).unref();
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Stops claiming tasks; a task in progress returns at its next step and is released. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let claim: Claim | undefined;
      try {
        claim = await claimTask(this.pool, [...this.handlers.keys()]);
      } catch (err) {
        this.log.warn({ err }, 'could not claim a task; retrying');
      }
      if (claim) {
        await this.run(claim);
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

  private async run(claim: Claim): Promise<void> {
    const { task } = claim;
    const handler = this.handlers.get(task.kind)!;
    let lost = false;
    const lose = (ok: boolean) => {
      if (!ok && !lost) {
        lost = true;
        this.log.warn({ task: task.id }, 'lost the lease of a task to another runner; leaving it');
      }
    };
    // The lease is renewed while the handler works, also through a long step.
    const heartbeat = setInterval(() => {
      renewLease(this.pool, claim).then(lose, (err: unknown) => this.log.warn({ err, task: task.id }, 'could not renew a task lease'));
    }, (LEASE_SECONDS * 1000) / 3);
    const runner = this;
    const ctx: TaskContext = {
      task,
      progress: async (p) => lose(await reportProgress(this.pool, claim, p)),
      get stopping() {
        return runner.stopping || lost;
      },
    };
    this.log.info({ task: task.id, kind: task.kind, subject: task.subject, attempt: task.attempts }, 'task started');
    try {
      await handler(ctx);
      if (lost) return;
      if (this.stopping) {
        await releaseTask(this.pool, claim);
        this.log.info({ task: task.id }, 'task released for a later runner (shutting down)');
        return;
      }
      await finishTask(this.pool, claim);
      this.log.info({ task: task.id, kind: task.kind }, 'task succeeded');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn({ err, task: task.id }, 'task step failed; it is retried after a backoff');
      await finishTask(this.pool, claim, message).catch((e: unknown) => this.log.error({ err: e, task: task.id }, 'could not record the task outcome'));
    } finally {
      clearInterval(heartbeat);
    }
  }
}

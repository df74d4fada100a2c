/**
 * Runs durable tasks in the server process: one loop per kind (so a long truncation never holds up a
 * property cleanup), each claiming one task of its kind at a time, calling its handler, and recording
 * the outcome. A loop wakes when a task of its kind is queued anywhere (Postgres NOTIFY, delivered as
 * the queuing transaction commits), and otherwise looks every second for tasks whose lease ran out
 * (a runner that died) or whose backoff is over. Handlers work in small idempotent steps, so a task
 * cut off anywhere (crash, kill, shutdown) is resumed by whichever runner claims it next.
 */
import type { Db, Pool } from '../db/pool.ts';
import type { Logger } from '../shared/log.ts';
import { Listener } from '../db/listener.ts';
import { claimTask, finishTask, LEASE_SECONDS, releaseTask, renewLease, reportProgress, TASK_CHANNEL, type Claim, type Task } from './taskQueue.ts';

export interface TaskContext {
  task: Task;
  /**
   * Records progress (and renews the lease). Given the step's transaction, the progress commits with
   * the work it counts, and a runner that lost the task's lease fails the step (it is rolled back).
   */
  progress(p: { total?: number; doneDelta?: number }, tx?: Db): Promise<void>;
  /** True once the runner is stopping or lost the task's lease: return between steps (it is resumed later). */
  readonly stopping: boolean;
}

export type TaskHandler = (ctx: TaskContext) => Promise<void>;

/** How often a loop looks for expired leases and finished backoffs without being woken. */
const POLL_MS = 1_000;

interface KindLoop {
  handler: TaskHandler;
  wake?: () => void;
  /** Set when a wake-up came while the loop was busy: it looks again at once. */
  woken: boolean;
  running?: Promise<void>;
}

export class TaskRunner {
  private readonly loops = new Map<string, KindLoop>();
  private stopping = false;
  private listener: Listener | undefined;

  private readonly listenUrl: string | undefined;
  private readonly pollMs: number;

  /**
   * `listenUrl`: the pool's database, where queued tasks are announced (without it: polling only);
   * `pollMs`: how often each loop looks for tasks without being woken (default 1 s).
   */
  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
    opts: { listenUrl?: string; pollMs?: number } = {},
  ) {
    this.listenUrl = opts.listenUrl;
    this.pollMs = opts.pollMs ?? POLL_MS;
  }

  register(kind: string, handler: TaskHandler): void {
    this.loops.set(kind, { handler, woken: false });
  }

  /** Wakes the loop of `kind` (or every loop): a task may be waiting. */
  kick(kind?: string): void {
    for (const [k, loop] of this.loops) {
      if (kind !== undefined && k !== kind) continue;
      loop.woken = true;
      loop.wake?.();
    }
  }

  start(): void {
    for (const [kind, loop] of this.loops) loop.running ??= this.loop(kind, loop);
    // Queued tasks are announced on the channel, the kind as payload (none: after a reconnect, any kind).
    if (this.listenUrl) {
      this.listener ??= new Listener(this.listenUrl, TASK_CHANNEL, 'svc-tasks', this.log, (kind) => this.kick(kind || undefined));
      this.listener.start();
    }
  }

  /** Stops claiming tasks; a task in progress returns at its next step and is released. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.kick();
    await Promise.all([...this.loops.values()].map((l) => l.running));
    await this.listener?.stop();
  }

  private async loop(kind: string, loop: KindLoop): Promise<void> {
    while (!this.stopping) {
      loop.woken = false;
      let claim: Claim | undefined;
      try {
        claim = await claimTask(this.pool, [kind]);
      } catch (err) {
        this.log.warn({ err, kind }, 'could not claim a task; retrying');
      }
      if (claim) {
        await this.run(claim, loop.handler);
        continue;
      }
      if (loop.woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        loop.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      loop.wake = undefined;
    }
  }

  private async run(claim: Claim, handler: TaskHandler): Promise<void> {
    const { task } = claim;
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
      progress: async (p, tx) => {
        const ok = await reportProgress(tx ?? this.pool, claim, p);
        lose(ok);
        if (!ok && tx) throw new Error(`lost the lease of task ${task.id}: its step is rolled back`);
      },
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
      if (lost) return;
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn({ err, task: task.id }, 'task step failed; it is retried after a backoff');
      await finishTask(this.pool, claim, message).catch((e: unknown) => this.log.error({ err: e, task: task.id }, 'could not record the task outcome'));
    } finally {
      clearInterval(heartbeat);
    }
  }
}

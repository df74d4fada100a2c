/**
 * TruncationJob: runs the server's truncation (T1) of a time series aspect once, or at each time of a
 * cron schedule, and follows the task it starts. The status is the job's memory: a run is started only
 * after `lastRun` records it, its task id is kept as soon as the server gives it, and a reconcile
 * after a restart resumes polling that task instead of starting another run. One reconcile per key
 * at a time and the leader Lease make two runs of one job at once impossible.
 *
 * A run: a dry run first (its counts, and the server's message), then, unless `dryRun`, the real run and
 * polling of its task (`requeueAfter`, never blocking a worker) until it completes or fails. A run
 * recorded whose task id never reached the status (the server was down, or a restart came in between)
 * is launched again with its recorded cut-off.
 *
 * `lastRun.generation` is the spec a run was for. A job without schedule runs once per generation: a
 * spec changed while a task runs is run once that task has ended (a server task cannot be stopped).
 */
import { CronTime } from 'cron';
import type { Logger } from 'pino';
import { cutoffMillis } from '../../../server/src/contract/olderThan.ts';
import type { TruncationAnswer } from '../../../server/src/contract/truncation.ts';
import { CatalogClient, CatalogError } from '../catalog.ts';
import { CustomResources, isManaged, keyOf, type TruncationJob, type TruncationJobStatus } from '../resources.ts';
import type { ConditionUpdate } from '../runtime/conditions.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Informer } from '../runtime/informer.ts';

export interface TruncationJobDeps {
  resources: CustomResources<TruncationJob>;
  informer: Informer<TruncationJob>;
  catalog: CatalogClient;
  events: EventRecorder;
  log: Logger;
  /** How soon a running task is polled again. */
  pollMs: number;
  now?: () => number;
}

/** The next time of a cron schedule (five fields, or six with seconds first; UTC) after `from`. */
export function nextRunOf(schedule: string, from: Date): Date {
  const time = new CronTime(schedule, 'UTC');
  // sendAt() counts from the real clock; the schedule's next time after `from` is what a run is due at.
  const next = time.getNextDateFrom(from, 'UTC');
  return next.toJSDate();
}

/** The longest message the CRD takes in `lastRun.message` (and in a condition). */
const MAX_MESSAGE = 32_768;

/**
 * The generation of the spec the last run was for: `lastRun.generation`, or for a status written before
 * that field, the observed generation of a status that records a run.
 */
function ranFor(status: TruncationJobStatus): number | undefined {
  if (!status.lastRun?.startTime) return undefined;
  return status.lastRun.generation ?? status.observedGeneration;
}

/** A real run recorded in status, not finished, and never launched (no task id). */
function unlaunched(status: TruncationJobStatus): boolean {
  const { lastRun, taskId } = status;
  return !taskId && !!lastRun?.startTime && !lastRun.completionTime && lastRun.dryRun === false;
}

/**
 * The facts a status write of `job` records: `facts`, with the `lastRun` they give (else the one in
 * status). A `lastRun` recorded by an operator from before `lastRun.generation` gets the generation it
 * was for (the status's `observedGeneration` then) before the write moves `observedGeneration` on; its
 * message is cut to what the CRD takes, so that a long one (a server's refusal, say) does not make the
 * API server refuse the whole write.
 */
export function statusFacts(job: TruncationJob, facts: Partial<TruncationJobStatus>): Partial<TruncationJobStatus> {
  let lastRun = 'lastRun' in facts ? facts.lastRun : job.status?.lastRun;
  const generation = lastRun && ranFor({ observedGeneration: job.status?.observedGeneration, lastRun });
  if (lastRun && lastRun.generation === undefined && generation !== undefined) lastRun = { ...lastRun, generation };
  if (lastRun?.message !== undefined && lastRun.message.length > MAX_MESSAGE) lastRun = { ...lastRun, message: lastRun.message.slice(0, MAX_MESSAGE) };
  return { ...facts, lastRun };
}

export class TruncationJobReconciler {
  private readonly now: () => number;

  constructor(private readonly deps: TruncationJobDeps) {
    this.now = deps.now ?? Date.now;
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const job = this.deps.informer.get(key);
    if (!job || job.metadata.deletionTimestamp || !isManaged(job)) return;
    const status = job.status ?? {};
    try {
      // A run in progress (also one found after a restart) is followed, never started again.
      if (status.taskId && !status.lastRun?.completionTime) return await this.poll(job, status.taskId);
      // A run recorded but without a task id: the server was down when it was to start, or the operator
      // stopped between the server accepting it and the status write. It is launched (again) with its
      // recorded cut-off; truncation is idempotent, so a task that did start meanwhile leaves the second
      // one less to delete.
      if (this.interrupted(job)) return await this.resume(job);
      // A run recorded for an earlier spec and never launched is not launched any more: it is closed,
      // so that its Running conditions do not stay until a scheduled job's next time.
      if (this.superseded(job)) return await this.supersede(job);
      const due = this.due(job);
      if ('invalid' in due) {
        await this.writeStatus(job, {}, [{ type: 'Ready', status: 'False', reason: 'InvalidSchedule', message: due.invalid }]);
        return;
      }
      if (due.waitMs !== undefined) {
        await this.writeStatus(job, { nextRun: due.nextRun }, [{ type: 'Ready', status: 'True', reason: 'Scheduled', message: `next run at ${due.nextRun}` }]);
        return { requeueAfterMs: due.waitMs };
      }
      if (!due.run) return;
      return await this.start(job);
    } catch (err) {
      if (!(err instanceof CatalogError)) throw err;
      // The status is written whole: on the live object, which holds what this reconcile recorded so far.
      const live = (await this.deps.resources.read(job).catch(() => undefined)) ?? job;
      if (err.kind === 'rejected') return this.fail(live, 'Rejected', err.message);
      const reason = { unauthorized: 'Unauthorized', conflict: 'Conflict', unavailable: 'ServerUnavailable' }[err.kind];
      await this.writeStatus(live, {}, [{ type: 'Ready', status: err.kind === 'conflict' ? 'False' : 'Unknown', reason, message: err.message }]).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Whether a run is due now: a job without schedule runs once per generation; a scheduled one when
   * its `nextRun` has come (the first `nextRun` is computed when the job is first seen, or changed).
   */
  private due(job: TruncationJob): { run: boolean; waitMs?: undefined } | { waitMs: number; nextRun: string } | { invalid: string } {
    const status = job.status ?? {};
    const sameGeneration = status.observedGeneration === job.metadata.generation;
    if (!job.spec.schedule) return { run: ranFor(status) !== job.metadata.generation };
    let nextRun = sameGeneration ? status.nextRun : undefined;
    if (!nextRun) {
      const next = this.nextOf(job);
      if (next.invalid !== undefined) return { invalid: next.invalid };
      nextRun = next.next!;
    }
    const wait = Date.parse(nextRun) - this.now();
    return wait > 0 ? { waitMs: wait, nextRun } : { run: true };
  }

  /**
   * A real run of this generation recorded in status, not finished, and without its task id. A run of an
   * earlier spec is not launched: the spec it was for (a cut-off, `dryRun: false`) is no longer wanted.
   */
  private interrupted(job: TruncationJob): boolean {
    const status = job.status ?? {};
    return unlaunched(status) && ranFor(status) === job.metadata.generation && status.lastRun!.endTimeMillis !== undefined;
  }

  /** The next time of the job's schedule from now; `invalid` says why the schedule has none. */
  private nextOf(job: TruncationJob): { next?: string; invalid?: string } {
    if (!job.spec.schedule) return {};
    try {
      return { next: nextRunOf(job.spec.schedule, new Date(this.now())).toISOString() };
    } catch (err) {
      return { invalid: `schedule ${job.spec.schedule} is not a cron expression: ${(err as Error).message}` };
    }
  }

  /** A real run recorded for an earlier generation, not finished, and never launched. */
  private superseded(job: TruncationJob): boolean {
    const status = job.status ?? {};
    return unlaunched(status) && ranFor(status) !== job.metadata.generation;
  }

  private async supersede(job: TruncationJob): Promise<ReconcileResult> {
    const message = `the run recorded for generation ${ranFor(job.status ?? {})} was never launched, and the spec has changed since: it is dropped`;
    await this.writeStatus(job, { lastRun: { ...job.status!.lastRun, completionTime: new Date(this.now()).toISOString() } }, [
      { type: 'Complete', status: 'False', reason: 'Superseded', message },
      { type: 'Failed', status: 'False', reason: 'Superseded', message },
    ]);
    await this.deps.events.record(job, 'Normal', 'Superseded', 'Truncate', message);
    return { requeueAfterMs: 0 };
  }

  /**
   * The job as the API server has it now, when the cache has caught up with it; undefined when the cache
   * is behind (it may not have seen this operator's last status write yet: the reconcile is requeued).
   */
  private async live(cached: TruncationJob): Promise<{ job: TruncationJob } | { requeue: ReconcileResult } | undefined> {
    const job = await this.deps.resources.read(cached);
    if (!job || job.metadata.deletionTimestamp) return undefined;
    if (job.metadata.resourceVersion !== cached.metadata.resourceVersion) return { requeue: { requeueAfterMs: 100 } };
    return { job };
  }

  private async resume(cached: TruncationJob): Promise<ReconcileResult | void> {
    const live = await this.live(cached);
    if (!live || 'requeue' in live) return live?.requeue;
    const lastRun = live.job.status!.lastRun!;
    this.deps.log.info({ key: keyOf(live.job), endTimeMillis: lastRun.endTimeMillis }, 'truncation run recorded without a task: launching it');
    return this.launch(live.job, this.request(live.job, lastRun.endTimeMillis!), lastRun, live.job.status?.counts ?? {});
  }

  /** T1's parameters for a run of the job with this cut-off. */
  private request(job: TruncationJob, endTimeMillis: number) {
    return { entityType: job.spec.entityType, aspect: job.spec.aspect, endTimeMillis, batchSize: job.spec.batchSize, timeoutSeconds: job.spec.timeoutSeconds };
  }

  /** Starts a run: the dry run, and the real one unless `dryRun`. */
  private async start(cached: TruncationJob): Promise<ReconcileResult | void> {
    const live = await this.live(cached);
    if (!live || 'requeue' in live) return live?.requeue;
    let job = live.job;
    const startTime = new Date(this.now()).toISOString();
    // The API server held olderThan to the grammar (the CRD's rule): an age that goes back further than a
    // time can be written is all that is left to refuse.
    const endTimeMillis = job.spec.endTimeMillis ?? cutoffMillis(job.spec.olderThan!, this.now());
    if (endTimeMillis === undefined) return this.fail(job, 'Rejected', `olderThan ${job.spec.olderThan} goes back further than a time can be written`);
    const dryRun = job.spec.dryRun ?? true;
    const generation = job.metadata.generation;
    const request = this.request(job, endTimeMillis);
    let answer: TruncationAnswer;
    try {
      answer = await this.deps.catalog.truncate({ ...request, dryRun: true });
    } catch (err) {
      // A refused run is this run: nothing of the one before stays in status.
      if (!(err instanceof CatalogError) || err.kind !== 'rejected') throw err;
      return this.fail(job, 'Rejected', err.message, { lastRun: { startTime, endTimeMillis, dryRun, message: err.message, generation }, counts: undefined, taskId: undefined });
    }
    // A dry run asked for answers as one; the counts are its fields, the message DataHub's sentence.
    if (!answer.dryRun) throw new Error(`the server started task ${answer.task} for a dry run`);
    const { message } = answer;
    const counts = { toDelete: answer.toDelete, total: answer.total };
    const lastRun = { startTime, endTimeMillis, dryRun, message, generation };
    if (dryRun) {
      return this.finish(job, { lastRun, counts: { ...counts, deleted: 0 }, taskId: undefined }, 'DryRun', `dry run: ${message.trim()}`);
    }
    // The run is recorded before it starts: a restart finds it and does not run the job twice. The
    // conditions of the run before (Complete, Failed) give way to this one's.
    const running = `truncating ${counts.toDelete} of ${counts.total} entries at or before ${endTimeMillis}`;
    job =
      (await this.writeStatus(job, { lastRun, counts: { ...counts, deleted: 0 }, taskId: undefined, nextRun: undefined }, [
        { type: 'Complete', status: 'False', reason: 'Running', message: running },
        { type: 'Failed', status: 'False', reason: 'Running', message: running },
        { type: 'Ready', status: 'True', reason: 'Running', message: running },
      ])) ?? job;
    if (counts.toDelete === 0) return this.finish(job, { lastRun, counts: { ...counts, deleted: 0 } }, 'NothingToDelete', 'no entry at or before the cut-off');
    return this.launch(job, request, lastRun, counts);
  }

  /** The real run of a recorded run: its task id into status, then polling. */
  private async launch(job: TruncationJob, request: ReturnType<TruncationJobReconciler['request']>, lastRun: NonNullable<TruncationJobStatus['lastRun']>, counts: NonNullable<TruncationJobStatus['counts']>): Promise<ReconcileResult> {
    const answer = await this.deps.catalog.truncate({ ...request, dryRun: false });
    if (answer.dryRun) throw new Error('the server answered a real run as a dry run');
    const taskId = answer.task;
    await this.writeStatus(job, { lastRun, taskId }, []);
    await this.deps.events.record(job, 'Normal', 'Started', 'Truncate', `task ${taskId}: deleting ${counts.toDelete} of ${counts.total} entries of ${job.spec.entityType}/${job.spec.aspect}`);
    this.deps.log.info({ key: keyOf(job), taskId, endTimeMillis: request.endTimeMillis }, 'truncation started');
    return { requeueAfterMs: this.deps.pollMs };
  }

  private async poll(job: TruncationJob, taskId: string): Promise<ReconcileResult | void> {
    let progress;
    try {
      progress = await this.deps.catalog.task(taskId);
    } catch (err) {
      if (err instanceof CatalogError && err.kind === 'rejected') return this.fail(job, 'TaskLost', `task ${taskId}: ${err.message}`);
      throw err;
    }
    const counts = { ...job.status?.counts, deleted: progress.deleted };
    if (progress.error) return this.fail(job, 'TaskFailed', `task ${taskId}: ${progress.error}`, { counts });
    if (!progress.completed) {
      await this.writeStatus(job, { counts }, []);
      return { requeueAfterMs: this.deps.pollMs };
    }
    // A task stopped by timeoutSeconds ends well, with entries left: said in the reason and an Event.
    const timeout = job.spec.timeoutSeconds;
    if (timeout !== undefined && progress.total !== undefined && progress.deleted < progress.total) {
      const message = `task ${taskId} deleted ${progress.deleted} of ${progress.total} entries: it stopped at timeoutSeconds (${timeout}), leaving the rest`;
      return this.finish(job, { counts }, 'StoppedAtTimeout', message, 'Warning');
    }
    return this.finish(job, { counts }, 'Completed', `task ${taskId} deleted ${progress.deleted} entries`);
  }

  /** A run ended well: Complete=True, and the next time of a schedule. */
  private async finish(job: TruncationJob, facts: Partial<TruncationJobStatus>, reason: string, message: string, event: 'Normal' | 'Warning' = 'Normal'): Promise<ReconcileResult | void> {
    const completionTime = new Date(this.now()).toISOString();
    const lastRun = { ...(facts.lastRun ?? job.status?.lastRun), completionTime };
    // The schedule may have been changed while the run worked: the run is recorded all the same.
    const { next, invalid } = this.nextOf(job);
    await this.writeStatus(job, { ...facts, lastRun, nextRun: next }, [
      { type: 'Complete', status: 'True', reason, message },
      { type: 'Failed', status: 'False', reason, message },
      invalid !== undefined
        ? { type: 'Ready', status: 'False', reason: 'InvalidSchedule', message: invalid }
        : { type: 'Ready', status: 'True', reason: next ? 'Scheduled' : reason, message: next ? `${message}; next run at ${next}` : message },
    ]);
    await this.deps.events.record(job, event, reason, 'Truncate', message);
    this.deps.log.info({ key: keyOf(job), reason }, 'truncation run finished');
    return this.after(job, lastRun, next);
  }

  /** A run ended badly, or could not start: Failed=True, a Warning; a scheduled job still runs at its next time. */
  private async fail(job: TruncationJob, reason: string, message: string, facts: Partial<TruncationJobStatus> = {}): Promise<ReconcileResult | void> {
    const lastRun = { ...job.status?.lastRun, ...facts.lastRun, completionTime: new Date(this.now()).toISOString() };
    const { next } = this.nextOf(job);
    await this.writeStatus(job, { ...facts, lastRun, nextRun: next }, [
      { type: 'Complete', status: 'False', reason, message },
      { type: 'Failed', status: 'True', reason, message },
      { type: 'Ready', status: 'False', reason, message },
    ]);
    await this.deps.events.record(job, 'Warning', reason, 'Truncate', message);
    return this.after(job, lastRun, next);
  }

  /** What follows a run: the next time of a schedule, or at once the run of a spec changed meanwhile. */
  private after(job: TruncationJob, lastRun: NonNullable<TruncationJobStatus['lastRun']>, next: string | undefined): ReconcileResult | undefined {
    if (next) return { requeueAfterMs: Math.max(0, Date.parse(next) - this.now()) };
    // `job` is the object before this run's last write (whose observedGeneration an earlier operator's lastRun ran for).
    const ran = ranFor({ observedGeneration: job.status?.observedGeneration, lastRun });
    return ran !== undefined && ran !== job.metadata.generation ? { requeueAfterMs: 0 } : undefined;
  }

  /** Every status write, with the facts {@link statusFacts} makes of `facts`. */
  private writeStatus(job: TruncationJob, facts: Partial<TruncationJobStatus>, updates: ConditionUpdate[]): Promise<TruncationJob | undefined> {
    return this.deps.resources.updateStatus(job, statusFacts(job, facts), updates);
  }
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `tools/leaderelection` with a
 * LeaseLock, so that of several operator replicas one acts and the others stand by.
 *
 * A replica acquires the Lease when it has no holder or when the holder has not renewed it for
 * `leaseDurationSeconds` as measured by this replica's own clock, from the moment it saw the record
 * last change (never from the remote timestamps: the clocks of two machines need not agree). The
 * leader renews every retry period with optimistic concurrency and steps down when no renewal
 * succeeded for `renewDeadlineSeconds`. As that is shorter than the lease duration, a leader that
 * cannot reach the API server stops acting before any other replica can consider the Lease expired.
 * What to write, and when a Lease counts as expired, is decided in leaseDecision.ts; this module reads
 * and writes the Lease and keeps the timers.
 */
import { performance } from 'node:perf_hooks';
import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import { SvcError } from '../../../server/src/errors.ts';
import type { Logger } from '../../../server/src/log.ts';
import type { OperatorMetrics } from './metrics.ts';
import { created, JITTER_FACTOR, leaseTimings, nextRecord, observe, observedValid, released, renewal, type LeaseRecord as LeaseRecordOf, type Observation } from './leaseDecision.ts';

/** The Lease, this replica's identity in it, client-go's timings (15 / 10 / 2 s by default) and the callbacks. */
export interface LeaderElectionOptions {
  kc: KubeConfig;
  /** Namespace of the Lease, usually the operator's own. */
  namespace: string;
  /** Name of the Lease, e.g. `svc-operator`; also the `name` label of `leader_election_master_status`. */
  name: string;
  /** This replica's `holderIdentity`, unique per process, e.g. `${hostname}_${uuid}`. */
  identity: string;
  /** How long a Lease not renewed stays held, in whole seconds (default 15; a fraction is rounded up). */
  leaseDurationSeconds?: number;
  /** How long the leader keeps trying to renew before it steps down (default 10; shorter than the lease). */
  renewDeadlineSeconds?: number;
  /** Time between attempts to acquire or renew (default 2; may be fractional). */
  retryPeriodSeconds?: number;
  log: Logger;
  metrics?: OperatorMetrics;
  /** This replica became the leader: start acting. */
  onStartedLeading(): void;
  /** This replica stopped leading (renew deadline passed, lease taken over, or `stop()`): stop acting now. Called once. */
  onStoppedLeading(): void;
}

/** The Lease's spec as the elector reads and writes it: client-go's `LeaderElectionRecord`. */
type LeaseRecord = LeaseRecordOf<V1MicroTime>;

/** Takes and keeps a Lease for one replica; create one per process and call {@link LeaderElector.run} once. */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly log: Logger;
  private readonly leaseSeconds: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  /** The last record read or written, when (monotonic ms) this replica saw it change, and the spec last read. */
  private observed: Observation<V1MicroTime> | undefined;
  /** The holder last logged, to log each new leader once. */
  private reportedLeader = '';
  /** The Lease last read or written: its `resourceVersion` makes the next replace conditional. */
  private lease: V1Lease | undefined;
  private leading = false;
  /** Monotonic ms when the last successful acquire or renew was sent. */
  private renewedAt = 0;
  private deadline: NodeJS.Timeout | undefined;
  private halted = false;
  /** Ends what the run loop is waiting for (a sleep or an attempt) when the elector halts. */
  private wake: (() => void) | undefined;
  /** The acquire or renew attempt under way, so `stop` can let it land before releasing. */
  private attempt: Promise<boolean> | undefined;
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly opts: LeaderElectionOptions) {
    const timings = leaseTimings(opts.leaseDurationSeconds, opts.renewDeadlineSeconds, opts.retryPeriodSeconds);
    const violations = 'violations' in timings ? timings.violations : [];
    if (!opts.identity) violations.push('identity must not be empty');
    if ('violations' in timings || violations.length > 0) throw SvcError.validation(violations);
    this.leaseSeconds = timings.leaseSeconds;
    this.renewDeadlineMs = timings.renewDeadlineMs;
    this.retryMs = timings.retryMs;
    this.api = opts.kc.makeApiClient(CoordinationV1Api);
    this.log = opts.log.child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
    opts.metrics?.setLeader(opts.name, false);
  }

  /**
   * Tries to acquire every retry period until it leads, then renews; resolves when `stop()` was called
   * (after it finished) or leadership was lost. An elector runs once: to contend again, make a new one.
   */
  run(): Promise<void> {
    this.running ??= this.loop().then(() => this.stopping);
    return this.running;
  }

  /** Whether this replica leads: it holds the Lease and renewed it within the renew deadline. */
  isLeader(): boolean {
    return this.leading && performance.now() - this.renewedAt < this.renewDeadlineMs;
  }

  /**
   * Stops trying and renewing; a leader calls `onStoppedLeading` first. When `release` (default true)
   * and this replica holds the Lease, it gives it up at once (holder cleared, as client-go's
   * `ReleaseOnCancel`) so another replica takes over without waiting for the lease to expire; without
   * it the Lease runs out as if this replica had crashed.
   */
  stop(opts: { release?: boolean } = {}): Promise<void> {
    this.stopping ??= this.shutDown(opts.release ?? true);
    return this.stopping;
  }

  private async loop(): Promise<void> {
    this.log.info('trying to acquire the leader lease');
    while (!this.halted && !this.leading) {
      const sentAt = performance.now();
      if (await this.tryOnce()) this.startLeading(sentAt);
      else await this.sleep(this.retryMs * (1 + Math.random() * JITTER_FACTOR));
    }
    while (!this.halted) {
      await this.sleep(this.retryMs);
      if (this.halted) break;
      const sentAt = performance.now();
      if (await this.tryOnce()) this.renewed(sentAt);
      else if (this.observed && this.observed.record.holderIdentity !== this.opts.identity) this.lose('another replica holds the leader lease');
    }
  }

  private async shutDown(release: boolean): Promise<void> {
    const wasLeading = this.leading;
    this.halt();
    this.stopLeading('stopped');
    if (!release) return;
    const acquired = await this.settleAttempt();
    if (wasLeading || acquired) await this.release();
  }

  /** One attempt to acquire or renew, abandoned (as failed) if the elector halts meanwhile. */
  private tryOnce(): Promise<boolean> {
    this.attempt = this.tryAcquireOrRenew().catch((err: unknown) => {
      this.log.warn({ err: errorText(err) }, 'leader lease attempt failed');
      return false;
    });
    return this.untilHalted(this.attempt, false);
  }

  /**
   * client-go's `tryAcquireOrRenew`: renews the Lease last written straight away when leading; else
   * reads it, creates it when missing, and takes it when free or expired by this replica's clock.
   */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const time = new V1MicroTime();
    if (this.leading && this.lease && this.observed && observedValid(this.observed, performance.now())) {
      try {
        await this.replace(renewal(this.observed.record, this.opts.identity, this.leaseSeconds, time));
        return true;
      } catch (err) {
        this.log.debug({ err: errorText(err) }, 'renewing the leader lease without reading it failed; reading it');
      }
    }

    let current: V1Lease;
    try {
      current = await this.api.readNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      return this.create(created(this.opts.identity, this.leaseSeconds, time));
    }
    this.lease = current;
    const record = recordOf(current.spec);
    this.observe(observe(this.observed, record, JSON.stringify(current.spec ?? {}), performance.now()));
    const next = nextRecord(record, this.observed, this.opts.identity, this.leaseSeconds, performance.now(), time);
    if (next === undefined || this.halted) return false;
    try {
      await this.replace(next);
      return true;
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      this.log.debug('the leader lease changed while taking it; trying again next period');
      return false;
    }
  }

  /** Creates the missing Lease held by this replica; a 409 means another replica created it first. */
  private async create(record: LeaseRecord): Promise<boolean> {
    if (this.halted) return false;
    try {
      this.lease = await this.api.createNamespacedLease({
        namespace: this.opts.namespace,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.opts.name, namespace: this.opts.namespace }, spec: specOf(record) },
      });
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      this.log.debug('another replica created the leader lease first');
      return false;
    }
    this.observeWritten(record);
    return true;
  }

  /** Replaces the Lease last seen with `record`, conditional on its `resourceVersion` (a 409 if it changed since). */
  private async replace(record: LeaseRecord): Promise<void> {
    this.lease = await this.api.replaceNamespacedLease({
      name: this.opts.name,
      namespace: this.opts.namespace,
      body: { ...this.lease, spec: specOf(record) },
    });
    this.observeWritten(record);
  }

  /** client-go's `tryRelease`: clears the holder if this replica still holds the Lease, retrying on conflicts until the renew deadline. */
  private async release(): Promise<void> {
    const giveUpAt = performance.now() + this.renewDeadlineMs;
    while (performance.now() < giveUpAt) {
      try {
        const current = await this.api.readNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace });
        const record = recordOf(current.spec);
        if (record.holderIdentity !== this.opts.identity) return;
        await this.api.replaceNamespacedLease({
          name: this.opts.name,
          namespace: this.opts.namespace,
          body: { ...current, spec: specOf(released(record, new V1MicroTime())) },
        });
        this.log.info('released the leader lease');
        return;
      } catch (err) {
        if (isStatus(err, 409)) continue;
        this.log.warn({ err: errorText(err) }, 'could not release the leader lease; it will expire');
        return;
      }
    }
  }

  /** Keeps the Lease as this replica now sees it (see leaseDecision.observe), and logs each new holder once. */
  private observe(observation: Observation<V1MicroTime>): void {
    this.observed = observation;
    const holder = observation.record.holderIdentity;
    if (holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      if (holder) this.log.info({ leader: holder }, 'new leader observed');
    }
  }

  /** A record this replica wrote: its expiry counts from now; the spec last read stays what a next read is compared with. */
  private observeWritten(record: LeaseRecord): void {
    this.observe({ record, at: performance.now(), raw: this.observed?.raw ?? '' });
  }

  private startLeading(sentAt: number): void {
    this.leading = true;
    this.renewed(sentAt);
    this.opts.metrics?.setLeader(this.opts.name, true);
    this.log.info('acquired the leader lease');
    try {
      this.opts.onStartedLeading();
    } catch (err) {
      this.log.error({ err: errorText(err) }, 'onStartedLeading failed');
    }
  }

  /** A renewal sent at `sentAt` succeeded: the renew deadline counts from then (before the server applied it, so never late). */
  private renewed(sentAt: number): void {
    if (!this.leading || this.halted) return;
    this.renewedAt = sentAt;
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.lose('could not renew the leader lease within the renew deadline'), sentAt + this.renewDeadlineMs - performance.now());
  }

  private lose(reason: string): void {
    if (!this.leading) return;
    this.log.warn(`lost the leader lease: ${reason}`);
    this.halt();
    this.stopLeading('lost');
  }

  private stopLeading(how: 'lost' | 'stopped'): void {
    clearTimeout(this.deadline);
    if (!this.leading) return;
    this.leading = false;
    this.opts.metrics?.setLeader(this.opts.name, false);
    if (how === 'stopped') this.log.info('stopped leading');
    try {
      this.opts.onStoppedLeading();
    } catch (err) {
      this.log.error({ err: errorText(err) }, 'onStoppedLeading failed');
    }
  }

  private halt(): void {
    this.halted = true;
    this.wake?.();
  }

  /** Waits for the attempt under way, if any, up to the renew deadline; whether it took the Lease. */
  private async settleAttempt(): Promise<boolean> {
    if (!this.attempt) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.renewDeadlineMs)));
    try {
      return await Promise.race([this.attempt, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.untilHalted(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), undefined);
    } finally {
      clearTimeout(timer);
    }
  }

  /** `promise`, or `whenHalted` as soon as the elector halts. */
  private untilHalted<T>(promise: Promise<T>, whenHalted: T): Promise<T> {
    if (this.halted) return Promise.resolve(whenHalted);
    return new Promise<T>((resolve) => {
      const wake = () => resolve(whenHalted);
      this.wake = wake;
      void promise.then(resolve, () => resolve(whenHalted)).finally(() => {
        if (this.wake === wake) this.wake = undefined;
      });
    });
  }
}

function specOf(record: LeaseRecord): V1LeaseSpec {
  return { ...record };
}

/** The record of a Lease's spec; the API returns MicroTimes as strings, made Dates again here. */
function recordOf(spec: V1LeaseSpec | undefined): LeaseRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: microTime(spec?.acquireTime),
    renewTime: microTime(spec?.renewTime),
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
}

function microTime(value: Date | string | undefined): V1MicroTime | undefined {
  if (value === undefined) return undefined;
  const time = new V1MicroTime(value);
  return Number.isNaN(time.getTime()) ? undefined : time;
}

function isStatus(err: unknown, code: number): boolean {
  return err instanceof ApiException && err.code === code;
}

function errorText(err: unknown): string {
  if (err instanceof ApiException) return `HTTP ${err.code}: ${typeof err.body === 'string' ? err.body : JSON.stringify(err.body)}`;
  return err instanceof Error ? err.message : String(err);
}

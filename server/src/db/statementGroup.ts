/**
 * Grouping of concurrent calls into shared statements, the way a group commit does: a call goes out at
 * once when no statement of the group is in flight; calls arriving while one is in flight wait, and go
 * out together when it returns (or beside it, once enough of them wait). Under load this keeps the
 * database's per-statement costs, and the driver's and the kernel's per-query costs (on small
 * machines the larger part), from being paid once per request; without load it adds no wait.
 */

/** A call waiting for its statement. */
export interface Pending<I, O> {
  item: I;
  resolve(result: O): void;
  reject(err: unknown): void;
}

export interface GroupOptions {
  /** Statements in flight at once, at most. */
  maxInFlight: number;
  /** Calls that must be waiting before another statement goes out beside those in flight. */
  nextStatementAt: number;
  /** Calls per statement at most; a longer queue goes out as several statements. */
  maxBatch: number;
}

export class StatementGroup<I, O> {
  private readonly queue: Pending<I, O>[] = [];
  private inFlight = 0;
  private readonly drained: (() => void)[] = [];

  /** `send` runs one statement for the batch and settles every call of it (it must not throw). */
  constructor(
    private readonly send: (batch: Pending<I, O>[]) => Promise<void>,
    private readonly opts: GroupOptions,
  ) {}

  call(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Resolves once every call made so far has settled. */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private pump(): void {
    const { maxInFlight, nextStatementAt, maxBatch } = this.opts;
    while (this.queue.length > 0 && (this.inFlight === 0 || (this.inFlight < maxInFlight && this.queue.length >= nextStatementAt))) {
      const batch = this.queue.splice(0, maxBatch);
      this.inFlight++;
      void this.send(batch)
        .catch((err) => batch.forEach((p) => p.reject(err)))
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
    if (this.inFlight === 0 && this.queue.length === 0) for (const done of this.drained.splice(0)) done();
  }
}

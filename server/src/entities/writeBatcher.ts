/**
 * Group commit for single-aspect writes made outside a transaction (the hot path: `POST` of one
 * aspect). A write goes out at once when no statement of the batcher is in flight; writes arriving
 * while one is wait, and go out together when it returns (or beside it, once enough of them wait):
 * one statement, one commit and one round trip for all of them. Under load this is what keeps the
 * database's per-statement and per-commit costs, and the driver's per-query costs, from being paid
 * once per request.
 *
 * Each write still succeeds or fails on its own: a failed CREATE precondition is reported per row,
 * and when a batch fails as a whole (a lost connection, a deadlock with another transaction) its
 * writes are run again one by one. A write's promise settles only after its batch committed.
 */
import { SvcError } from '../errors.ts';
import type { Pool } from '../db/pool.ts';
import { compareUrns } from '../db/locks.ts';
import { parseWritten, writeAspect, writeAspects, type AspectWrite, type BatchOutcome, type Written } from './aspectStore.ts';

interface Queued {
  write: AspectWrite;
  resolve(written: Written): void;
  reject(err: unknown): void;
}

/** Statements in flight at once, at most. */
const MAX_IN_FLIGHT = 2;
/**
 * Writes that must be waiting before a second statement goes out beside the one in flight: a second
 * statement pays its own round trip and commit, which only a batch of some size is worth. On the
 * write-path benchmark (concurrency 16) 8 made ratios to raw pg of 0.60–0.63, against 0.48–0.55 for 4
 * (two statements, small batches), 0.52–0.54 for 16 and 0.51–0.57 for one statement at a time.
 */
const SECOND_STATEMENT_AT = 8;
/** Rows per statement at most; a longer queue is sent as several batches. */
const MAX_BATCH = 64;

/** What the batcher did since it started (exported as metrics). */
export interface WriteBatchStats {
  /** Writes settled. */
  writes: number;
  /** Statements sent: a lone write or a batch is one; a batch's fallback adds one per write. */
  statements: number;
  /** Batches that failed as a whole and were run again one by one. */
  fallbacks: number;
}

export class WriteBatcher {
  readonly stats: WriteBatchStats = { writes: 0, statements: 0, fallbacks: 0 };
  private readonly queue: Queued[] = [];
  private inFlight = 0;
  private readonly drained: (() => void)[] = [];

  constructor(private readonly pool: Pool) {}

  write(w: AspectWrite): Promise<Written> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write: w, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && (this.inFlight === 0 || (this.inFlight < MAX_IN_FLIGHT && this.queue.length >= SECOND_STATEMENT_AT))) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
    if (this.inFlight === 0 && this.queue.length === 0) for (const done of this.drained.splice(0)) done();
  }

  /**
   * Resolves once every write queued so far has settled (a stopping server calls it before it closes
   * the pool: a write whose client went away is still committed, not cut off).
   */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private async send(batch: Queued[]): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0]!);
    // Lock order, as every multi-entity write of svc takes its entities' locks; the sort is stable, so
    // the writes of one URN keep their arrival order.
    batch.sort((a, b) => compareUrns(a.write.urn, b.write.urn));
    let outcomes: BatchOutcome[];
    this.stats.statements++;
    try {
      outcomes = await writeAspects(this.pool, batch.map((q) => q.write));
    } catch {
      // Nothing of the batch was written: each write runs alone, to succeed or fail on its own.
      this.stats.fallbacks++;
      await Promise.all(batch.map((q) => this.sendAlone(q)));
      return;
    }
    this.stats.writes += batch.length;
    batch.forEach((q, i) => {
      const outcome = outcomes[i]!;
      if (outcome.startsWith('precondition:')) q.reject(new SvcError('PRECONDITION', outcome.slice('precondition:'.length)));
      else q.resolve(parseWritten(outcome));
    });
  }

  private async sendAlone(q: Queued): Promise<void> {
    this.stats.statements++;
    this.stats.writes++;
    try {
      q.resolve(await writeAspect(this.pool, q.write));
    } catch (err) {
      q.reject(err);
    }
  }
}

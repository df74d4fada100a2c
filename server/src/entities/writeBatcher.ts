/**
 * Group commit for single-aspect writes made outside a transaction (the hot path: `POST` of one
 * aspect): writes made while a statement is in flight go out together (see db/statementGroup.ts), one
 * statement, one commit and one round trip for all of them.
 *
 * Each write still succeeds or fails on its own: a failed CREATE precondition or a stale checked write
 * (see writeStatement.ts) is reported per row, and when a batch fails as a whole (a lost connection, a
 * deadlock with another transaction) its writes are run again one by one. A write's promise settles
 * only after its batch committed.
 */
import { staleWrite, type Pool } from '../db/pool.ts';
import { compareUrns } from '../db/locks.ts';
import { StatementGroup, type Pending } from '../db/statementGroup.ts';
import { MAX_ROWS_PER_STATEMENT, parseWritten, preconditionFailed, writeAspect, writeAspects, type AspectWrite, type BatchOutcome, type Written } from './writeStatement.ts';

type Queued = Pending<AspectWrite, Written>;

/**
 * Two statements in flight at most; a second goes out beside the first once 8 writes wait (a second
 * statement pays its own round trip and commit, which only a batch of some size is worth). On the
 * write-path benchmark (concurrency 16) 8 made ratios to raw pg of 0.60–0.63, against 0.48–0.55 for 4
 * (two statements, small batches), 0.52–0.54 for 16 and 0.51–0.57 for one statement at a time.
 */
const GROUPING = { maxInFlight: 2, nextStatementAt: 8, maxBatch: MAX_ROWS_PER_STATEMENT };

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
  private readonly group = new StatementGroup<AspectWrite, Written>((batch) => this.send(batch), GROUPING);

  constructor(private readonly pool: Pool) {}

  write(w: AspectWrite): Promise<Written> {
    return this.group.call(w);
  }

  /**
   * Resolves once every write queued so far has settled (a stopping server calls it before it closes
   * the pool: a write whose client went away is still committed, not cut off).
   */
  drain(): Promise<void> {
    return this.group.drain();
  }

  private async send(batch: Queued[]): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0]!);
    // Lock order, as every multi-entity write of svc takes its entities' locks; the sort is stable, so
    // the writes of one URN keep their arrival order.
    batch.sort((a, b) => compareUrns(a.item.urn, b.item.urn));
    let outcomes: BatchOutcome[];
    this.stats.statements++;
    try {
      outcomes = await writeAspects(this.pool, batch.map((q) => q.item));
    } catch {
      // Nothing of the batch was written: each write runs alone, to succeed or fail on its own.
      this.stats.fallbacks++;
      await Promise.all(batch.map((q) => this.sendAlone(q)));
      return;
    }
    this.stats.writes += batch.length;
    batch.forEach((q, i) => {
      const outcome = outcomes[i]!;
      if (outcome.startsWith('precondition:')) q.reject(preconditionFailed(outcome.slice('precondition:'.length)));
      else if (outcome.startsWith('stale:')) q.reject(staleWrite(outcome.slice('stale:'.length)));
      else q.resolve(parseWritten(outcome));
    });
  }

  private async sendAlone(q: Queued): Promise<void> {
    this.stats.statements++;
    this.stats.writes++;
    try {
      q.resolve(await writeAspect(this.pool, q.item));
    } catch (err) {
      q.reject(err);
    }
  }
}

/**
 * Whether writes to entities this server has kept nothing of are prepared from a guess of what a read
 * would find (SpeculativeState.guess) rather than from a read: while most guesses hold. A guess found
 * wrong costs its write a refused row and a read after all, so guessing stops while more than half of
 * the recent ones were wrong (e.g. a server started on a catalog that holds values already, whose
 * first write to each entity finds a row it did not guess); one in {@link PROBE} is still tried then,
 * so that guessing resumes once they hold again.
 */

/** Guesses counted before the counts are halved (so that recent ones weigh most). */
const WINDOW = 512;
/** While guesses mostly fail, one write in this many still guesses. */
const PROBE = 32;
/** Misses forgiven at the start, before there is a record to go by. */
const GRACE = 8;

export class WriteGuesses {
  private tried = 0;
  private missed = 0;
  private skipped = 0;

  /** Whether the next write without a kept row may be prepared from a guess. */
  allowed(): boolean {
    if (this.missed * 2 <= this.tried + GRACE) return true;
    return ++this.skipped % PROBE === 0;
  }

  /** A write was prepared from a guess. */
  guessed(): void {
    if (++this.tried < WINDOW) return;
    this.tried /= 2;
    this.missed /= 2;
  }

  /** A write prepared from a guess was refused by its statement: the guess was wrong. */
  wrong(): void {
    this.missed++;
  }
}

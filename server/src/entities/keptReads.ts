/**
 * What the latest optimistic write of an aspect left, kept so that the entity's next write of it can
 * start from there instead of reading: the row as the write stored it (its token, see
 * aspectStore.ReadForWrite) and the context its hook would read right after (AspectHook.contextAfter).
 * An ingestion run that gives the same aspects again (the usual case: most of its values are
 * unchanged) then makes one statement per write, not two.
 *
 * Nothing kept is trusted: the write statement checks the row and every guard against the database,
 * as it checks what a read found, so a write that another server, a delete or a cleanup made since
 * fails that check and is prepared again from a fresh read (and what was kept is dropped).
 *
 * An aspect that another writer changed behind a kept row (another server, another worker process
 * of this one) is not kept again: such an entity's writes would otherwise pay for a refused statement
 * as often as they are served. It is read for each write, as without keeping.
 *
 * Bounded by the size of the rows' text (the least recently used go first, a generation at a time).
 */
import type { ReadForWrite } from './aspectStore.ts';

export type KeptRead = ReadForWrite & { context: unknown };

/** What an aspect changed behind a kept row holds instead (counted as this many characters). */
const CONTENDED = { token: null, previous: undefined, context: undefined } satisfies KeptRead;
const CONTENDED_SIZE = 64;

/** Characters of kept rows' text at most (about 64 MB of memory with the values they hold). */
const MAX_CHARS = 16 * 1024 * 1024;

/** The rows of one generation and the characters they count. */
interface Generation {
  rows: Map<string, KeptRead>;
  chars: number;
}

const generation = (): Generation => ({ rows: new Map(), chars: 0 });

/**
 * Kept in two generations, each up to half the bound: when the newer is full it becomes the older and
 * the older is dropped; a row taken from the older moves to the newer. (Evicting the least recently
 * used row one at a time from a Map walks the entries deleted before it: once the bound was reached,
 * a write cost 8 µs at 13,000 rows and 27 µs at 100,000.)
 */
export class KeptReads {
  private newer = generation();
  private older = generation();

  constructor(private readonly maxChars = MAX_CHARS) {}

  /** What the aspect's last write left, if kept (and then kept as most recently used). */
  take(urn: string, aspect: string): KeptRead | undefined {
    const key = `${aspect} ${urn}`;
    let kept = this.newer.rows.get(key);
    if (kept === undefined) {
      kept = this.older.rows.get(key);
      if (kept !== undefined) {
        remove(this.older, key);
        this.add(key, kept);
      }
    }
    return kept === CONTENDED ? undefined : kept;
  }

  /** Whether anything is held for the aspect: what a write left, or the mark of a contended aspect. */
  holds(urn: string, aspect: string): boolean {
    const key = `${aspect} ${urn}`;
    return this.newer.rows.has(key) || this.older.rows.has(key);
  }

  keep(urn: string, aspect: string, read: KeptRead): void {
    const key = `${aspect} ${urn}`;
    if ((this.newer.rows.get(key) ?? this.older.rows.get(key)) === CONTENDED) return;
    this.put(key, read);
  }

  /** The aspect was changed by another writer than this server's checked writes: it is not kept from now on. */
  contended(urn: string, aspect: string): void {
    this.put(`${aspect} ${urn}`, CONTENDED);
  }

  forget(urn: string, aspect: string): void {
    const key = `${aspect} ${urn}`;
    remove(this.newer, key);
    remove(this.older, key);
  }

  get size(): number {
    return this.newer.rows.size + this.older.rows.size;
  }

  private put(key: string, read: KeptRead): void {
    remove(this.newer, key);
    remove(this.older, key);
    this.add(key, read);
  }

  private add(key: string, read: KeptRead): void {
    if (this.newer.chars + sizeOf(read) > this.maxChars / 2 && this.newer.rows.size > 0) {
      this.older = this.newer;
      this.newer = generation();
    }
    this.newer.rows.set(key, read);
    this.newer.chars += sizeOf(read);
  }
}

function remove(g: Generation, key: string): void {
  const kept = g.rows.get(key);
  if (kept === undefined) return;
  g.rows.delete(key);
  g.chars -= sizeOf(kept);
}

const sizeOf = (read: KeptRead) => (read === CONTENDED ? CONTENDED_SIZE : (read.token?.length ?? 0));

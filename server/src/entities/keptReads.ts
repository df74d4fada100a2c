/**
 * What the latest checked write of an aspect left, kept so that the entity's next write of it can
 * start from there instead of reading: the row as the write stored it (its token, see
 * aspectStore.ReadForWrite) and the state its hook would read right after (SpeculativeState.stateAfter).
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
import { RecentCache } from '../shared/recentCache.ts';
import type { ReadForWrite } from './aspectStore.ts';

export type KeptRead = ReadForWrite & { state: unknown };

/** What an aspect changed behind a kept row holds instead (counted as this many characters). */
const CONTENDED = { token: null, previous: undefined, state: undefined } satisfies KeptRead;
const CONTENDED_SIZE = 64;

/** Characters of kept rows' text at most (about 64 MB of memory with the values they hold). */
const MAX_CHARS = 16 * 1024 * 1024;

/** Kept as used lately, up to the bound (see recentCache.ts). */
export class KeptReads {
  private readonly rows: RecentCache<KeptRead>;

  constructor(maxChars = MAX_CHARS) {
    this.rows = new RecentCache(maxChars, sizeOf);
  }

  /** What the aspect's last write left, if kept (and then kept as most recently used). */
  take(urn: string, aspect: string): KeptRead | undefined {
    const kept = this.rows.get(`${aspect} ${urn}`);
    return kept === CONTENDED ? undefined : kept;
  }

  /** Whether anything is held for the aspect: what a write left, or the mark of a contended aspect. */
  holds(urn: string, aspect: string): boolean {
    return this.rows.has(`${aspect} ${urn}`);
  }

  keep(urn: string, aspect: string, read: KeptRead): void {
    const key = `${aspect} ${urn}`;
    if (this.rows.peek(key) === CONTENDED) return;
    this.rows.set(key, read);
  }

  /** The aspect was changed by another writer than this server's checked writes: it is not kept from now on. */
  contended(urn: string, aspect: string): void {
    this.rows.set(`${aspect} ${urn}`, CONTENDED);
  }

  forget(urn: string, aspect: string): void {
    this.rows.delete(`${aspect} ${urn}`);
  }

  get size(): number {
    return this.rows.size;
  }
}

const sizeOf = (read: KeptRead) => (read === CONTENDED ? CONTENDED_SIZE : (read.token?.length ?? 0));

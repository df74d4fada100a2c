/**
 * Extension points of the entity core: a domain module (structured properties, later search indexing)
 * attaches rules to one aspect without the core knowing them. A write of an aspect that has a hook
 * runs in a transaction under the entity's lock, so the hook sees the stored value it replaces; or,
 * for an `optimistic` hook, without locks, checked by the write statement (see aspectStore.ts).
 */
import type { Db } from '../db/pool.ts';
import type { Principal } from '../auth/authorize.ts';
import type { AspectSpec, EntityUrn } from '../registry/registry.ts';
import type { Guard, ReadForWrite, StoredAspect } from './aspectStore.ts';
import type { PatchOperation } from './jsonPatch.ts';

/**
 * How a write came: a full `set` of the aspect, a `patch` (already applied to the stored value, so
 * `value` is the result and `patch` what the caller addressed), or a `refresh` (the stored value
 * written again so the aspect's rules apply to it anew, e.g. to drop values of a deleted property).
 */
export type WriteKind = 'set' | 'patch' | 'refresh';

/** A write as its hook sees it: before any entity lock, only what the caller sent. */
export interface WriteIntent {
  target: EntityUrn;
  kind: WriteKind;
  /** For a set: the value given. */
  value?: unknown;
  /** For a patch: its operations. */
  patch?: PatchOperation[];
}

/** A write as its hook sees it under the entity's lock. */
export interface PendingWrite {
  target: EntityUrn;
  aspect: AspectSpec;
  kind: WriteKind;
  /**
   * The value to write: as given (set), the patch applied to the stored value as the hook's
   * `patchBase` shows it (patch), or the stored value (refresh).
   */
  value: unknown;
  patch?: PatchOperation[];
  /** The stored latest value it replaces, as stored (before any read filtering). */
  previous: StoredAspect | undefined;
  principal: Principal;
  /** Whether an earlier write of the same request creates the entity (it is not stored yet). */
  entityCreatedHere: boolean;
}

/** What a hook's `prepare` decided: the value to store, and what its `afterWrite` needs. */
export interface Prepared<Plan> {
  value: unknown;
  plan: Plan;
  /** Rows the decision relied on: the write statement checks them under lock (see aspectStore.ts). */
  guards?: Guard[];
  /** What a read would return right after the write (it saves reading back); undefined: the read filters apply. */
  shown?: unknown;
  /** Prepared without locks, the write must go under locks instead (e.g. its afterWrite has work to do). */
  needsLock?: boolean;
}

/**
 * The rules of one aspect. `Plan` carries what `prepare` loaded to `afterWrite`; `Context` what an
 * optimistic hook's `readForWrite` loaded to `prepare`.
 */
export interface AspectHook<Plan = unknown, Context = unknown> {
  readonly aspect: string;
  /**
   * `prepare` may run without the entity's lock: what it relied on is in its guards and the aspect's
   * row as read, which the write statement checks; a write that finds them changed is prepared again.
   * Such a hook's `afterWrite` runs only for writes made under locks, which its `prepare` asks for
   * with `needsLock` when there is work for it.
   */
  readonly optimistic?: boolean;
  /**
   * Once per write request, in its transaction, after the request's entity locks: shared locks on what
   * the writes reference, taken in lock order (see db/locks.ts).
   */
  lockReferenced?(writes: WriteIntent[], tx: Db): Promise<void>;
  /**
   * For optimistic writes: reads each one's stored row of the aspect and what `prepare` needs, for
   * several writes in one round trip (the core groups the reads of concurrent writes). Without it the
   * core reads the row alone and `prepare` reads what it needs.
   */
  readForWrite?(ws: WriteIntent[], db: Db): Promise<(ReadForWrite & { context: Context })[]>;
  /**
   * For a `readForWrite` hook: the context a read right after this write would find, were it stored as
   * prepared (`context`: what the write was prepared with). With it the core keeps what each write left
   * (see keptReads.ts), and the entity's next write is prepared from that without reading, when
   * {@link contextFor} can serve it. Everything `prepare` decides on must then be in its guards or
   * in the aspect's row, which the write statement checks, as it must for a context read.
   */
  contextAfter?(w: PendingWrite, context: Context): Context;
  /**
   * The context a new write is prepared from, given what the entity's last write left: that one when
   * it holds what the write needs (e.g. the state of every property it names), or that one with what
   * it lacks from what the hook knows otherwise (e.g. the state of a property named for the first time
   * on this entity, as last read); undefined when the write must read.
   */
  contextFor?(w: WriteIntent, context: Context): Context | undefined;
  /**
   * For a `readForWrite` hook: what a read would most likely find for a write to an entity this server
   * has kept nothing of (e.g. its first value: no row yet, its key as svc writes it, the properties it
   * names as last read), or undefined when that cannot be told without reading. The core may prepare
   * the write from it instead of reading; like a kept row it is never trusted (the write statement
   * checks the row and every guard), and a guess found wrong is prepared again from a read.
   */
  guessForWrite?(w: WriteIntent): (ReadForWrite & { context: Context }) | undefined;
  /**
   * The stored value a patch (or a derived update) applies to, when that is not the stored value
   * itself: e.g. without the values reads hide, so that a patch acts on what its caller can see.
   * `prepare` then decides what of the stored value the result keeps. `context`: as for `prepare`.
   */
  patchBase?(target: EntityUrn, stored: StoredAspect, db: Db, context?: Context): Promise<unknown>;
  /**
   * Checks a write (throwing SvcError) and returns the value to store; under the entity's lock unless
   * optimistic. `context`: what this hook's `readForWrite` read, when the core called it.
   */
  prepare(w: PendingWrite, tx: Db, context?: Context): Promise<Prepared<Plan>>;
  /** After the aspect was stored, in the same transaction (side tables, tasks). */
  afterWrite?(w: PendingWrite, stored: unknown, plan: Plan, tx: Db): Promise<void>;
  /**
   * What `filterRead` needs, as SQL over `read` (the rows of this aspect being read: urn, aspect,
   * metadata) returning text columns `kind, a, b, c`: entity reads run it in the statement that reads
   * the aspects (one round trip, one snapshot) and hand its rows to `filterRead` as `context`.
   */
  readonly readContextSql?: string;
  /** Rewrites values before any read returns them (e.g. hides values); mutates `aspects` in place. */
  filterRead?(aspects: StoredAspect[], db: Db, context?: { kind: string; a: string; b: string; c: string | null }[]): Promise<void>;
  /** Deleting this aspect removes data beyond it (e.g. a property's values everywhere): a hard delete. */
  readonly deletesMore?: boolean;
  /**
   * In the transaction deleting this aspect, under the entity's lock; `withEntity` when the whole
   * entity goes. May refuse (throwing SvcError).
   */
  onDelete?(target: EntityUrn, tx: Db, withEntity: boolean): Promise<void>;
}

const NO_HOOKS: readonly AspectHook[] = Object.freeze([]);

/** The hooks attached to the core, and those of each aspect (kept as hooks are added: every write asks). */
export class AspectHooks {
  readonly all: AspectHook[] = [];
  private readonly byAspect = new Map<string, AspectHook[]>();

  add(hook: AspectHook): void {
    this.all.push(hook);
    this.byAspect.set(hook.aspect, [...this.of(hook.aspect), hook]);
  }

  of(aspect: string): readonly AspectHook[] {
    return this.byAspect.get(aspect) ?? NO_HOOKS;
  }

  has(aspect: string): boolean {
    return this.byAspect.has(aspect);
  }
}

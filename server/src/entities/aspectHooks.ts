/**
 * Extension points of the entity core: a domain module (structured properties) attaches the rules of
 * one aspect without the core knowing them. A hook speaks the domain: the state a write is checked
 * against (`readState`), the check of a pending value against it (`check`), the value a patch applies
 * to (`patchBase`), what reads show (`show`), and what follows a write or a delete (`afterWrite`,
 * `onDelete`). How a write gets its state and whether it takes locks is the core's own strategy
 * (checkedWrites.ts, lockedWrites.ts); `speculative` gathers what some of those strategies need beside.
 */
import type { Db } from '../db/pool.ts';
import type { Principal } from '../auth/authorize.ts';
import type { AspectSpec, EntityUrn } from '../registry/registry.ts';
import type { ReadForWrite, StoredAspect } from './aspectStore.ts';
import type { Guard } from './writeStatement.ts';
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

/** A write as its hook checks it: the value it would store, and the stored row it replaces. */
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

/** A write's starting point: the aspect's stored row (see aspectStore.ReadForWrite) and the state its rules check it against. */
export type WriteState<State> = ReadForWrite & { state: State };

/** What a hook's `check` decided. */
export interface Checked {
  /** The value to store. */
  value: unknown;
  /** Rows the decision relied on: the write statement checks they are still as read (see writeStatement.ts). */
  guards?: Guard[];
  /** What a read would return right after the write (it saves reading back); undefined: the read rules apply. */
  shown?: unknown;
  /** The write must be made under locks (e.g. what follows it, its `afterWrite`, has work to do). */
  needsLock?: boolean;
}

/** A row of what a hook's `show` reads beside the aspects (see {@link ShowRule.sql}). */
export interface ShowStateRow {
  kind: string;
  a: string;
  b: string;
  c: string | null;
}

/** What reads show of an aspect: its rules may hide values (e.g. of a soft-deleted property). */
export interface ShowRule {
  /**
   * What `apply` needs, as SQL over `read` (the rows of this aspect being read: urn, aspect, metadata)
   * returning text columns `kind, a, b, c`: entity reads run it in the statement that reads the aspects
   * (one round trip, one snapshot) and hand its rows to `apply`.
   */
  readonly sql?: string;
  /** Rewrites values before any read returns them; mutates `aspects` in place. `rows`: what `sql` read, when it ran. */
  apply(aspects: StoredAspect[], db: Db, rows?: ShowStateRow[]): Promise<void>;
}

/**
 * Lets the core start a write from something other than a read of its state (see checkedWrites.ts,
 * and Config.writeStrategy, which switches each source on or off). Whatever a write starts from is
 * checked by its statement as a read is, so these may be wrong, never unsafe: everything `check`
 * decides on must be in its guards or in the aspect's row.
 */
export interface SpeculativeState<State> {
  /** The state a read right after this write would find, were it stored as checked (`state`: what it was checked against). */
  stateAfter(w: PendingWrite, state: State): State;
  /**
   * The state a new write starts from, given what the entity's last write left: that one when it
   * holds what the write needs (e.g. the state of every property it names), or that one completed from
   * what the hook knows otherwise; undefined when the write must read.
   */
  stateFor(w: WriteIntent, kept: State): State | undefined;
  /**
   * What a read would most likely find for a write to an entity nothing is kept of (e.g. its first
   * value: no row yet, the properties it names as last read), or undefined when that cannot be told.
   */
  guess(w: WriteIntent): WriteState<State> | undefined;
}

/**
 * The rules of one aspect. `State` is what they check a write against (e.g. the definitions and
 * statuses of the properties a value names), read by `readState`.
 */
export interface AspectHook<State = unknown> {
  readonly aspect: string;
  /**
   * Reads each write's stored row of the aspect and the state its rules need, for several writes at
   * once (the core groups the reads of concurrent writes), without locks: the write statement checks
   * the row and the guards `check` returns, so a write whose state changed meanwhile is checked again.
   */
  readState(ws: WriteIntent[], db: Db): Promise<WriteState<State>[]>;
  /**
   * Once per write request made under locks, in its transaction, after the request's entity locks:
   * shared locks on what the writes reference, taken in lock order (see db/locks.ts).
   */
  lockReferenced?(writes: WriteIntent[], tx: Db): Promise<void>;
  /**
   * The stored value a patch (or a derived update) applies to, when that is not the stored value
   * itself: e.g. without the values reads hide, so that a patch acts on what its caller can see.
   * `check` then decides what of the stored value the result keeps. `state`: as for `check`.
   */
  patchBase?(target: EntityUrn, stored: StoredAspect, db: Db, state?: State): Promise<unknown>;
  /**
   * Checks a pending value against the state (throwing SvcError) and returns the value to store.
   * `state`: what `readState` read for this write; undefined under locks, where `check` reads what it
   * needs in the write's transaction (`db`).
   */
  check(w: PendingWrite, db: Db, state?: State): Promise<Checked>;
  /** What follows a write made under locks, in its transaction once the aspect is stored (side tables, tasks). */
  afterWrite?(w: PendingWrite, stored: unknown, tx: Db): Promise<void>;
  /** What reads show of the aspect. */
  readonly show?: ShowRule;
  /** Deleting this aspect removes data beyond it (e.g. a property's values everywhere): a hard delete. */
  readonly deletesMore?: boolean;
  /**
   * What follows a delete, in the transaction deleting this aspect, under the entity's lock;
   * `withEntity` when the whole entity goes. May refuse (throwing SvcError).
   */
  onDelete?(target: EntityUrn, tx: Db, withEntity: boolean): Promise<void>;
  /** Sources of a write's state other than a read, for the core's strategies. */
  readonly speculative?: SpeculativeState<State>;
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

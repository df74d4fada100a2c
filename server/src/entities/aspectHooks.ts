/**
 * Extension points of the entity core: domain modules (structured properties, search indexing, …)
 * attach rules to aspects without the core knowing them. A write of an aspect that has hooks runs in
 * a transaction under the entity's lock, so a hook sees the stored value it replaces.
 */
import type { Db } from '../db/pool.ts';
import type { AspectSpec, EntityUrn } from '../registry/registry.ts';
import type { StoredAspect } from './aspectStore.ts';
import type { PatchOperation } from './jsonPatch.ts';

export interface Actor {
  urn: string;
}

/** A write about to happen: a full set, or the result of a patch. */
export interface PendingWrite {
  target: EntityUrn;
  aspect: AspectSpec;
  value: unknown;
  /** The stored latest value it replaces (before any read filtering). */
  previous: StoredAspect | undefined;
  kind: 'set' | 'patch';
  /** For a patch: its operations (what the caller addressed). */
  patch?: PatchOperation[];
  actor: Actor;
  /** What a hook's prepareWrite loaded, kept for its afterWrite (one write's lifetime). */
  scratch: Record<string, unknown>;
}

export interface AspectHook {
  /** Aspect names the write and read hooks apply to. */
  readonly aspects: readonly string[];
  /** Once per write request, in its transaction, before any entity lock (e.g. to take locks in a global order). */
  beforeWrites?(writes: { target: EntityUrn; aspect: string; value: unknown }[], tx: Db): Promise<void>;
  /** Checks a write (throwing SvcError) and returns the value to store. */
  prepareWrite?(w: PendingWrite, tx: Db): Promise<unknown>;
  /** After the aspect was stored, in the same transaction (side tables, tasks). */
  afterWrite?(w: PendingWrite, stored: unknown, tx: Db): Promise<void>;
  /** Rewrites values before any read returns them (e.g. hides values); mutates `aspects` in place. */
  filterRead?(aspects: StoredAspect[], db: Db): Promise<void>;
  /** Whether deleting this aspect removes data beyond it (e.g. a property's values everywhere): a hard delete. */
  cascades?(target: EntityUrn, aspect: string): boolean;
  /** In the transaction deleting an aspect of the entity, or the whole entity when `aspect` is undefined. */
  onDelete?(target: EntityUrn, aspect: string | undefined, tx: Db, actor: Actor): Promise<void>;
}

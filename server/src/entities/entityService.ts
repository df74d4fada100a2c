/**
 * The entity core: read, write, patch and delete aspects of registry entities. Every surface (REST,
 * GraphQL, the CLI and the operator) and every internal writer (bootstrapping, cleanups) is a thin
 * adapter over these methods; each takes the caller's principal and authorizes it here, then hands
 * the work to the module that does it: reads.ts, writes.ts (with checkedWrites.ts and
 * lockedWrites.ts) and deletes.ts.
 *
 * Every write of an aspect goes through one path, {@link WritePath.commit}, and every deletion through
 * the `delete…` methods; each reports what it did per aspect ({@link WriteResult}). What a change means
 * for the rest of svc is recorded by the database itself, in the statement that makes the change,
 * whichever path made it: triggers on `aspects` queue the entity in the search outbox and keep the
 * record of structured property assignments and of their older versions
 * (server/src/db/migrations/R__svc_search_*.sql, R__svc_record_*.sql and
 * R__svc_keep_assignment_history.sql).
 */
import { SvcError } from '../shared/errors.ts';
import type { Pool } from '../db/pool.ts';
import { authorize, SYSTEM } from '../auth/authorize.ts';
import type { Principal } from '../auth/authorize.ts';
import { registry, type EntityUrn, type EntitySpec } from '../registry/registry.ts';
import type { AspectHistory, StoredAspect, TimeRange } from './aspectStore.ts';
import type { WriteMode } from './writeStatement.ts';
import { parsePatchBody, type PatchOperation } from './jsonPatch.ts';
import { WriteBatcher, type WriteBatchStats } from './writeBatcher.ts';
import { TimeseriesPartitions } from '../timeseries/partitions.ts';
import { PostgresTimeseriesStore } from '../timeseries/postgresStore.ts';
import type { TimeseriesStore } from '../timeseries/store.ts';
import type { ScrollIds } from './scrollIds.ts';
import type { WriteStrategy } from '../config.ts';
import { AspectHooks, type AspectHook } from './aspectHooks.ts';
import { EntityReads, type EntityRecord, type ListOptions } from './reads.ts';
import { checkInputs, WritePath, type AspectInput, type Derive, type WriteResult, type WrittenAspect } from './writes.ts';
import { CheckedWrites } from './checkedWrites.ts';
import { LockedWrites } from './lockedWrites.ts';
import { EntityDeletes, timeseriesAspect } from './deletes.ts';

export type { AspectHistory, StoredAspect } from './aspectStore.ts';
export type { WriteMode, WriteOutcome } from './writeStatement.ts';
export type { EntityRecord, ListOptions } from './reads.ts';
export { MAX_PAGE } from './reads.ts';
export type { AspectInput, Derive, WriteConditions, WriteResult, WrittenAspect } from './writes.ts';
export { checkedWriteCounts, recordsOf } from './writes.ts';

export class EntityService {
  private readonly hooks = new AspectHooks();
  private readonly batcher: WriteBatcher;
  private readonly reads: EntityReads;
  private readonly checked: CheckedWrites;
  private readonly writes: WritePath;
  private readonly deletes: EntityDeletes;
  private readonly commitListeners: ((urns: string[]) => void)[] = [];
  /** Entities svc keeps itself (its data and entity types): no client writes or deletes them. */
  private readonly builtIn = new Set<string>();

  constructor(
    pool: Pool,
    scrollIds: ScrollIds,
    /** Where time series entries are read and deleted (they are written to `timeseries_entries` in both stores). */
    timeseries: TimeseriesStore = new PostgresTimeseriesStore(pool),
    /** Where the state a write's rules check comes from (see Config.writeStrategy). */
    strategy: WriteStrategy = { checked: true, grouped: true, kept: true, guess: true },
  ) {
    this.batcher = new WriteBatcher(pool);
    this.reads = new EntityReads(pool, this.hooks, timeseries, scrollIds);
    this.checked = new CheckedWrites(pool, this.hooks, this.batcher, strategy);
    const locked = new LockedWrites(pool, this.hooks, (changes) => this.checked.forget(changes));
    this.writes = new WritePath(pool, this.hooks, this.reads, new TimeseriesPartitions(pool), strategy, this.checked, locked, (urns) => this.committed(urns));
    this.deletes = new EntityDeletes(pool, this.hooks, this.reads, timeseries);
  }

  /** Marks entities as svc's own: from then on only svc itself ({@link SYSTEM}) writes or deletes them. */
  protectBuiltIn(urns: Iterable<string>): void {
    for (const urn of urns) this.builtIn.add(urn);
  }

  /** FORBIDDEN when a client's change would reach one of svc's own entities (a data or entity type). */
  private refuseBuiltIn(principal: Principal, urns: Iterable<string>): void {
    if (principal === SYSTEM || this.builtIn.size === 0) return;
    for (const urn of urns) {
      if (this.builtIn.has(urn)) {
        throw new SvcError('FORBIDDEN', `${urn} is built into svc (its data and entity types are part of every catalog): no client writes or deletes it`);
      }
    }
  }

  /** Resolves once the single-aspect writes queued so far have settled (see {@link WriteBatcher.drain}). */
  drain(): Promise<void> {
    return this.batcher.drain();
  }

  /** What the group commit of single-aspect writes did so far (see {@link WriteBatcher}). */
  get writeBatchStats(): Readonly<WriteBatchStats> {
    return this.batcher.stats;
  }

  /** Calls `listener` with the entities a write or delete changed, as soon as its transaction has committed. */
  onCommitted(listener: (urns: string[]) => void): void {
    this.commitListeners.push(listener);
  }

  private committed(urns: string[]): void {
    for (const listener of this.commitListeners) listener(urns);
  }

  /** A delete of the entity committed: what its writes left is dropped (its rows changed), and listeners told. */
  private deleted(urn: string): void {
    this.checked.forgetEntity(urn);
    this.committed([urn]);
  }

  /** Attaches a domain module's rules of one aspect (see {@link AspectHook}). */
  addHook(hook: AspectHook): void {
    this.hooks.add(hook);
    this.checked.hookAdded(hook);
  }

  /**
   * Resolves a URN given in a path under `/{entityName}/…`: the URN must parse, and its type must be
   * the path's entity type.
   */
  resolve(entityName: string, urn: string): EntityUrn {
    const spec = registry.entity(entityName);
    const target = registry.resolveUrn(urn);
    if (target.spec !== spec) {
      throw SvcError.validation([`urn ${urn} is of entity type ${target.spec.name}, but the path names ${spec.name}`]);
    }
    return target;
  }

  // ---- reads (reads.ts) -------------------------------------------------------------------------

  /** The entity with the given aspects (all when undefined); undefined when it does not exist. */
  async getEntity(principal: Principal, target: EntityUrn, aspectNames?: string[]): Promise<EntityRecord | undefined> {
    authorize(principal, 'READ');
    const [record] = await this.reads.entities(target.spec, [target.urn], aspectNames);
    return record;
  }

  /**
   * Entities of any types, in the order given, each with those of the given aspects its type has (all
   * when undefined), as reads show them; entities that do not exist are left out.
   */
  async getMany(principal: Principal, targets: EntityUrn[], aspectNames?: string[]): Promise<EntityRecord[]> {
    authorize(principal, 'READ');
    return this.reads.many(targets, aspectNames);
  }

  /**
   * Sets the version number of each versioned aspect read ({@link StoredAspect.number}, what
   * If-Version-Match takes), in one query; time series entries have none.
   */
  async numberVersions(aspects: StoredAspect[]): Promise<void> {
    await this.reads.numberVersions(aspects);
  }

  /** One version (0 = latest) of one aspect; undefined when absent. */
  async getAspect(principal: Principal, target: EntityUrn, aspectName: string, version = 0): Promise<StoredAspect | undefined> {
    authorize(principal, 'READ');
    return this.reads.aspect(target, aspectName, version);
  }

  /**
   * The versions of the given versioned aspects of an entity written from `from` until `to`, the newest
   * `limit` of each, with the version before them, as reads show them; aspects unchanged in the window
   * are left out.
   */
  async history(principal: Principal, target: EntityUrn, aspectNames: string[], from: Date, to: Date, limit: number): Promise<Map<string, AspectHistory>> {
    authorize(principal, 'READ');
    return this.reads.history(target, aspectNames, from, to, limit);
  }

  /** Whether the entity (or one of its aspects) exists; soft-deleted entities count only with `includeSoftDeleted`. */
  async exists(principal: Principal, target: EntityUrn, aspectName: string | undefined, includeSoftDeleted: boolean): Promise<boolean> {
    authorize(principal, 'READ');
    return this.reads.exists(target, aspectName, includeSoftDeleted);
  }

  /** A page of entities of one type in URN order, with a scroll id for the next page. */
  async list(principal: Principal, spec: EntitySpec, opts: ListOptions): Promise<{ entities: EntityRecord[]; scrollId: string | undefined }> {
    authorize(principal, 'READ');
    return this.reads.list(spec, opts);
  }

  // ---- writes (writes.ts) -----------------------------------------------------------------------

  /**
   * Writes aspects, all or nothing: every item is validated first (every violation reported in one
   * error), then all are written together. Returns each written aspect in input order.
   */
  async write(principal: Principal, inputs: AspectInput[], mode: WriteMode): Promise<WrittenAspect[]> {
    authorize(principal, 'UPDATE', inputs.length === 1 ? inputs[0]!.urn : undefined);
    const changes = checkInputs(inputs);
    this.refuseBuiltIn(principal, changes.map((c) => c.target.urn));
    return this.writes.set(principal, changes, mode);
  }

  /**
   * Applies a JSON Patch to the latest value of an aspect under the entity's lock (so concurrent
   * patches of one entity never lose each other's changes), as reads show it when the aspect's rules
   * say so (AspectHook.patchBase); the result is validated like a full write. A missing aspect starts
   * from its empty template (e.g. `{"properties": []}`).
   */
  async patch(principal: Principal, target: EntityUrn, aspectName: string, body: unknown): Promise<WrittenAspect> {
    authorize(principal, 'UPDATE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    return this.writes.patch(principal, target, aspectName, () => parsePatchBody(body));
  }

  /**
   * Like {@link patch}, for a change that is a function of the stored value rather than operations on
   * it (e.g. "append these entity types unless present"): `derive` gets the stored latest value, as
   * a patch sees it (undefined when there is none), and returns the new one, under the same lock or check as a patch;
   * `addressed` says what it changes in patch terms, for the aspect's rules (which assignments a
   * write names). The result is validated like a full write.
   */
  async update(principal: Principal, target: EntityUrn, aspectName: string, derive: Derive, addressed: PatchOperation[] = []): Promise<WrittenAspect> {
    authorize(principal, 'UPDATE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    return this.writes.patch(principal, target, aspectName, () => ({ ops: addressed, arrayPrimaryKeys: {}, derive }));
  }

  /**
   * Writes the stored value of an aspect of each target again, in one transaction, so that its rules
   * apply to it anew (e.g. values of a deleted structured property are dropped); nothing for a target
   * without the aspect.
   */
  async refresh(principal: Principal, targets: EntityUrn[], aspectName: string, runId: string): Promise<WriteResult[]> {
    authorize(principal, 'UPDATE', targets.length === 1 ? targets[0]!.urn : undefined);
    this.refuseBuiltIn(principal, targets.map((t) => t.urn));
    return this.writes.refresh(principal, targets, aspectName, runId);
  }

  // ---- deletes (deletes.ts) ---------------------------------------------------------------------

  /** Hard-deletes an entity: every aspect, every version, every time series entry. Missing is fine. */
  async deleteEntity(principal: Principal, target: EntityUrn): Promise<WriteResult[]> {
    authorize(principal, 'HARD_DELETE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    const results = await this.deletes.entity(target);
    this.deleted(target.urn);
    return results;
  }

  /**
   * The references other entities hold to `target` (see references.ts), as shown on reads; unless
   * `dryRun`, each is taken out of its aspect through the write path (one write per aspect, under the
   * aspect's rules). `related` lists the first `sample` of them.
   */
  async deleteReferences(principal: Principal, target: EntityUrn, dryRun: boolean, sample = 10): Promise<{ total: number; related: { relationship: string; entity: string; aspect: string }[] }> {
    authorize(principal, 'HARD_DELETE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    return this.deletes.references(target, dryRun, sample, (holder, aspect, derive, addressed) => this.update(principal, holder, aspect, derive, addressed));
  }

  /**
   * Deletes aspects (every version), all or nothing. The key aspect among them deletes the entity; for
   * a time series aspect only the latest entry goes (as DataHub).
   */
  async deleteAspects(principal: Principal, target: EntityUrn, aspectNames: string[]): Promise<WriteResult[]> {
    const aspects = aspectNames.map((n) => registry.aspect(target.spec, n));
    authorize(principal, this.deletes.isHardDelete(target, aspectNames) ? 'HARD_DELETE' : 'DELETE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    if (aspects.some((a) => a.keyOf)) return this.deleteEntity(principal, target);
    const results = await this.deletes.aspects(target, aspects);
    this.deleted(target.urn);
    return results;
  }

  /**
   * Deletes the entries of a time series aspect of an entity within `range` (both ends included, an
   * absent end open; DataHub's `/entities?action=delete` with an `aspectName`); how many there were.
   * The entity and its other aspects stay.
   */
  async deleteTimeseriesRange(principal: Principal, target: EntityUrn, aspectName: string, range: TimeRange): Promise<number> {
    const aspect = timeseriesAspect(target, aspectName);
    authorize(principal, 'HARD_DELETE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    return this.deletes.timeseriesRange(target, aspect, range);
  }
}

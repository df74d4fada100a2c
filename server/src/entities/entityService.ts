/**
 * The entity core: read, write, patch and delete aspects of registry entities. Every surface (REST,
 * and later GraphQL, the CLI and the operator) and every internal writer (bootstrapping, cleanups) is
 * a thin adapter over these methods; each takes the caller's principal and authorizes it here.
 *
 * Every write of an aspect goes through one path, {@link EntityService.commitWrites}, and every
 * deletion through the `delete…` methods; each reports what it did per aspect ({@link WriteResult}).
 * What a change means for the rest of svc is recorded by the database itself, in the statement that
 * makes the change, whichever path made it: triggers on `aspects` queue the entity in the search outbox
 * and keep the record of structured property assignments and of their older versions
 * (server/src/db/migrations/R__svc_search_*.sql, R__svc_record_*.sql and
 * R__svc_keep_assignment_history.sql).
 */
import { SvcError, Violations } from '../errors.ts';
import { inTransaction, isStaleWrite, staleWrite, type Db, type Pool } from '../db/pool.ts';
import { compareUrns, inLockOrder, lockEntity } from '../db/locks.ts';
import { authorize, SYSTEM } from '../auth/authorize.ts';
import type { Principal } from '../auth/authorize.ts';
import { registry, type AspectSpec, type EntityUrn, type EntitySpec } from '../registry/registry.ts';
import {
  aspectVersion,
  aspectVersionNumber,
  versionNumbers,
  CREATE_PRECONDITIONS,
  deleteAspectRows,
  deleteEntityRows,
  insertTimeseries,
  latestAspects,
  latestAspectsWith,
  latestMentioning,
  lockAndRead,
  readForWrite,
  scrollUrns,
  writeAspect,
  writeAspectsAtomically,
  type AspectWrite,
  type ContextRow,
  type ReadForWrite,
  type Guard,
  type StoredAspect,
  type TimeRange,
  type WriteMode,
  type WriteOutcome,
  type Written,
} from './aspectStore.ts';
import { applyPatch, parsePatchBody, type PatchOperation } from './jsonPatch.ts';
import { isRemoved } from './softDelete.ts';
import { REFERENCE_RULES, REFERRING_ASPECTS } from './references.ts';
import { WriteBatcher, type WriteBatchStats } from './writeBatcher.ts';
import { KeptReads, type KeptRead } from './keptReads.ts';
import { WriteGuesses } from './writeGuesses.ts';
import { jsonbText } from '../db/jsonbText.ts';
import { StatementGroup, type Pending } from '../db/statementGroup.ts';
import { isMissingPartition, TimeseriesPartitions } from '../timeseries/partitions.ts';
import { PostgresTimeseriesStore } from '../timeseries/postgresStore.ts';
import type { TimeseriesStore } from '../timeseries/store.ts';
import type { ScrollIds } from './scrollIds.ts';
import type { WriteStrategy } from '../config.ts';
import type { AspectHook, PendingWrite, WriteIntent, WriteKind } from './aspectHooks.ts';

export type { StoredAspect, WriteMode, WriteOutcome } from './aspectStore.ts';

/** One aspect write as a surface received it. */
export interface AspectInput {
  urn: string;
  /** The URN already resolved (by {@link EntityService.resolve}), when the surface has it. */
  target?: EntityUrn;
  aspect: string;
  value: unknown;
  systemMetadata?: unknown;
  conditions?: WriteConditions;
}

/**
 * What a write goes ahead on: DataHub's conditional-write headers (If-Version-Match, If-None-Match),
 * checked by the write itself, against the state it writes over.
 */
export interface WriteConditions {
  /**
   * If-Version-Match: the version number the aspect must have (see {@link aspectVersionNumber}; -1:
   * absent); otherwise the write fails with 412 `Expected version <v>, actual version <n>`.
   */
  version?: number;
  /**
   * If-None-Match: *: the write is a CREATE (CREATE_ENTITY with that mode) whose failure, the aspect
   * (or entity) being there, drops the write silently instead of failing it. A write of one aspect only.
   */
  unlessExists?: boolean;
}

/** An entity as read: its URN and the latest value of each aspect asked for that it has. */
export interface EntityRecord {
  urn: string;
  aspects: Map<string, StoredAspect>;
}

/**
 * What one change did: `version` is the number of the aspect's version it left latest (1 for its
 * first; 0 for a time series entry and for a deletion).
 */
export interface WriteResult {
  urn: string;
  aspect: string;
  version: number;
  outcome: WriteOutcome | 'deleted';
}

/** A write's result with the aspect as stored (after its rules, filtered as reads are). */
export interface WrittenAspect extends WriteResult {
  outcome: WriteOutcome;
  stored: StoredAspect;
}

export interface ListOptions {
  aspects?: string[];
  count: number;
  scrollId?: string;
  descending: boolean;
  includeSoftDeleted: boolean;
}

export const MAX_PAGE = 1000;

const NO_HOOKS: readonly AspectHook[] = Object.freeze([]);
const NO_RUN_ID = 'no-run-id-provided';
/** Tries of an optimistic write before it is written under locks; and tries in all. */
const OPTIMISTIC_ATTEMPTS = 2;
const MAX_ATTEMPTS = 5;
/**
 * Writes prepared without locks that found what they read changed, writes that went under locks after
 * conflicts or at a hook's asking, writes prepared from what an earlier write left (see keptReads.ts)
 * instead of reading it, and writes prepared from a guess (see writeGuesses.ts; exported as metrics).
 */
export const optimisticWrites = { stale: 0, locked: 0, kept: 0, guessed: 0 };
/** A hook asked for its write to go under locks (see Prepared.needsLock). */
class LockNeeded extends Error {}
/** How the reads of concurrent optimistic writes are grouped (see db/statementGroup.ts). */
const READ_GROUPING = { maxInFlight: 2, nextStatementAt: 4, maxBatch: 64 };
/** A refresh of an aspect that is not stored: nothing to write. */
const NOTHING = Symbol('nothing');

/** A written aspect, and whether `stored` is already what a read shows (the hooks said so). */
type ShownAspect = WrittenAspect & { shownAsWritten: boolean };

/** A change ready for a checked write. */
interface PreparedWrite {
  change: Change;
  write: AspectWrite;
  result(r: Written): ShownAspect;
}

/** A write on its way through {@link EntityService.commitWrites}. */
interface Change {
  target: EntityUrn;
  aspect: AspectSpec;
  kind: WriteKind;
  /** Set: the value given. Patch and refresh: filled in under the entity's lock. */
  value: unknown;
  patch?: { ops: PatchOperation[]; arrayPrimaryKeys: Record<string, string[]>; derive?: Derive };
  systemMetadata: Record<string, unknown>;
  conditions?: WriteConditions;
  /** What the attempt under way was prepared from, when not from a read: a kept row or a guess. */
  startedFrom?: 'kept' | 'guess';
  /** A guess for this change was found wrong: its next attempts read. */
  guessWrong?: boolean;
}

/** A change computed from an aspect's stored latest value (undefined: none stored); see {@link EntityService.update}. */
export type Derive = (stored: unknown) => unknown;

/** The entities of written aspects, grouped by URN in the order they were written. */
export function recordsOf(written: WrittenAspect[]): EntityRecord[] {
  const out = new Map<string, EntityRecord>();
  for (const w of written) {
    if (!out.has(w.urn)) out.set(w.urn, { urn: w.urn, aspects: new Map() });
    out.get(w.urn)!.aspects.set(w.aspect, w.stored);
  }
  return [...out.values()];
}

export class EntityService {
  private readonly hooks: AspectHook[] = [];
  private readonly partitions: TimeseriesPartitions;
  /** The hooks of each aspect name, kept as hooks are added: every write asks. */
  private readonly hooksByAspect = new Map<string, AspectHook[]>();
  private readonly readGroups = new Map<AspectHook, StatementGroup<WriteIntent, ReadForWrite & { context?: unknown }>>();
  private readonly batcher: WriteBatcher;
  /** What optimistic writes left, for the next write of the same aspect to start from (see keptReads.ts). */
  private readonly kept = new KeptReads();
  /** Whether writes to entities nothing is kept of start from a guess (see writeGuesses.ts). */
  private readonly guesses = new WriteGuesses();
  private readonly commitListeners: ((urns: string[]) => void)[] = [];
  /** Entities svc keeps itself (its data and entity types): no client writes or deletes them. */
  private readonly builtIn = new Set<string>();

  constructor(
    private readonly pool: Pool,
    private readonly scrollIds: ScrollIds,
    /** Where time series entries are read and deleted (they are written to `timeseries_entries` in both stores). */
    private readonly timeseries: TimeseriesStore = new PostgresTimeseriesStore(pool),
    /** Where the state a write's rules check comes from (see Config.writeStrategy). */
    private readonly strategy: WriteStrategy = { checked: true, grouped: true, kept: true, guess: true },
  ) {
    this.batcher = new WriteBatcher(pool);
    this.partitions = new TimeseriesPartitions(pool);
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

  /** Drops what writes of the entity left (see keptReads.ts): a delete changed its rows. */
  private forgetKept(urn: string): void {
    for (const h of this.hooks) if (h.contextAfter) this.kept.forget(urn, h.aspect);
  }

  private committed(urns: string[]): void {
    for (const listener of this.commitListeners) listener(urns);
  }

  /** Attaches a domain module's rules of one aspect (see {@link AspectHook}). */
  addHook<Plan>(hook: AspectHook<Plan>): void {
    this.hooks.push(hook as AspectHook);
    this.hooksByAspect.set(hook.aspect, [...this.hooksFor(hook.aspect), hook as AspectHook]);
    const read = hook.readForWrite?.bind(hook);
    if (read) {
      // The reads of concurrent writes go out together, as their writes do (see WriteBatcher).
      const send = async (batch: Pending<WriteIntent, ReadForWrite>[]) => {
        const reads = await read(batch.map((p) => p.item), this.pool);
        batch.forEach((p, i) => p.resolve(reads[i]!));
      };
      this.readGroups.set(hook as AspectHook, new StatementGroup(send, READ_GROUPING));
    }
  }

  private hooksFor(aspect: string): readonly AspectHook[] {
    return this.hooksByAspect.get(aspect) ?? NO_HOOKS;
  }

  /** Applies the read filters of the aspects' hooks to aspects about to be returned. */
  private async filterRead(aspects: StoredAspect[], contexts?: Map<AspectHook, ContextRow[]>): Promise<void> {
    for (const hook of this.hooks) {
      if (!hook.filterRead) continue;
      const mine = aspects.filter((a) => a.aspect === hook.aspect);
      if (mine.length) await hook.filterRead(mine, this.pool, contexts?.get(hook));
    }
  }

  /**
   * The latest rows of the aspects, with what the read filters of their hooks need read in the same
   * statement (AspectHook.readContextSql): one round trip and one snapshot.
   */
  private async readLatest(urns: string[], names: string[] | undefined): Promise<{ rows: StoredAspect[]; contexts: Map<AspectHook, ContextRow[]> }> {
    const hooks = this.hooks.filter((h) => h.filterRead && h.readContextSql && (names === undefined || names.includes(h.aspect)));
    const contexts = new Map<AspectHook, ContextRow[]>(hooks.map((h) => [h, []]));
    if (hooks.length === 0) return { rows: await latestAspects(this.pool, urns, names), contexts };
    const read = await latestAspectsWith(this.pool, urns, names, hooks.map((h) => h.readContextSql!));
    for (const row of read.context) contexts.get(hooks[row.query]!)!.push(row);
    return { rows: read.aspects, contexts };
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

  // ---- reads ------------------------------------------------------------------------------------

  /** The entity with the given aspects (all when undefined); undefined when it does not exist. */
  async getEntity(principal: Principal, target: EntityUrn, aspectNames?: string[]): Promise<EntityRecord | undefined> {
    authorize(principal, 'READ');
    const [record] = await this.getEntities(target.spec, [target.urn], aspectNames);
    return record;
  }

  private async getEntities(spec: EntitySpec, urns: string[], aspectNames?: string[]): Promise<EntityRecord[]> {
    const wanted = aspectNames?.map((a) => registry.aspect(spec, a));
    const versioned = wanted?.filter((a) => !a.timeseries).map((a) => a.name);
    const timeseries = (wanted ?? registry.aspectsOf(spec)).filter((a) => a.timeseries).map((a) => a.name);
    // The key aspect is read even when not asked for: it is what says the entity exists.
    const names = versioned && [...new Set([...versioned, spec.keyAspect])];
    const reading = this.timeseries.latest(this.pool, spec.name, urns, timeseries).catch((err: unknown) => {
      // Every aspect asked for, and the store of time series (OpenSearch) does not answer: the entity
      // is read without them rather than not at all. Asked for by name, they are a 503.
      if (wanted === undefined && err instanceof SvcError && err.code === 'UNAVAILABLE') return [];
      throw err;
    });
    // Both at once: time series entries and the other aspects are independent reads.
    const [series, latest] = await Promise.all([reading, this.readLatest(urns, names)]);
    const rows = [...latest.rows, ...series];
    await this.filterRead(rows, latest.contexts);
    const byUrn = new Map<string, Map<string, StoredAspect>>();
    for (const row of rows) {
      if (!byUrn.has(row.urn)) byUrn.set(row.urn, new Map());
      byUrn.get(row.urn)!.set(row.aspect, row);
    }
    const records: EntityRecord[] = [];
    for (const urn of urns) {
      const aspects = byUrn.get(urn);
      if (!aspects?.has(spec.keyAspect)) continue;
      if (wanted && !wanted.some((a) => a.name === spec.keyAspect)) aspects.delete(spec.keyAspect);
      records.push({ urn, aspects: orderAspects(spec, aspects) });
    }
    return records;
  }

  /**
   * Entities of any types, in the order given, each with those of the given aspects its type has (all
   * when undefined), as reads show them; entities that do not exist are left out.
   */
  async getMany(principal: Principal, targets: EntityUrn[], aspectNames?: string[]): Promise<EntityRecord[]> {
    authorize(principal, 'READ');
    const bySpec = new Map<EntitySpec, string[]>();
    for (const t of targets) bySpec.set(t.spec, [...(bySpec.get(t.spec) ?? []), t.urn]);
    const out: EntityRecord[] = [];
    for (const [spec, urns] of bySpec) {
      const names = aspectNames?.filter((n) => n === spec.keyAspect || spec.aspects.includes(n));
      for (const record of await this.getEntities(spec, urns, names)) out.push(record);
    }
    const order = new Map(targets.map((t, i) => [t.urn, i]));
    return out.sort((a, b) => order.get(a.urn)! - order.get(b.urn)!);
  }

  /**
   * Sets the version number of each versioned aspect read ({@link StoredAspect.number}, what
   * If-Version-Match takes), in one query; time series entries have none.
   */
  async numberVersions(aspects: StoredAspect[]): Promise<void> {
    const versioned = aspects.filter((a) => a.number === undefined && !registry.aspect(registry.resolveUrn(a.urn).spec, a.aspect).timeseries);
    if (versioned.length) await versionNumbers(this.pool, versioned);
  }

  /** One version (0 = latest) of one aspect; undefined when absent. */
  async getAspect(principal: Principal, target: EntityUrn, aspectName: string, version = 0): Promise<StoredAspect | undefined> {
    authorize(principal, 'READ');
    return this.readAspect(target, aspectName, version);
  }

  private async readAspect(target: EntityUrn, aspectName: string, version = 0): Promise<StoredAspect | undefined> {
    const aspect = registry.aspect(target.spec, aspectName);
    let stored: StoredAspect | undefined;
    if (aspect.timeseries) {
      if (version !== 0) throw SvcError.validation([`version: time series aspect ${aspect.name} has no versions`]);
      stored = (await this.timeseries.latest(this.pool, target.spec.name, [target.urn], [aspect.name]))[0];
    } else {
      stored = await aspectVersion(this.pool, target.urn, aspect.name, version);
    }
    if (stored) await this.filterRead([stored]);
    return stored;
  }

  /** Whether the entity (or one of its aspects) exists; soft-deleted entities count only with `includeSoftDeleted`. */
  async exists(principal: Principal, target: EntityUrn, aspectName: string | undefined, includeSoftDeleted: boolean): Promise<boolean> {
    authorize(principal, 'READ');
    const stored = await latestAspects(this.pool, [target.urn], [target.spec.keyAspect, 'status']);
    if (!stored.some((a) => a.aspect === target.spec.keyAspect)) return false;
    if (!includeSoftDeleted && isRemoved(stored.find((a) => a.aspect === 'status')?.value)) return false;
    if (aspectName === undefined) return true;
    return (await this.readAspect(target, aspectName)) !== undefined;
  }

  /** A page of entities of one type in URN order, with a scroll id for the next page. */
  async list(principal: Principal, spec: EntitySpec, opts: ListOptions): Promise<{ entities: EntityRecord[]; scrollId: string | undefined }> {
    authorize(principal, 'READ');
    const scope = `${spec.name}:${opts.descending ? 'DESCENDING' : 'ASCENDING'}`;
    const after = opts.scrollId === undefined ? undefined : this.scrollIds.decode(scope, opts.scrollId);
    const page = await scrollUrns(this.pool, spec.keyAspect, {
      after,
      limit: Math.min(Math.max(opts.count, 1), MAX_PAGE),
      descending: opts.descending,
      includeSoftDeleted: opts.includeSoftDeleted,
    });
    const entities = await this.getEntities(spec, page.urns, opts.aspects);
    return { entities, scrollId: page.next === undefined ? undefined : this.scrollIds.encode(scope, page.next) };
  }

  // ---- writes -----------------------------------------------------------------------------------

  /**
   * Writes aspects, all or nothing: every item is validated first (every violation reported in one
   * error), then all are written together. Returns each written aspect in input order.
   */
  async write(principal: Principal, inputs: AspectInput[], mode: WriteMode): Promise<WrittenAspect[]> {
    authorize(principal, 'UPDATE', inputs.length === 1 ? inputs[0]!.urn : undefined);
    const changes = this.check(inputs);
    this.refuseBuiltIn(principal, changes.map((c) => c.target.urn));
    const [only] = changes;
    if (!only?.conditions?.unlessExists) return this.commitWrites(principal, changes, mode);
    // If-None-Match: * (a lone write, see check): a CREATE, dropped when what it would create is there.
    try {
      return await this.commitWrites(principal, changes, mode === 'upsert' ? 'create' : mode);
    } catch (err) {
      if (!(err instanceof SvcError && err.code === 'PRECONDITION' && CREATE_PRECONDITIONS.includes(err.message))) throw err;
    }
    // Dropped: nothing written; the aspect as a read shows it, when there is one.
    const [stored, { version }] = await Promise.all([this.readAspect(only.target, only.aspect.name), aspectVersionNumber(this.pool, only.target.urn, only.aspect.name)]);
    return stored ? [{ urn: only.target.urn, aspect: only.aspect.name, version, outcome: 'unchanged', stored: { ...stored, number: version } }] : [];
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
    const aspect = registry.aspect(target.spec, aspectName);
    if (aspect.timeseries || aspect.keyOf) throw SvcError.validation([`${aspect.name} cannot be patched`]);
    const { ops, arrayPrimaryKeys } = parsePatchBody(body);
    const [written] = await this.commitWrites(principal, [{ target, aspect, kind: 'patch', value: undefined, patch: { ops, arrayPrimaryKeys }, systemMetadata: { runId: NO_RUN_ID } }], 'upsert');
    return written!;
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
    const aspect = registry.aspect(target.spec, aspectName);
    if (aspect.timeseries || aspect.keyOf) throw SvcError.validation([`${aspect.name} cannot be patched`]);
    const [written] = await this.commitWrites(principal, [{ target, aspect, kind: 'patch', value: undefined, patch: { ops: addressed, arrayPrimaryKeys: {}, derive }, systemMetadata: { runId: NO_RUN_ID } }], 'upsert');
    return written!;
  }

  /**
   * Writes the stored value of an aspect of each target again, in one transaction, so that its rules
   * apply to it anew (e.g. values of a deleted structured property are dropped); nothing for a target
   * without the aspect.
   */
  async refresh(principal: Principal, targets: EntityUrn[], aspectName: string, runId: string): Promise<WriteResult[]> {
    authorize(principal, 'UPDATE', targets.length === 1 ? targets[0]!.urn : undefined);
    this.refuseBuiltIn(principal, targets.map((t) => t.urn));
    const changes = targets.map((target): Change => ({ target, aspect: registry.aspect(target.spec, aspectName), kind: 'refresh', value: undefined, systemMetadata: { runId } }));
    return (await this.commitWrites(principal, changes, 'upsert')).map(({ stored: _stored, ...result }) => result);
  }

  /** Validates write inputs, collecting every violation before failing. */
  private check(inputs: AspectInput[]): Change[] {
    const v = new Violations();
    const out: Change[] = [];
    for (const input of inputs) {
      const target = input.target?.urn === input.urn ? input.target : registry.resolveUrn(input.urn);
      let aspect: AspectSpec;
      try {
        aspect = registry.aspect(target.spec, input.aspect);
      } catch (err) {
        if (err instanceof SvcError) err.violations.forEach((m) => v.add(m));
        continue;
      }
      const problems = registry.validate(aspect, input.value);
      problems.forEach((m) => v.add(m));
      if (problems.length === 0 && aspect.keyOf) {
        const expected = registry.keyAspectValue(target);
        if (JSON.stringify(sortKeys(input.value)) !== JSON.stringify(sortKeys(expected))) {
          v.add(`${aspect.name}: a key aspect must match the urn ${input.urn}: ${JSON.stringify(expected)}`);
        }
      }
      const sm = input.systemMetadata;
      if (sm !== undefined) registry.validateSystemMetadata(aspect, sm).forEach((m) => v.add(m));
      const conditions = input.conditions;
      if (conditions?.version !== undefined && aspect.timeseries) {
        v.add(`${aspect.name}.headers: If-Version-Match does not apply to a time series aspect, which has no versions`);
      }
      if (conditions?.unlessExists && inputs.length > 1) v.add(`${aspect.name}.headers: If-None-Match is taken by a write of one aspect only`);
      // The version number is svc's to give (reads show it); one sent with a write is not kept.
      const { version: _given, ...given } = (sm ?? {}) as Record<string, unknown>;
      out.push({ target, aspect, kind: 'set', value: input.value, systemMetadata: { runId: NO_RUN_ID, ...given }, conditions });
    }
    v.throwIfAny();
    return out;
  }

  private hasHooks(c: Change): boolean {
    return this.hooksByAspect.has(c.aspect.name);
  }

  /**
   * The one write path. A write whose aspects have no hooks or optimistic ones is prepared without
   * locks and written by one checked statement (see aspectStore.ts), which fails a row whose stored
   * state changed since it was read; such a write is prepared again, and after
   * {@link OPTIMISTIC_ATTEMPTS} tries (or at once when a hook asks, Prepared.needsLock) it is written
   * under locks in a transaction. A lone write joins the group
   * commit of writes in flight (see WriteBatcher); the rows of one request go in one atomic statement.
   * Anything else (time series, hooks that need the lock) runs in a transaction: entities in lock
   * order, and within an entity the aspects with hooks last, so an entity this request creates exists
   * for them.
   */
  private async commitWrites(principal: Principal, changes: Change[], mode: WriteMode): Promise<WrittenAspect[]> {
    if (changes.length === 0) return [];
    const now = Date.now();
    const series = changes.filter((c) => c.aspect.timeseries);
    const entries = series.map((c) => ({ entityType: c.target.spec.name, aspect: c.aspect.name, timestampMillis: (c.value as { timestampMillis: number }).timestampMillis }));
    // The partitions of time series entries are made before the write's transaction (see timeseries/partitions.ts).
    if (entries.length) await this.partitions.ensure(entries);
    const optimistic = this.strategy.checked && series.length === 0 && changes.every((c) => this.hooksFor(c.aspect.name).every((h) => h.optimistic));
    let written: ShownAspect[] | undefined;
    let lockNeeded = !optimistic;
    for (let attempt = 1; written === undefined; attempt++) {
      const unlocked = !lockNeeded && attempt <= OPTIMISTIC_ATTEMPTS;
      if (optimistic && !unlocked) optimisticWrites.locked++;
      try {
        written = unlocked ? await this.writeOptimistic(principal, changes, mode, now) : await this.writeLocked(principal, changes, mode, now);
      } catch (err) {
        if (err instanceof LockNeeded) lockNeeded = true;
        else if (entries.length && isMissingPartition(err) && attempt < MAX_ATTEMPTS) {
          // A truncation dropped a partition this process knew of: made again, and the write retried.
          this.partitions.forget();
          await this.partitions.ensure(entries);
        } else if (!isStaleWrite(err) || attempt >= MAX_ATTEMPTS) throw err;
        else {
          // What a write found changed is read anew: an aspect another writer changed behind a kept
          // row is not kept any more (see keptReads.ts), and a wrong guess is not made again.
          for (const c of changes) {
            if (c.startedFrom === 'kept') this.kept.contended(c.target.urn, c.aspect.name);
            if (c.startedFrom === 'guess') c.guessWrong = true;
          }
          if (changes.some((c) => c.startedFrom === 'guess')) this.guesses.wrong();
          if (unlocked) optimisticWrites.stale++;
        }
      }
    }
    this.committed(changes.map((c) => c.target.urn));
    await this.filterRead(written.filter((w) => !w.shownAsWritten).map((w) => w.stored));
    return written.map(({ shownAsWritten: _shown, ...w }) => w);
  }

  /** The order a request's changes are written in: entities in lock order, within one the aspects with hooks last. */
  private writeOrder(a: Change, b: Change): number {
    return compareUrns(a.target.urn, b.target.urn) || Number(this.hasHooks(a)) - Number(this.hasHooks(b));
  }

  /** Entities of a request that an earlier change of the same request writes (creating them if new). */
  private createdHere(changes: Change[], c: Change): boolean {
    return changes.some((o) => o !== c && o.target.urn === c.target.urn && !this.hasHooks(o));
  }

  /** Prepares every change without locks and writes them in one checked statement. */
  private async writeOptimistic(principal: Principal, changes: Change[], mode: WriteMode, now: number): Promise<ShownAspect[]> {
    const prepared = await Promise.all(changes.map((c) => this.prepareOptimistic(principal, changes, c, mode, now)));
    const rows = prepared.map((p, i) => ({ p, i })).filter((x): x is { p: PreparedWrite; i: number } => x.p !== undefined);
    if (rows.length === 0) return []; // e.g. refreshes of aspects none of the entities has
    if (rows.length === 1) {
      // A lone write joins the group commit of the writes in flight.
      const { p } = rows[0]!;
      return [p.result(await this.batcher.write(p.write))];
    }
    const ordered = [...rows].sort((a, b) => this.writeOrder(a.p.change, b.p.change));
    const results = await writeAspectsAtomically(this.pool, ordered.map((x) => x.p.write));
    const out: ShownAspect[] = [];
    ordered.forEach((x, k) => (out[x.i] = x.p.result(results[k]!)));
    return out.filter((w) => w !== undefined);
  }

  /** One change ready to be written: its row (with what it relies on) and how to report it. */
  private async prepareOptimistic(principal: Principal, changes: Change[], c: Change, mode: WriteMode, now: number): Promise<PreparedWrite | undefined> {
    const systemMetadata = { ...c.systemMetadata, lastObserved: now };
    const hooks = this.hooksFor(c.aspect.name);
    if (hooks.length === 0 && c.kind === 'set') {
      const write = this.aspectWrite(c.target, c.aspect.name, c.value, systemMetadata, principal, mode);
      // Checked against the row the version was read from: a write in between makes it stale, read again.
      if (c.conditions?.version !== undefined) write.expected = await this.checkVersion(this.pool, c);
      return { change: c, write, result: (r) => this.written(c, r, c.value, systemMetadata, principal, now) };
    }
    const reader = hooks.find((h) => h.readForWrite);
    const intent = this.intent(c);
    c.startedFrom = undefined;
    const kept = this.strategy.kept && reader?.contextAfter ? this.kept.take(c.target.urn, c.aspect.name) : undefined;
    const context = kept && reader!.contextFor?.(intent, kept.context);
    if (kept && context) {
      try {
        const prepared = await this.prepareFrom({ ...kept, context }, principal, changes, c, mode, now, hooks, reader);
        optimisticWrites.kept++;
        c.startedFrom = 'kept';
        return prepared;
      } catch (err) {
        if (err instanceof LockNeeded) throw err;
        // Refused on what was kept: decided again on what is stored now (the refusal may be of a
        // state that has changed since; the write statement checks only what goes ahead).
        this.kept.forget(c.target.urn, c.aspect.name);
      }
    }
    // A lone write to an entity nothing is kept of (not even the mark of another writer): a guess,
    // while guesses hold. (A request of several writes reads them in one statement anyway, and may
    // create the entity it writes values of, which a guess would take to exist.)
    const guess =
      this.strategy.guess && reader?.guessForWrite && changes.length === 1 && !c.guessWrong && c.conditions?.version === undefined && !this.kept.holds(c.target.urn, c.aspect.name) && this.guesses.allowed()
        ? reader.guessForWrite(intent)
        : undefined;
    if (guess) {
      try {
        const prepared = await this.prepareFrom(guess, principal, changes, c, mode, now, hooks, reader);
        this.guesses.guessed();
        optimisticWrites.guessed++;
        c.startedFrom = 'guess';
        return prepared;
      } catch (err) {
        if (err instanceof LockNeeded) throw err;
        // Refused on the guess: decided on what is stored (the guess may be what was wrong).
      }
    }
    const read: ReadForWrite & { context?: unknown } = !reader
      ? await readForWrite(this.pool, c.target.urn, c.aspect.name)
      : this.strategy.grouped
        ? await this.readGroups.get(reader)!.call(intent)
        : (await reader.readForWrite!([intent], this.pool))[0]!;
    return this.prepareFrom(read, principal, changes, c, mode, now, hooks, reader);
  }

  /** Prepares a change of an aspect with hooks from what was read for it (or kept, see keptReads.ts). */
  private async prepareFrom(
    read: ReadForWrite & { context?: unknown },
    principal: Principal,
    changes: Change[],
    c: Change,
    mode: WriteMode,
    now: number,
    hooks: readonly AspectHook[],
    reader: AspectHook | undefined,
  ): Promise<PreparedWrite | undefined> {
    const systemMetadata = { ...c.systemMetadata, lastObserved: now };
    if (c.conditions?.version !== undefined && (await this.checkVersion(this.pool, c)) !== read.token) {
      throw staleWrite(`${c.aspect.name} of ${c.target.urn} was written meanwhile`);
    }
    const value = await this.startingValue(c, read.previous, this.pool, reader, read.context);
    if (value === NOTHING) return undefined;
    const pending: PendingWrite = { target: c.target, aspect: c.aspect, kind: c.kind, value, patch: c.patch?.ops, previous: read.previous, principal, entityCreatedHere: this.createdHere(changes, c) };
    const guards: Guard[] = [];
    let shown: unknown;
    for (const h of hooks) {
      const p = await h.prepare(pending, this.pool, h === reader ? read.context : undefined);
      if (p.needsLock) throw new LockNeeded();
      pending.value = p.value;
      for (const g of p.guards ?? []) guards.push(g);
      shown = p.shown;
    }
    const write = { ...this.aspectWrite(c.target, c.aspect.name, pending.value, systemMetadata, principal, mode), expected: read.token, guards };
    return {
      change: c,
      write,
      result: (r) => {
        if (reader?.contextAfter) this.keepWritten(read, pending, reader, systemMetadata, r, now);
        return this.written(c, r, pending.value, systemMetadata, principal, now, shown);
      },
    };
  }

  /**
   * Keeps what a checked write left (see keptReads.ts): its row as stored, named as a read names it
   * (the metadata's text is what the write sent, or the stored one when the value was unchanged and
   * only the system metadata was replaced), and the context its hook says a read would find.
   */
  private keepWritten(read: ReadForWrite & { context?: unknown }, w: PendingWrite, reader: AspectHook, systemMetadata: Record<string, unknown>, r: Written, now: number): void {
    if (!this.strategy.kept) return;
    const text = r.outcome === 'unchanged' ? read.text : JSON.stringify(w.value);
    const systemText = jsonbText(systemMetadata);
    const { urn } = w.target;
    if (text === undefined || systemText === undefined) return this.kept.forget(urn, w.aspect.name);
    const kept: KeptRead = {
      token: `${text} ${systemText}`,
      text,
      previous: {
        urn,
        aspect: w.aspect.name,
        version: 0,
        value: w.value,
        systemMetadata,
        createdOn: r.outcome === 'unchanged' && read.previous ? read.previous.createdOn : new Date(now),
        createdBy: r.outcome === 'unchanged' && read.previous ? read.previous.createdBy : w.principal.actor,
      },
      context: reader.contextAfter!(w, read.context),
    };
    this.kept.keep(urn, w.aspect.name, kept);
  }

  /**
   * Checks a change's If-Version-Match against the aspect as stored now (under the entity's lock, or
   * without it and then returning the row read, for the write to be checked against); VERSION_MISMATCH
   * when it does not hold.
   */
  private async checkVersion(db: Db, c: Change): Promise<string | null> {
    const { token, version } = await aspectVersionNumber(db, c.target.urn, c.aspect.name);
    const expected = c.conditions!.version!;
    if (version !== expected) throw new SvcError('VERSION_MISMATCH', `Expected version ${expected}, actual version ${version}`);
    return token;
  }

  /** A change as hooks see it before anything is read. */
  private intent(c: Change): WriteIntent {
    return { target: c.target, kind: c.kind, value: c.kind === 'set' ? c.value : undefined, patch: c.patch?.ops };
  }

  /**
   * The value a change starts from: as given (set), the patched stored value (patch: applied to what
   * the aspect's `patchBase` shows of it, see AspectHook), or the stored value (refresh). `reader` and
   * `context`: the hook that read for the write and what it read, when one did.
   */
  private async startingValue(c: Change, previous: StoredAspect | undefined, db: Db, reader?: AspectHook, context?: unknown): Promise<unknown> {
    if (c.kind === 'set') return c.value;
    if (c.kind === 'refresh') return previous ? previous.value : NOTHING;
    const { ops, arrayPrimaryKeys, derive } = c.patch!;
    const based = this.hooksFor(c.aspect.name).find((h) => h.patchBase);
    const base = previous && based ? await based.patchBase!(c.target, previous, db, based === reader ? context : undefined) : previous?.value;
    const value = derive ? derive(base) : applyPatch(base ?? emptyTemplate(c.aspect), ops, arrayPrimaryKeys);
    const problems = registry.validate(c.aspect, value);
    if (problems.length) throw SvcError.validation(problems);
    return value;
  }

  /** Writes every change in one transaction, each under its entity's lock. */
  private async writeLocked(principal: Principal, changes: Change[], mode: WriteMode, now: number): Promise<ShownAspect[]> {
    for (const c of changes) this.kept.forget(c.target.urn, c.aspect.name);
    const ordered = changes.map((c, i) => ({ c, i })).sort((a, b) => this.writeOrder(a.c, b.c));
    const results = await inTransaction(this.pool, async (tx) => {
      // Every entity of the request (in lock order), then what the writes reference: the order of the
      // write statement. (A lone entity whose writes reference nothing is locked as its aspect is read.)
      const urns = inLockOrder(changes.map((c) => c.target.urn));
      const referencing = this.hooks.some((h) => h.lockReferenced && changes.some((c) => c.aspect.name === h.aspect));
      if (urns.length > 1 || referencing) for (const urn of urns) await lockEntity(tx, urn);
      await this.lockReferenced(changes, tx);
      const out: (ShownAspect | undefined)[] = [];
      for (const { c, i } of ordered) out[i] = await this.commitLocked(tx, c, mode, principal, now);
      return out;
    });
    return results.filter((w): w is ShownAspect => w !== undefined);
  }

  /** Runs the hooks' `lockReferenced` of a request, with what the callers sent. */
  private async lockReferenced(changes: Change[], tx: Db): Promise<void> {
    for (const hook of this.hooks) {
      if (!hook.lockReferenced) continue;
      const mine = changes.filter((c) => c.aspect.name === hook.aspect).map((c) => this.intent(c));
      if (mine.length) await hook.lockReferenced(mine, tx);
    }
  }

  /** Writes one change in a transaction, under its entity's lock; undefined for a refresh of an aspect that is not stored. */
  private async commitLocked(tx: Db, c: Change, mode: WriteMode, principal: Principal, now: number): Promise<ShownAspect | undefined> {
    const systemMetadata = { ...c.systemMetadata, lastObserved: now };
    if (c.aspect.timeseries) {
      // A time series only grows: CREATE of the aspect means nothing for it, CREATE_ENTITY still applies.
      await writeAspect(tx, this.aspectWrite(c.target, c.target.spec.keyAspect, registry.keyAspectValue(c.target), systemMetadata, principal, mode === 'create_entity' ? mode : 'upsert'));
      await insertTimeseries(tx, {
        entityType: c.target.spec.name,
        aspect: c.aspect.name,
        urn: c.target.urn,
        timestampMillis: (c.value as { timestampMillis: number }).timestampMillis,
        value: c.value,
        systemMetadata,
        actor: principal.actor,
      });
      return this.written(c, { outcome: 'created', version: 0 }, c.value, systemMetadata, principal, now);
    }
    const hooks = this.hooksFor(c.aspect.name);
    if (hooks.length === 0 && c.kind === 'set') {
      if (c.conditions?.version !== undefined) {
        await lockEntity(tx, c.target.urn);
        await this.checkVersion(tx, c);
      }
      const result = await writeAspect(tx, this.aspectWrite(c.target, c.aspect.name, c.value, systemMetadata, principal, mode));
      return this.written(c, result, c.value, systemMetadata, principal, now);
    }
    // Under the entity's lock: the value a patch or refresh starts from, and what the hooks compare with.
    const previous = await lockAndRead(tx, c.target.urn, c.aspect.name);
    if (c.conditions?.version !== undefined) await this.checkVersion(tx, c);
    // What a hook reads for the write, read once under the lock for both the patch's base and prepare.
    const reader = c.kind === 'patch' ? hooks.find((h) => h.readForWrite && h.patchBase) : undefined;
    const context = reader && previous ? (await reader.readForWrite!([this.intent(c)], tx))[0]!.context : undefined;
    const value = await this.startingValue(c, previous, tx, reader, context);
    if (value === NOTHING) return undefined;
    const pending: PendingWrite = { target: c.target, aspect: c.aspect, kind: c.kind, value, patch: c.patch?.ops, previous, principal, entityCreatedHere: false };
    const plans: unknown[] = [];
    const guards: Guard[] = [];
    let shown: unknown;
    for (const h of hooks) {
      const prepared = await h.prepare(pending, tx, h === reader ? context : undefined);
      pending.value = prepared.value;
      plans.push(prepared.plan);
      for (const g of prepared.guards ?? []) guards.push(g);
      shown = prepared.shown;
    }
    const result = await writeAspect(tx, { ...this.aspectWrite(c.target, c.aspect.name, pending.value, systemMetadata, principal, mode), guards });
    for (const [k, h] of hooks.entries()) await h.afterWrite?.(pending, pending.value, plans[k], tx);
    return this.written(c, result, pending.value, systemMetadata, principal, now, shown);
  }

  /** The report of one write: the result, and the aspect as stored (or as a read would show it, when the hooks said). */
  private written(c: Change, r: Written, value: unknown, systemMetadata: Record<string, unknown>, principal: Principal, now: number, shown?: unknown): ShownAspect {
    const stored: StoredAspect = {
      urn: c.target.urn,
      aspect: c.aspect.name,
      version: 0,
      value: shown === undefined ? value : shown,
      systemMetadata,
      createdOn: new Date(now),
      createdBy: principal.actor,
      ...(r.version > 0 ? { number: r.version } : {}),
    };
    return { urn: c.target.urn, aspect: c.aspect.name, ...r, stored, shownAsWritten: shown !== undefined };
  }

  /** The write of one aspect row: the entity's key aspect comes with it, built from the URN. */
  private aspectWrite(target: EntityUrn, aspect: string, value: unknown, systemMetadata: Record<string, unknown>, principal: Principal, mode: WriteMode): AspectWrite {
    return {
      urn: target.urn,
      aspect,
      keyAspect: target.spec.keyAspect,
      key: registry.keyAspectValue(target),
      value,
      systemMetadata,
      actor: principal.actor,
      mode,
    };
  }

  // ---- deletes ----------------------------------------------------------------------------------

  /**
   * Whether deleting these aspects (undefined: the whole entity) is a hard delete, which needs admin:
   * the entity goes, or the aspect's rules say its deletion removes data beyond it.
   */
  private isHardDelete(target: EntityUrn, aspectNames: string[] | undefined): boolean {
    if (aspectNames === undefined) return true;
    return aspectNames.some((n) => {
      const aspect = registry.aspect(target.spec, n);
      return aspect.keyOf !== undefined || this.hooksFor(aspect.name).some((h) => h.deletesMore);
    });
  }

  /** Hard-deletes an entity: every aspect, every version, every time series entry. Missing is fine. */
  async deleteEntity(principal: Principal, target: EntityUrn): Promise<WriteResult[]> {
    authorize(principal, 'HARD_DELETE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    const results = await inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      for (const aspect of registry.aspectsOf(target.spec)) {
        for (const h of this.hooksFor(aspect.name)) await h.onDelete?.(target, tx, true);
      }
      const rows = await deleteEntityRows(tx, target.urn);
      // Entries kept outside Postgres (the opensearch store) are deleted too.
      const elsewhere = (await this.timeseries.deleteEntity(tx, target.spec.name, target.urn)).filter((a) => !rows.includes(a));
      const aspects = elsewhere.length ? [...rows, ...elsewhere].sort() : rows;
      return aspects.map((aspect) => ({ urn: target.urn, aspect, version: 0, outcome: 'deleted' as const }));
    });
    this.forgetKept(target.urn);
    this.committed([target.urn]);
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
    const related: { relationship: string; entity: string; aspect: string }[] = [];
    for (const row of await latestMentioning(this.pool, REFERRING_ASPECTS, JSON.stringify(target.urn))) {
      const holder = registry.resolveUrn(row.urn);
      const rule = REFERENCE_RULES[row.aspect]!;
      const shown = (await this.readAspect(holder, row.aspect))?.value as Record<string, unknown> | undefined;
      if (!shown || rule.without(shown, target.urn) === shown) continue;
      related.push({ relationship: rule.relationship, entity: row.urn, aspect: row.aspect });
      if (!dryRun) {
        await this.update(principal, holder, row.aspect, (stored) => (stored ? rule.without(stored as Record<string, unknown>, target.urn) : stored), rule.addressed?.(shown, target.urn));
      }
    }
    return { total: related.length, related: related.slice(0, sample) };
  }

  /**
   * Deletes aspects (every version), all or nothing. The key aspect among them deletes the entity; for
   * a time series aspect only the latest entry goes (as DataHub).
   */
  async deleteAspects(principal: Principal, target: EntityUrn, aspectNames: string[]): Promise<WriteResult[]> {
    const aspects = aspectNames.map((n) => registry.aspect(target.spec, n));
    authorize(principal, this.isHardDelete(target, aspectNames) ? 'HARD_DELETE' : 'DELETE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    if (aspects.some((a) => a.keyOf)) return this.deleteEntity(principal, target);
    const deleted = await inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      const results: WriteResult[] = [];
      for (const aspect of aspects) {
        if (aspect.timeseries) {
          if (await this.timeseries.deleteLatest(tx, target.spec.name, target.urn, aspect.name)) results.push({ urn: target.urn, aspect: aspect.name, version: 0, outcome: 'deleted' });
          continue;
        }
        for (const h of this.hooksFor(aspect.name)) await h.onDelete?.(target, tx, false);
        if (await deleteAspectRows(tx, target.urn, aspect.name)) results.push({ urn: target.urn, aspect: aspect.name, version: 0, outcome: 'deleted' });
      }
      return results;
    });
    this.forgetKept(target.urn);
    this.committed([target.urn]);
    return deleted;
  }

  /**
   * Deletes the entries of a time series aspect of an entity within `range` (both ends included, an
   * absent end open; DataHub's `/entities?action=delete` with an `aspectName`); how many there were.
   * The entity and its other aspects stay.
   */
  async deleteTimeseriesRange(principal: Principal, target: EntityUrn, aspectName: string, range: TimeRange): Promise<number> {
    const aspect = registry.aspect(target.spec, aspectName);
    if (!aspect.timeseries) throw SvcError.validation([`${aspect.name} is not a time series aspect of ${target.spec.name}: a time range selects entries of a time series aspect`]);
    authorize(principal, 'HARD_DELETE', target.urn);
    this.refuseBuiltIn(principal, [target.urn]);
    return inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      return this.timeseries.deleteRange(tx, target.spec.name, target.urn, aspect.name, range);
    });
  }
}

/** The value a patch starts from when the aspect does not exist yet: its required arrays empty. */
function emptyTemplate(aspect: AspectSpec): Record<string, unknown> {
  const schema = aspect.schema as { required?: string[]; properties?: Record<string, { type?: string }> };
  const out: Record<string, unknown> = {};
  for (const field of schema.required ?? []) {
    if (schema.properties?.[field]?.type === 'array') out[field] = [];
  }
  return out;
}

function orderAspects(spec: EntitySpec, aspects: Map<string, StoredAspect>): Map<string, StoredAspect> {
  const order = [spec.keyAspect, ...spec.aspects];
  return new Map([...aspects.entries()].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)));
}

function sortKeys(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)));
}

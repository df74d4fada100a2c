/**
 * Writes of aspects: what a write is ({@link Change}), the checks of its input and conditions, and the
 * one loop every write goes through ({@link WritePath.commit}): an attempt prepared without locks and
 * checked by its statement (checkedWrites.ts), again when what it relied on changed, and after that
 * (or for what cannot be checked so) an attempt under locks (lockedWrites.ts). The steps both kinds of
 * attempt share are here too: the value a write starts from, the row it writes, how it is reported.
 */
import { SvcError, Violations } from '../shared/errors.ts';
import { isStaleWrite, type Db, type Pool } from '../db/pool.ts';
import { compareUrns } from '../db/locks.ts';
import type { Principal } from '../auth/authorize.ts';
import { registry, type AspectSpec, type EntityUrn } from '../registry/registry.ts';
import { aspectVersionNumber, type StoredAspect } from './aspectStore.ts';
import { type AspectWrite, type WriteMode, type WriteOutcome, type Written } from './writeStatement.ts';
import { applyPatch, type PatchOperation } from './jsonPatch.ts';
import { isMissingPartition, type TimeseriesPartitions } from '../timeseries/partitions.ts';
import type { WriteStrategy } from '../config.ts';
import type { AspectHook, AspectHooks, WriteIntent, WriteKind } from './aspectHooks.ts';
import type { EntityRecord, EntityReads } from './reads.ts';

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

/** A change computed from an aspect's stored latest value (undefined: none stored); see {@link EntityService.update}. */
export type Derive = (stored: unknown) => unknown;

/** A write on its way through {@link WritePath.commit}. */
export interface Change {
  target: EntityUrn;
  aspect: AspectSpec;
  kind: WriteKind;
  /** Set: the value given. Patch and refresh: filled in from the stored value. */
  value: unknown;
  patch?: { ops: PatchOperation[]; arrayPrimaryKeys: Record<string, string[]>; derive?: Derive };
  systemMetadata: Record<string, unknown>;
  conditions?: WriteConditions;
  /** What the attempt under way was prepared from, when not from a read: a kept row or a guess. */
  startedFrom?: 'kept' | 'guess';
  /** A guess for this change was found wrong: its next attempts read. */
  guessWrong?: boolean;
}

/** A written aspect, and whether `stored` is already what a read shows (the hooks said so). */
export type ShownAspect = WrittenAspect & { shownAsWritten: boolean };

/** One way of attempting a request's writes (checkedWrites.ts, lockedWrites.ts). */
export interface WriteAttempt {
  write(principal: Principal, changes: Change[], mode: WriteMode, now: number): Promise<ShownAspect[]>;
}

/** The attempt without locks: also told when what an attempt relied on was found changed. */
export interface CheckedAttempt extends WriteAttempt {
  foundStale(changes: Change[]): void;
}

export const NO_RUN_ID = 'no-run-id-provided';
/** A refresh of an aspect that is not stored: nothing to write. */
export const NOTHING = Symbol('nothing');
/** Tries of a write without locks before it is written under locks; and tries in all. */
const CHECKED_ATTEMPTS = 2;
const MAX_ATTEMPTS = 5;
/**
 * Writes prepared without locks that found what they read changed, writes that went under locks after
 * conflicts or at a hook's asking, writes prepared from what an earlier write left (see keptReads.ts)
 * instead of reading it, and writes prepared from a guess (see writeGuesses.ts; exported as metrics).
 */
export const checkedWriteCounts = { stale: 0, locked: 0, kept: 0, guessed: 0 };
/** A hook asked for its write to go under locks (see Checked.needsLock). */
export class LockNeeded extends Error {}

/** The entities of written aspects, grouped by URN in the order they were written. */
export function recordsOf(written: WrittenAspect[]): EntityRecord[] {
  const out = new Map<string, EntityRecord>();
  for (const w of written) {
    if (!out.has(w.urn)) out.set(w.urn, { urn: w.urn, aspects: new Map() });
    out.get(w.urn)!.aspects.set(w.aspect, w.stored);
  }
  return [...out.values()];
}

export class WritePath {
  constructor(
    private readonly pool: Pool,
    private readonly hooks: AspectHooks,
    private readonly reads: EntityReads,
    private readonly partitions: TimeseriesPartitions,
    private readonly strategy: WriteStrategy,
    private readonly checked: CheckedAttempt,
    private readonly locked: WriteAttempt,
    /** Told of the entities a write changed, once it has committed. */
    private readonly committed: (urns: string[]) => void,
  ) {}

  /**
   * Writes validated changes (see {@link checkInputs}); a lone write with If-None-Match: * is a CREATE,
   * dropped when what it would create is there.
   */
  async set(principal: Principal, changes: Change[], mode: WriteMode): Promise<WrittenAspect[]> {
    const [only] = changes;
    if (!only?.conditions?.unlessExists) return this.commit(principal, changes, mode);
    try {
      return await this.commit(principal, changes, mode === 'upsert' ? 'create' : mode);
    } catch (err) {
      if (!(err instanceof SvcError && (err.reason === 'AspectExists' || err.reason === 'EntityExists'))) throw err;
    }
    // Dropped: nothing written; the aspect as a read shows it, when there is one.
    const [stored, { version }] = await Promise.all([this.reads.aspect(only.target, only.aspect.name), aspectVersionNumber(this.pool, only.target.urn, only.aspect.name)]);
    return stored ? [{ urn: only.target.urn, aspect: only.aspect.name, version, outcome: 'unchanged', stored: { ...stored, number: version } }] : [];
  }

  /**
   * A JSON Patch of one aspect, or a change derived from its stored value (see {@link EntityService.patch},
   * {@link EntityService.update}); `patchOf` is asked once the aspect is known to take patches.
   */
  async patch(principal: Principal, target: EntityUrn, aspectName: string, patchOf: () => NonNullable<Change['patch']>): Promise<WrittenAspect> {
    const aspect = registry.aspect(target.spec, aspectName);
    if (aspect.timeseries || aspect.keyOf) throw SvcError.validation([`${aspect.name} cannot be patched`]);
    const [written] = await this.commit(principal, [{ target, aspect, kind: 'patch', value: undefined, patch: patchOf(), systemMetadata: { runId: NO_RUN_ID } }], 'upsert');
    return written!;
  }

  /** The stored value of an aspect of each target written again (see {@link EntityService.refresh}). */
  async refresh(principal: Principal, targets: EntityUrn[], aspectName: string, runId: string): Promise<WriteResult[]> {
    const changes = targets.map((target): Change => ({ target, aspect: registry.aspect(target.spec, aspectName), kind: 'refresh', value: undefined, systemMetadata: { runId } }));
    return (await this.commit(principal, changes, 'upsert')).map(({ stored: _stored, ...result }) => result);
  }

  /**
   * The one write path. A write is prepared without locks and written by one checked statement (see
   * checkedWrites.ts), which fails a row whose stored state changed since it was read; such a write is
   * prepared again, and after {@link CHECKED_ATTEMPTS} tries (or at once when a hook asks,
   * Checked.needsLock) it is written under locks in a transaction (see lockedWrites.ts). Time series,
   * and every write under `SVC_WRITE_STRATEGY=locked`, are written under locks at once.
   */
  async commit(principal: Principal, changes: Change[], mode: WriteMode): Promise<WrittenAspect[]> {
    if (changes.length === 0) return [];
    const now = Date.now();
    const series = changes.filter((c) => c.aspect.timeseries);
    const entries = series.map((c) => ({ entityType: c.target.spec.name, aspect: c.aspect.name, timestampMillis: (c.value as { timestampMillis: number }).timestampMillis }));
    // The partitions of time series entries are made before the write's transaction (see timeseries/partitions.ts).
    if (entries.length) await this.partitions.ensure(entries);
    const checked = this.strategy.checked && series.length === 0;
    let written: ShownAspect[] | undefined;
    let lockNeeded = !checked;
    for (let attempt = 1; written === undefined; attempt++) {
      const unlocked = !lockNeeded && attempt <= CHECKED_ATTEMPTS;
      if (checked && !unlocked) checkedWriteCounts.locked++;
      try {
        written = await (unlocked ? this.checked : this.locked).write(principal, changes, mode, now);
      } catch (err) {
        if (err instanceof LockNeeded) lockNeeded = true;
        else if (entries.length && isMissingPartition(err) && attempt < MAX_ATTEMPTS) {
          // A truncation dropped a partition this process knew of: made again, and the write retried.
          this.partitions.forget();
          await this.partitions.ensure(entries);
        } else if (!isStaleWrite(err) || attempt >= MAX_ATTEMPTS) throw err;
        else {
          this.checked.foundStale(changes);
          if (unlocked) checkedWriteCounts.stale++;
        }
      }
    }
    this.committed(changes.map((c) => c.target.urn));
    await this.reads.show(written.filter((w) => !w.shownAsWritten).map((w) => w.stored));
    return written.map(({ shownAsWritten: _shown, ...w }) => w);
  }
}

/** Validates write inputs, collecting every violation before failing. */
export function checkInputs(inputs: AspectInput[]): Change[] {
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

/**
 * Checks a change's If-Version-Match against the aspect as stored now (under the entity's lock, or
 * without it and then returning the row read, for the write to be checked against); VERSION_MISMATCH
 * when it does not hold.
 */
export async function checkVersion(db: Db, c: Change): Promise<string | null> {
  const { token, version } = await aspectVersionNumber(db, c.target.urn, c.aspect.name);
  const expected = c.conditions!.version!;
  if (version !== expected) throw new SvcError('VERSION_MISMATCH', `Expected version ${expected}, actual version ${version}`);
  return token;
}

/** A change as hooks see it before anything is read. */
export function intentOf(c: Change): WriteIntent {
  return { target: c.target, kind: c.kind, value: c.kind === 'set' ? c.value : undefined, patch: c.patch?.ops };
}

/**
 * The value a change starts from: as given (set), the patched stored value (patch: applied to what
 * the aspect's `patchBase` shows of it, see AspectHook), or the stored value (refresh). `reader` and
 * `state`: the hook that read the write's state and what it read, when one did.
 */
export async function startingValue(hooks: readonly AspectHook[], c: Change, previous: StoredAspect | undefined, db: Db, reader?: AspectHook, state?: unknown): Promise<unknown> {
  if (c.kind === 'set') return c.value;
  if (c.kind === 'refresh') return previous ? previous.value : NOTHING;
  const { ops, arrayPrimaryKeys, derive } = c.patch!;
  const based = hooks.find((h) => h.patchBase);
  const base = previous && based ? await based.patchBase!(c.target, previous, db, based === reader ? state : undefined) : previous?.value;
  const value = derive ? derive(base) : applyPatch(base ?? emptyTemplate(c.aspect), ops, arrayPrimaryKeys);
  const problems = registry.validate(c.aspect, value);
  if (problems.length) throw SvcError.validation(problems);
  return value;
}

/** The order a request's changes are written in: entities in lock order, within one the aspects with hooks last. */
export function writeOrder(hooks: AspectHooks): (a: Change, b: Change) => number {
  return (a, b) => compareUrns(a.target.urn, b.target.urn) || Number(hooks.has(a.aspect.name)) - Number(hooks.has(b.aspect.name));
}

/** The report of one write: the result, and the aspect as stored (or as a read would show it, when the hooks said). */
export function written(c: Change, r: Written, value: unknown, systemMetadata: Record<string, unknown>, principal: Principal, now: number, shown?: unknown): ShownAspect {
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
export function aspectWrite(target: EntityUrn, aspect: string, value: unknown, systemMetadata: Record<string, unknown>, principal: Principal, mode: WriteMode): AspectWrite {
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

/** The value a patch starts from when the aspect does not exist yet: its required arrays empty. */
function emptyTemplate(aspect: AspectSpec): Record<string, unknown> {
  const schema = aspect.schema as { required?: string[]; properties?: Record<string, { type?: string }> };
  const out: Record<string, unknown> = {};
  for (const field of schema.required ?? []) {
    if (schema.properties?.[field]?.type === 'array') out[field] = [];
  }
  return out;
}

function sortKeys(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)));
}

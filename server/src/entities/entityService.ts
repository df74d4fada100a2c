/**
 * The entity core: read, write, patch and delete aspects of registry entities. REST v2/v3 (and later
 * GraphQL, the CLI and the operator) are thin adapters over these functions; every rule lives here.
 */
import { SvcError, Violations } from '../errors.ts';
import { inTransaction, type Db, type Pool } from '../db/pool.ts';
import { registry, type AspectSpec, type EntityUrn, type EntitySpec } from '../registry/registry.ts';
import {
  aspectVersion,
  deleteAspectRows,
  deleteEntityRows,
  deleteLatestTimeseries,
  insertTimeseries,
  latestAspects,
  latestTimeseries,
  lockAndRead,
  lockEntity,
  scrollUrns,
  writeAspect,
  type StoredAspect,
  type WriteMode,
} from './aspectStore.ts';
import { applyPatch, parsePatchBody } from './jsonPatch.ts';
import { WriteBatcher, type WriteBatchStats } from './writeBatcher.ts';
import type { ScrollIds } from './scrollIds.ts';
import type { Actor, AspectHook, PendingWrite } from './aspectHooks.ts';

export type { StoredAspect, WriteMode } from './aspectStore.ts';
export type { Actor } from './aspectHooks.ts';

/** One aspect write as a surface received it. */
export interface AspectInput {
  urn: string;
  /** The URN already resolved (by {@link EntityService.resolve}), when the surface has it. */
  target?: EntityUrn;
  aspect: string;
  value: unknown;
  systemMetadata?: unknown;
}

/** An entity as read: its URN and the latest value of each aspect asked for that it has. */
export interface EntityRecord {
  urn: string;
  aspects: Map<string, StoredAspect>;
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

interface CheckedWrite {
  target: EntityUrn;
  aspect: AspectSpec;
  value: unknown;
  systemMetadata: Record<string, unknown>;
}

export class EntityService {
  private readonly hooks: AspectHook[] = [];
  /** The hooks of each aspect name, kept as hooks are added: every write asks. */
  private readonly hooksByAspect = new Map<string, AspectHook[]>();
  private readonly batcher: WriteBatcher;

  constructor(
    private readonly pool: Pool,
    private readonly scrollIds: ScrollIds,
  ) {
    this.batcher = new WriteBatcher(pool);
  }

  /** Resolves once the single-aspect writes queued so far have settled (see {@link WriteBatcher.drain}). */
  drain(): Promise<void> {
    return this.batcher.drain();
  }

  /** What the group commit of single-aspect writes did so far (see {@link WriteBatcher}). */
  get writeBatchStats(): Readonly<WriteBatchStats> {
    return this.batcher.stats;
  }

  /** Attaches a domain module's rules (see {@link AspectHook}). */
  addHook(hook: AspectHook): void {
    this.hooks.push(hook);
    for (const aspect of hook.aspects) this.hooksByAspect.set(aspect, [...this.hooksFor(aspect), hook]);
  }

  private hooksFor(aspect: string): readonly AspectHook[] {
    return this.hooksByAspect.get(aspect) ?? NO_HOOKS;
  }

  private hasHooks(w: CheckedWrite): boolean {
    return this.hooksByAspect.has(w.aspect.name);
  }

  /** Applies the read filters of every hook to aspects about to be returned. */
  private async filterRead(aspects: StoredAspect[]): Promise<void> {
    for (const hook of this.hooks) {
      if (!hook.filterRead || !aspects.some((a) => hook.aspects.includes(a.aspect))) continue;
      await hook.filterRead(aspects.filter((a) => hook.aspects.includes(a.aspect)), this.pool);
    }
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

  /** The entity with the given aspects (all when undefined); undefined when it does not exist. */
  async getEntity(target: EntityUrn, aspectNames?: string[]): Promise<EntityRecord | undefined> {
    const [record] = await this.getEntities(target.spec, [target.urn], aspectNames);
    return record;
  }

  private async getEntities(spec: EntitySpec, urns: string[], aspectNames?: string[]): Promise<EntityRecord[]> {
    const wanted = aspectNames?.map((a) => registry.aspect(spec, a));
    const versioned = wanted?.filter((a) => !a.timeseries).map((a) => a.name);
    const timeseries = (wanted ?? registry.aspectsOf(spec)).filter((a) => a.timeseries).map((a) => a.name);
    // The key aspect is read even when not asked for: it is what says the entity exists.
    const names = versioned && [...new Set([...versioned, spec.keyAspect])];
    const rows = [...(await latestAspects(this.pool, urns, names)), ...(await latestTimeseries(this.pool, urns, timeseries))];
    await this.filterRead(rows);
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

  /** One version (0 = latest) of one aspect; undefined when absent. */
  async getAspect(target: EntityUrn, aspectName: string, version = 0): Promise<StoredAspect | undefined> {
    const aspect = registry.aspect(target.spec, aspectName);
    let stored: StoredAspect | undefined;
    if (aspect.timeseries) {
      if (version !== 0) throw SvcError.validation([`version: time series aspect ${aspect.name} has no versions`]);
      stored = (await latestTimeseries(this.pool, [target.urn], [aspect.name]))[0];
    } else {
      stored = await aspectVersion(this.pool, target.urn, aspect.name, version);
    }
    if (stored) await this.filterRead([stored]);
    return stored;
  }

  /** Whether the entity (or one of its aspects) exists; soft-deleted entities count only with `includeSoftDeleted`. */
  async exists(target: EntityUrn, aspectName: string | undefined, includeSoftDeleted: boolean): Promise<boolean> {
    const aspects = [target.spec.keyAspect, 'status'];
    const stored = await latestAspects(this.pool, [target.urn], aspects);
    if (!stored.some((a) => a.aspect === target.spec.keyAspect)) return false;
    const status = stored.find((a) => a.aspect === 'status')?.value as { removed?: boolean } | undefined;
    if (!includeSoftDeleted && status?.removed === true) return false;
    if (aspectName === undefined) return true;
    return (await this.getAspect(target, aspectName)) !== undefined;
  }

  /** A page of entities of one type in URN order, with a scroll id for the next page. */
  async list(spec: EntitySpec, opts: ListOptions): Promise<{ entities: EntityRecord[]; scrollId: string | undefined }> {
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

  /**
   * Writes aspects, all or nothing: every item is validated first (every violation reported in one
   * error), then all are written in one transaction. Returns the written aspects grouped by entity.
   */
  async write(inputs: AspectInput[], mode: WriteMode, actor: Actor): Promise<EntityRecord[]> {
    // Entities in URN order, so two batches lock their entities in the same order and never deadlock;
    // within an entity, aspects with hooks last, so an entity created by this request exists for them.
    const checked = this.check(inputs).sort((a, b) =>
      a.target.urn < b.target.urn ? -1 : a.target.urn > b.target.urn ? 1 : Number(this.hasHooks(a)) - Number(this.hasHooks(b)),
    );
    // One versioned aspect without hooks is one atomic statement: no transaction of its own; it joins
    // a group commit with the other such writes in flight (see WriteBatcher).
    const single = checked.length === 1 && !checked[0]!.aspect.timeseries && !this.hasHooks(checked[0]!);
    const now = Date.now();
    const results = single
      ? await this.writeChecked(this.pool, checked, mode, actor, now)
      : await inTransaction(this.pool, (tx) => this.writeChecked(tx, checked, mode, actor, now));
    await this.filterRead(results);
    return groupByUrn(results);
  }

  /** The writing half of {@link write}, on `tx` (the pool itself for a single write). */
  private async writeChecked(tx: Db, checked: CheckedWrite[], mode: WriteMode, actor: Actor, now: number): Promise<StoredAspect[]> {
    const written: StoredAspect[] = [];
    for (const h of this.hooks) {
      if (!h.beforeWrites) continue;
      const mine = checked.filter((w) => h.aspects.includes(w.aspect.name));
      if (mine.length) await h.beforeWrites(mine.map((w) => ({ target: w.target, aspect: w.aspect.name, value: w.value })), tx);
    }
    for (const w of checked) {
      const systemMetadata = { ...w.systemMetadata, lastObserved: now };
      let value = w.value;
      if (w.aspect.timeseries) {
        // A time series only grows: CREATE of the aspect means nothing for it, CREATE_ENTITY still applies.
        await writeAspect(tx, { ...keyWrite(w.target, systemMetadata, actor), mode: mode === 'create_entity' ? mode : 'upsert' });
        await insertTimeseries(tx, {
          entityType: w.target.spec.name,
          aspect: w.aspect.name,
          urn: w.target.urn,
          timestampMillis: (w.value as { timestampMillis: number }).timestampMillis,
          value: w.value,
          systemMetadata,
          actor: actor.urn,
        });
      } else {
        value = await this.storeAspect(tx, { target: w.target, aspect: w.aspect, value: w.value, kind: 'set', actor }, systemMetadata, mode);
      }
      written.push({ urn: w.target.urn, aspect: w.aspect.name, version: 0, value, systemMetadata, createdOn: new Date(now), createdBy: actor.urn });
    }
    return written;
  }

  /**
   * Writes one versioned aspect. With hooks: under the entity's lock, the hooks check the write
   * against the stored value and may rewrite it; returns the value stored. `locked` says the caller
   * already holds the lock and read the stored value.
   */
  private async storeAspect(
    tx: Db,
    w: Omit<PendingWrite, 'previous' | 'scratch'>,
    systemMetadata: Record<string, unknown>,
    mode: WriteMode,
    locked?: { previous: StoredAspect | undefined },
  ): Promise<unknown> {
    const hooks = this.hooksFor(w.aspect.name);
    const pending: PendingWrite = { ...w, previous: locked?.previous, scratch: {} };
    if (hooks.length) {
      if (!locked) pending.previous = await lockAndRead(tx, w.target.urn, w.aspect.name);
      for (const h of hooks) if (h.prepareWrite) pending.value = await h.prepareWrite(pending, tx);
    }
    const write = {
      urn: w.target.urn,
      aspect: w.aspect.name,
      keyAspect: w.target.spec.keyAspect,
      key: registry.keyAspectValue(w.target),
      value: pending.value,
      systemMetadata,
      actor: w.actor.urn,
      mode,
    };
    // Outside a transaction (one aspect, no hooks) the write joins a group commit.
    await (tx === this.pool ? this.batcher.write(write) : writeAspect(tx, write));
    for (const h of hooks) await h.afterWrite?.(pending, pending.value, tx);
    return pending.value;
  }

  /** Validates write inputs, collecting every violation before failing. */
  private check(inputs: AspectInput[]): CheckedWrite[] {
    const v = new Violations();
    const out: CheckedWrite[] = [];
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
      if (sm !== undefined && (typeof sm !== 'object' || sm === null || Array.isArray(sm))) {
        v.add(`${aspect.name}.systemMetadata: must be an object`);
      }
      out.push({ target, aspect, value: input.value, systemMetadata: { runId: 'no-run-id-provided', ...(sm as object | undefined) } });
    }
    v.throwIfAny();
    return out;
  }

  /**
   * Applies a JSON Patch to the latest value of an aspect under the entity's lock (so concurrent
   * patches of one entity never lose each other's changes); the result is validated like a full write.
   * A missing aspect starts from its empty template (e.g. `{"properties": []}`).
   */
  async patch(target: EntityUrn, aspectName: string, body: unknown, actor: Actor): Promise<StoredAspect> {
    const aspect = registry.aspect(target.spec, aspectName);
    if (aspect.timeseries || aspect.keyOf) throw SvcError.validation([`${aspect.name} cannot be patched`]);
    const { ops, arrayPrimaryKeys } = parsePatchBody(body);
    const now = Date.now();
    const stored = await inTransaction(this.pool, async (tx) => {
      for (const h of this.hooksFor(aspect.name)) await h.beforeWrites?.([{ target, aspect: aspect.name, value: body }], tx);
      const current = await lockAndRead(tx, target.urn, aspect.name);
      const next = applyPatch(current?.value ?? emptyTemplate(aspect), ops, arrayPrimaryKeys);
      const problems = registry.validate(aspect, next);
      if (problems.length) throw SvcError.validation(problems);
      const systemMetadata = { runId: 'no-run-id-provided', lastObserved: now };
      const value = await this.storeAspect(tx, { target, aspect, value: next, kind: 'patch', patch: ops, actor }, systemMetadata, 'upsert', { previous: current });
      return { urn: target.urn, aspect: aspect.name, version: 0, value, systemMetadata, createdOn: new Date(now), createdBy: actor.urn };
    });
    await this.filterRead([stored]);
    return stored;
  }

  /**
   * Whether deleting these aspects (undefined: the whole entity) is a hard delete, which needs admin:
   * the entity goes, or a hook says the deletion removes data beyond the aspect.
   */
  isHardDelete(target: EntityUrn, aspectNames: string[] | undefined): boolean {
    if (aspectNames === undefined) return true;
    return aspectNames.some((n) => {
      const aspect = registry.aspect(target.spec, n);
      return aspect.keyOf !== undefined || this.hooks.some((h) => h.cascades?.(target, aspect.name));
    });
  }

  /** Hard-deletes an entity: every aspect, every version, every time series entry. Missing is fine. */
  async deleteEntity(target: EntityUrn, actor: Actor): Promise<number> {
    return inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      for (const h of this.hooks) await h.onDelete?.(target, undefined, tx, actor);
      return deleteEntityRows(tx, target.urn);
    });
  }

  /**
   * Deletes aspects (every version), all or nothing. The key aspect among them deletes the entity; for
   * a time series aspect only the latest entry goes (as DataHub).
   */
  async deleteAspects(target: EntityUrn, aspectNames: string[], actor: Actor): Promise<number> {
    const aspects = aspectNames.map((n) => registry.aspect(target.spec, n));
    if (aspects.some((a) => a.keyOf)) return this.deleteEntity(target, actor);
    return inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      let rows = 0;
      for (const aspect of aspects) {
        if (aspect.timeseries) {
          rows += await deleteLatestTimeseries(tx, target.urn, aspect.name);
          continue;
        }
        for (const h of this.hooks) await h.onDelete?.(target, aspect.name, tx, actor);
        rows += await deleteAspectRows(tx, target.urn, aspect.name);
      }
      return rows;
    });
  }
}

function keyWrite(target: EntityUrn, systemMetadata: Record<string, unknown>, actor: Actor) {
  const key = registry.keyAspectValue(target);
  return {
    urn: target.urn,
    aspect: target.spec.keyAspect,
    keyAspect: target.spec.keyAspect,
    key,
    value: key,
    systemMetadata,
    actor: actor.urn,
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

function orderAspects(spec: EntitySpec, aspects: Map<string, StoredAspect>): Map<string, StoredAspect> {
  const order = [spec.keyAspect, ...spec.aspects];
  return new Map([...aspects.entries()].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)));
}

function groupByUrn(rows: StoredAspect[]): EntityRecord[] {
  const out = new Map<string, EntityRecord>();
  for (const r of rows) {
    if (!out.has(r.urn)) out.set(r.urn, { urn: r.urn, aspects: new Map() });
    out.get(r.urn)!.aspects.set(r.aspect, r);
  }
  return [...out.values()];
}

function sortKeys(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)));
}

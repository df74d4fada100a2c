/**
 * Reads of entities and aspects, as every surface shows them: the latest rows (with time series
 * entries from their store), one version of an aspect, pages of entities in URN order. Each aspect's
 * hooks say what reads show of it (AspectHook.show) before anything is returned ({@link EntityReads.show}).
 * Authorization is the caller's (see entityService.ts).
 */
import { SvcError } from '../shared/errors.ts';
import type { Pool } from '../db/pool.ts';
import { registry, type EntitySpec, type EntityUrn } from '../registry/registry.ts';
import { aspectHistory, aspectVersion, latestAspects, latestAspectsWith, scrollUrns, versionNumbers, type AspectHistory, type ContextRow, type StoredAspect } from './aspectStore.ts';
import { isRemoved } from './softDelete.ts';
import type { AspectHook, AspectHooks } from './aspectHooks.ts';
import type { ScrollIds } from './scrollIds.ts';
import type { TimeseriesStore } from '../timeseries/store.ts';

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

export class EntityReads {
  constructor(
    private readonly pool: Pool,
    private readonly hooks: AspectHooks,
    private readonly timeseries: TimeseriesStore,
    private readonly scrollIds: ScrollIds,
  ) {}

  /** Applies what the aspects' hooks show of them (AspectHook.show) to aspects about to be returned. */
  async show(aspects: StoredAspect[], rows?: Map<AspectHook, ContextRow[]>): Promise<void> {
    for (const hook of this.hooks.all) {
      if (!hook.show) continue;
      const mine = aspects.filter((a) => a.aspect === hook.aspect);
      if (mine.length) await hook.show.apply(mine, this.pool, rows?.get(hook));
    }
  }

  /**
   * The latest rows of the aspects, with what their hooks' `show` needs read in the same statement
   * (ShowRule.sql): one round trip and one snapshot.
   */
  private async readLatest(urns: string[], names: string[] | undefined): Promise<{ rows: StoredAspect[]; contexts: Map<AspectHook, ContextRow[]> }> {
    const hooks = this.hooks.all.filter((h) => h.show?.sql && (names === undefined || names.includes(h.aspect)));
    const contexts = new Map<AspectHook, ContextRow[]>(hooks.map((h) => [h, []]));
    if (hooks.length === 0) return { rows: await latestAspects(this.pool, urns, names), contexts };
    const read = await latestAspectsWith(this.pool, urns, names, hooks.map((h) => h.show!.sql!));
    for (const row of read.context) contexts.get(hooks[row.query]!)!.push(row);
    return { rows: read.aspects, contexts };
  }

  /** Entities of one type with the given aspects (all when undefined), in the order given; those that do not exist are left out. */
  async entities(spec: EntitySpec, urns: string[], aspectNames?: string[]): Promise<EntityRecord[]> {
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
    await this.show(rows, latest.contexts);
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

  /** Entities of any types, in the order given (see {@link EntityService.getMany}). */
  async many(targets: EntityUrn[], aspectNames?: string[]): Promise<EntityRecord[]> {
    const bySpec = new Map<EntitySpec, string[]>();
    for (const t of targets) {
      const urns = bySpec.get(t.spec);
      if (urns) urns.push(t.urn);
      else bySpec.set(t.spec, [t.urn]);
    }
    const out: EntityRecord[] = [];
    for (const [spec, urns] of bySpec) {
      const names = aspectNames?.filter((n) => n === spec.keyAspect || spec.aspects.includes(n));
      for (const record of await this.entities(spec, urns, names)) out.push(record);
    }
    const order = new Map(targets.map((t, i) => [t.urn, i]));
    return out.sort((a, b) => order.get(a.urn)! - order.get(b.urn)!);
  }

  /** Sets the version number of each versioned aspect read (see {@link EntityService.numberVersions}). */
  async numberVersions(aspects: StoredAspect[]): Promise<void> {
    const versioned = aspects.filter((a) => a.number === undefined && !registry.aspect(registry.resolveUrn(a.urn).spec, a.aspect).timeseries);
    if (versioned.length) await versionNumbers(this.pool, versioned);
  }

  /** One version (0 = latest) of one aspect, as reads show it; undefined when absent. */
  async aspect(target: EntityUrn, aspectName: string, version = 0): Promise<StoredAspect | undefined> {
    const aspect = registry.aspect(target.spec, aspectName);
    let stored: StoredAspect | undefined;
    if (aspect.timeseries) {
      if (version !== 0) throw SvcError.validation([`version: time series aspect ${aspect.name} has no versions`]);
      stored = (await this.timeseries.latest(this.pool, target.spec.name, [target.urn], [aspect.name]))[0];
    } else {
      stored = await aspectVersion(this.pool, target.urn, aspect.name, version);
    }
    if (stored) await this.show([stored]);
    return stored;
  }

  /**
   * The versions of versioned aspects of one entity written in a time window, as reads show them
   * (see {@link aspectHistory}).
   */
  async history(target: EntityUrn, aspectNames: string[], from: Date, to: Date, limit: number): Promise<Map<string, AspectHistory>> {
    const names = aspectNames.map((n) => registry.aspect(target.spec, n)).filter((a) => !a.timeseries).map((a) => a.name);
    if (names.length === 0) return new Map();
    const history = await aspectHistory(this.pool, target.urn, names, from, to, limit);
    const rows: StoredAspect[] = [];
    for (const h of history.values()) {
      if (h.before) rows.push(h.before);
      for (const c of h.changes) rows.push(c);
    }
    await this.show(rows);
    return history;
  }

  /** Whether the entity (or one of its aspects) exists; soft-deleted entities count only with `includeSoftDeleted`. */
  async exists(target: EntityUrn, aspectName: string | undefined, includeSoftDeleted: boolean): Promise<boolean> {
    const stored = await latestAspects(this.pool, [target.urn], [target.spec.keyAspect, 'status']);
    if (!stored.some((a) => a.aspect === target.spec.keyAspect)) return false;
    if (!includeSoftDeleted && isRemoved(stored.find((a) => a.aspect === 'status')?.value)) return false;
    if (aspectName === undefined) return true;
    return (await this.aspect(target, aspectName)) !== undefined;
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
    const entities = await this.entities(spec, page.urns, opts.aspects);
    return { entities, scrollId: page.next === undefined ? undefined : this.scrollIds.encode(scope, page.next) };
  }
}

function orderAspects(spec: EntitySpec, aspects: Map<string, StoredAspect>): Map<string, StoredAspect> {
  const order = [spec.keyAspect, ...spec.aspects];
  return new Map([...aspects.entries()].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)));
}

/**
 * Deletes of entities, aspects and time series entries, each in a transaction under the entity's lock,
 * with the rules of the aspects' hooks (which may refuse, or queue what a hard delete leaves to do);
 * and the removal of references other entities hold to one being deleted, through the write path.
 * Authorization is the caller's (see entityService.ts).
 */
import { SvcError } from '../shared/errors.ts';
import { inTransaction, type Pool } from '../db/pool.ts';
import { lockEntity } from '../db/locks.ts';
import { registry, type AspectSpec, type EntityUrn } from '../registry/registry.ts';
import { deleteAspectRows, deleteEntityRows, latestMentioning, type TimeRange } from './aspectStore.ts';
import { REFERENCE_RULES, REFERRING_ASPECTS } from './references.ts';
import type { AspectHooks } from './aspectHooks.ts';
import type { PatchOperation } from './jsonPatch.ts';
import type { EntityReads } from './reads.ts';
import type { TimeseriesStore } from '../timeseries/store.ts';
import type { Derive, WriteResult } from './writes.ts';

/** A write of one aspect derived from its stored value (EntityService.update, with the caller's principal). */
export type UpdateAspect = (holder: EntityUrn, aspect: string, derive: Derive, addressed?: PatchOperation[]) => Promise<unknown>;

export class EntityDeletes {
  constructor(
    private readonly pool: Pool,
    private readonly hooks: AspectHooks,
    private readonly reads: EntityReads,
    private readonly timeseries: TimeseriesStore,
  ) {}

  /**
   * Whether deleting these aspects (undefined: the whole entity) is a hard delete, which needs admin:
   * the entity goes, or the aspect's rules say its deletion removes data beyond it.
   */
  isHardDelete(target: EntityUrn, aspectNames: string[] | undefined): boolean {
    if (aspectNames === undefined) return true;
    return aspectNames.some((n) => {
      const aspect = registry.aspect(target.spec, n);
      return aspect.keyOf !== undefined || this.hooks.of(aspect.name).some((h) => h.deletesMore);
    });
  }

  /** Every aspect, every version, every time series entry of an entity. Missing is fine. */
  async entity(target: EntityUrn): Promise<WriteResult[]> {
    return inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      for (const aspect of registry.aspectsOf(target.spec)) {
        for (const h of this.hooks.of(aspect.name)) await h.onDelete?.(target, tx, true);
      }
      const rows = await deleteEntityRows(tx, target.urn);
      // Entries kept outside Postgres (the opensearch store) are deleted too.
      const elsewhere = (await this.timeseries.deleteEntity(tx, target.spec.name, target.urn)).filter((a) => !rows.includes(a));
      const aspects = elsewhere.length ? [...rows, ...elsewhere].sort() : rows;
      return aspects.map((aspect) => ({ urn: target.urn, aspect, version: 0, outcome: 'deleted' as const }));
    });
  }

  /** The references other entities hold to `target`, each taken out by `update` unless `dryRun` (see EntityService.deleteReferences). */
  async references(target: EntityUrn, dryRun: boolean, sample: number, update: UpdateAspect): Promise<{ total: number; related: { relationship: string; entity: string; aspect: string }[] }> {
    const related: { relationship: string; entity: string; aspect: string }[] = [];
    for (const row of await latestMentioning(this.pool, REFERRING_ASPECTS, target.urn)) {
      const holder = registry.resolveUrn(row.urn);
      const rule = REFERENCE_RULES[row.aspect]!;
      const shown = (await this.reads.aspect(holder, row.aspect))?.value as Record<string, unknown> | undefined;
      if (!shown || rule.without(shown, target.urn) === shown) continue;
      related.push({ relationship: rule.relationship, entity: row.urn, aspect: row.aspect });
      if (!dryRun) {
        await update(holder, row.aspect, (stored) => (stored ? rule.without(stored as Record<string, unknown>, target.urn) : stored), rule.addressed?.(shown, target.urn));
      }
    }
    return { total: related.length, related: related.slice(0, sample) };
  }

  /** Aspects other than the key aspect (every version), all or nothing; of a time series only the latest entry. */
  async aspects(target: EntityUrn, aspects: AspectSpec[]): Promise<WriteResult[]> {
    return inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      const results: WriteResult[] = [];
      for (const aspect of aspects) {
        if (aspect.timeseries) {
          if (await this.timeseries.deleteLatest(tx, target.spec.name, target.urn, aspect.name)) results.push({ urn: target.urn, aspect: aspect.name, version: 0, outcome: 'deleted' });
          continue;
        }
        for (const h of this.hooks.of(aspect.name)) await h.onDelete?.(target, tx, false);
        if (await deleteAspectRows(tx, target.urn, aspect.name)) results.push({ urn: target.urn, aspect: aspect.name, version: 0, outcome: 'deleted' });
      }
      return results;
    });
  }

  /** The entries of a time series aspect within `range` (see EntityService.deleteTimeseriesRange); how many there were. */
  async timeseriesRange(target: EntityUrn, aspect: AspectSpec, range: TimeRange): Promise<number> {
    return inTransaction(this.pool, async (tx) => {
      await lockEntity(tx, target.urn);
      return this.timeseries.deleteRange(tx, target.spec.name, target.urn, aspect.name, range);
    });
  }
}

/** The time series aspect a range of entries is deleted from; VALIDATION when the aspect is not one. */
export function timeseriesAspect(target: EntityUrn, aspectName: string): AspectSpec {
  const aspect = registry.aspect(target.spec, aspectName);
  if (!aspect.timeseries) throw SvcError.validation([`${aspect.name} is not a time series aspect of ${target.spec.name}: a time range selects entries of a time series aspect`]);
  return aspect;
}

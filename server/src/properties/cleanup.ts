/**
 * The durable cleanups of structured property values, driven by the primary store (the record of
 * assignments, `structured_property_assignments`), in small idempotent steps: after a hard delete every value of
 * the property goes; after a versioned change the values written under an older version go. Each
 * entity is written through the entity core as a refresh: the value rules drop what is no longer
 * current (and only that) under the entity's lock, and the change is recorded like any other write.
 * Once a hard-deleted property's values are gone from every entity, it is dropped from the records of
 * older versions too, so that no read of a history row shows them, whatever is created under its URN
 * later (a new property of that URN may be created once this task is done).
 */
import type { Pool } from '../db/pool.ts';
import { SYSTEM } from '../auth/authorize.ts';
import type { EntityService } from '../entities/entityService.ts';
import { registry } from '../registry/registry.ts';
import type { TaskContext } from '../tasks/taskRunner.ts';
import { countEntitiesWithValues, entitiesWithValues, forgetHistoricRecords, loadProperties } from './propertyStore.ts';

/** Entities listed per step, and refreshed per transaction (each holds its entities' locks until it commits). */
const PAGE = 200;
const PER_TRANSACTION = 50;
const RUN_ID = 'svc-structured-property-cleanup';

/**
 * Refreshes the `structuredProperties` aspect of each entity holding values of `property` (optionally
 * only those written under a version older than `olderThan`), a page at a time in URN order. Whether
 * it got through them all (false: the runner is stopping, another takes the task up again).
 */
async function refreshHolders(pool: Pool, entities: EntityService, ctx: TaskContext, property: string, olderThan?: string): Promise<boolean> {
  const left = () => countEntitiesWithValues(pool, property, olderThan);
  if (ctx.task.total === null) await ctx.progress({ total: await left() });
  else {
    // Resumed: what a runner stopped between a transaction's commit and its count had done is counted
    // now (those entities no longer hold values, so they are not listed again).
    const done = ctx.task.total - (await left());
    if (done > ctx.task.done) await ctx.progress({ doneDelta: done - ctx.task.done });
  }
  let after: string | undefined;
  while (!ctx.stopping) {
    const urns = await entitiesWithValues(pool, property, { olderThan, after, limit: PAGE });
    if (urns.length === 0) return true;
    for (let i = 0; i < urns.length; i += PER_TRANSACTION) {
      const batch = urns.slice(i, i + PER_TRANSACTION);
      await entities.refresh(SYSTEM, batch.map((u) => registry.resolveUrn(u)), 'structuredProperties', RUN_ID);
      await ctx.progress({ doneDelta: batch.length });
    }
    after = urns[urns.length - 1];
  }
  return false;
}

/** After a hard delete: every value of the property, on every entity. */
export function hardDeleteCleanup(pool: Pool, entities: EntityService) {
  return async (ctx: TaskContext): Promise<void> => {
    if (await refreshHolders(pool, entities, ctx, ctx.task.subject)) await forgetHistoricRecords(pool, ctx.task.subject);
  };
}

/** After a versioned change: the values written under an older version than the current one. */
export function staleValuesCleanup(pool: Pool, entities: EntityService) {
  return async (ctx: TaskContext): Promise<void> => {
    const property = ctx.task.subject;
    const state = (await loadProperties(pool, [property])).get(property);
    if (!state) return; // hard deleted since: that task removes everything
    await refreshHolders(pool, entities, ctx, property, state.definition.version ?? '');
  };
}

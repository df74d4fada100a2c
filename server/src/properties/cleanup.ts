/**
 * The durable cleanups of structured property values, driven by the primary store (the
 * `structured_property_values` rows), in small idempotent steps: after a hard delete every value of
 * the property goes; after a versioned change the values written under an older version go. Other
 * properties of each entity are left as they are.
 */
import { inTransaction, type Pool } from '../db/pool.ts';
import { aspectVersion, lockEntity, writeAspect } from '../entities/aspectStore.ts';
import { registry } from '../registry/registry.ts';
import type { TaskContext } from '../tasks/taskRunner.ts';
import { countEntitiesWithValues, entitiesWithValues, loadProperties, recordedVersions, replaceValueRows } from './propertyStore.ts';
import type { StructuredProperties } from './types.ts';

const SYSTEM_ACTOR = 'urn:li:corpuser:__svc_system';
const BATCH = 200;

/** Removes `propertyUrn`'s assignment from one entity, unless `keep` says its values are current. */
async function removeFromEntity(pool: Pool, urn: string, propertyUrn: string, keep: (recordedVersion: string | undefined) => boolean): Promise<void> {
  await inTransaction(pool, async (tx) => {
    await lockEntity(tx, urn);
    const recorded = (await recordedVersions(tx, [urn])).get(urn);
    if (keep(recorded?.get(propertyUrn))) return;
    const current = await aspectVersion(tx, urn, 'structuredProperties', 0);
    const remaining = ((current?.value as StructuredProperties | undefined)?.properties ?? []).filter((a) => a.propertyUrn !== propertyUrn);
    if (current) {
      const target = registry.resolveUrn(urn);
      await writeAspect(tx, {
        urn,
        aspect: 'structuredProperties',
        keyAspect: target.spec.keyAspect,
        key: registry.keyAspectValue(target),
        value: { ...(current.value as object), properties: remaining },
        systemMetadata: { runId: 'svc-structured-property-cleanup', lastObserved: Date.now() },
        actor: SYSTEM_ACTOR,
        mode: 'upsert',
      });
    }
    await replaceValueRows(tx, urn, remaining, (a) => recorded?.get(a.propertyUrn) ?? '');
  });
}

/** After a hard delete: every value of the property, on every entity. */
export function hardDeleteCleanup(pool: Pool) {
  return async (ctx: TaskContext): Promise<void> => {
    const property = ctx.task.subject;
    if (ctx.task.total === null) await ctx.progress({ total: await countEntitiesWithValues(pool, property) });
    while (!ctx.stopping) {
      const urns = await entitiesWithValues(pool, property, { limit: BATCH });
      if (urns.length === 0) return;
      for (const urn of urns) await removeFromEntity(pool, urn, property, () => false);
      await ctx.progress({ doneDelta: urns.length });
    }
  };
}

/** After a versioned change: the values written under an older version than the current one. */
export function staleValuesCleanup(pool: Pool) {
  return async (ctx: TaskContext): Promise<void> => {
    const property = ctx.task.subject;
    const state = (await loadProperties(pool, [property])).get(property);
    if (!state) return; // hard deleted since: that task removes everything
    const version = state.definition.version ?? '';
    if (ctx.task.total === null) await ctx.progress({ total: await countEntitiesWithValues(pool, property, version) });
    while (!ctx.stopping) {
      const urns = await entitiesWithValues(pool, property, { olderThan: version, limit: BATCH });
      if (urns.length === 0) return;
      for (const urn of urns) await removeFromEntity(pool, urn, property, (recorded) => recorded === undefined || recorded >= version);
      await ctx.progress({ doneDelta: urns.length });
    }
  };
}

/**
 * Rebuilding an OpenSearch index when its mappings must change in a way OpenSearch cannot do in place
 * (a field removed, or its type changed): what `system-update` does with both
 * `ELASTICSEARCH_INDEX_BUILDER_MAPPINGS_REINDEX` and `ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE` set,
 * the documented way to remove the mappings of hard-deleted structured properties.
 *
 * The target mappings of an entity type's index are its base fields and the fields of the active (not
 * soft-deleted) properties of the type, plus those of hard-deleted properties that some entity of the
 * type still holds values of (the cleanup is not done yet: "if even one value remains, the mapping is
 * not removed").
 *
 * A rebuild is a durable task (`search-index-rebuild`, one per index, in `/api/tasks`), in idempotent
 * steps, so a killed server's rebuild is resumed by the next runner:
 *
 * 1. a new concrete index is created with the target mappings;
 * 2. it is registered in `search_rebuilds`, and in the same transaction every entity of the type is
 *    queued in the search outbox again: from then on the dispatcher (the one ordered writer of search
 *    documents) writes each document both behind the alias and into the new index;
 * 3. once every row queued up to then is delivered, the new index holds what the primary store holds
 *    (progress: entities delivered of those queued); the alias is swapped to it in one atomic change,
 *    and the old index is deleted.
 *
 * Searches go on against the old index until the swap; writes are never paused.
 */
import { inTransaction, query, type Db, type Pool } from '../db/pool.ts';
import type { Logger } from '../shared/log.ts';
import { allProperties } from '../properties/propertyStore.ts';
import { registry } from '../registry/registry.ts';
import { enqueueTask } from '../tasks/taskQueue.ts';
import { INDEX_REBUILD_TASK } from '../contract/tasks.ts';
import type { TaskHandler } from '../tasks/taskRunner.ts';
import { propertyEntityTypes, propertyField, type FieldSpec, type FieldType } from './fields.ts';
import type { OpenSearchBackend } from './opensearchBackend.ts';


/** How often a rebuild looks whether the dispatcher has delivered the re-queued entities. */
const WAIT_MS = 250;

/** The structured-property fields an entity type's index must map now (see the module comment). */
export async function targetFields(db: Db, entityType: string): Promise<Map<string, FieldType>> {
  const out = new Map<string, FieldType>();
  const defined = await allProperties(db);
  for (const state of defined.values()) {
    const field = propertyField(state.definition);
    if (field && !state.softDeleted && propertyEntityTypes(state.definition).includes(entityType)) out.set(field.name, field.type);
  }
  // Hard-deleted properties (indexed once, no definition now) whose values are not all cleaned up yet.
  const prefix = `urn:li:${entityType}:`;
  const remnants = await query<{ urn: string; field: string; field_type: FieldType }>(
    db,
    `SELECT p.urn, p.field, p.field_type FROM search_properties p
      WHERE EXISTS (SELECT 1 FROM structured_property_assignments a
                     WHERE a.property_urn = p.urn AND a.entity_urn >= $1 AND a.entity_urn < $1 || chr(1114111))`,
    [prefix],
  );
  for (const r of remnants) if (!defined.has(r.urn) && !out.has(r.field)) out.set(r.field, r.field_type);
  return out;
}

/**
 * Whether an entity type's index maps a structured-property field it must not (or with another type);
 * those fields, or an empty list when additions (done in place) are enough.
 */
export async function fieldsToDrop(db: Db, backend: OpenSearchBackend, entityType: string): Promise<string[]> {
  const target = await targetFields(db, entityType);
  const mapped = await backend.mappedPropertyFields(entityType);
  return [...mapped].filter(([name, type]) => target.get(name) !== type).map(([name]) => name);
}

/**
 * Queues the rebuild of an entity type's index, unless one is queued or running; returns its task id.
 * System-update and a server's search dispatcher (see OpenSearchBackend.ensureFields) may both queue
 * one: a lock per index makes the second find the first's.
 */
export async function queueRebuild(pool: Pool, backend: OpenSearchBackend, entityType: string): Promise<number> {
  const subject = backend.alias(entityType);
  return inTransaction(pool, async (tx) => {
    await query(tx, "SELECT pg_advisory_xact_lock(hashtextextended('search:rebuild:' || $1, 0))", [subject]);
    const [open] = await query<{ id: number }>(tx, "SELECT id FROM tasks WHERE kind = $1 AND subject = $2 AND state <> 'SUCCEEDED' ORDER BY id LIMIT 1", [
      INDEX_REBUILD_TASK,
      subject,
    ]);
    if (open) return open.id;
    const task = await enqueueTask(tx, INDEX_REBUILD_TASK, subject, { entityType, index: `${subject}_${Date.now()}` });
    return task.id;
  });
}

/** The task handler of {@link INDEX_REBUILD_TASK}. */
export function indexRebuild(pool: Pool, backend: OpenSearchBackend, log: Logger): TaskHandler {
  return async (ctx) => {
    const { entityType, index } = ctx.task.params as { entityType: string; index: string };
    const behind = await backend.indicesBehind(entityType);
    if (!(behind.length === 1 && behind[0] === index)) {
      if (!(await backend.indexExists(index))) {
        const target = await targetFields(pool, entityType);
        const fields: FieldSpec[] = [...target].map(([name, type]) => ({ name, type }));
        await backend.createIndex(entityType, index, fields);
        log.info({ entityType, index, fields: fields.length }, 'index rebuild: new index created');
      }
      const { mark, total } = await register(pool, entityType, index);
      let reported = ctx.task.done;
      for (;;) {
        const [r] = await query<{ n: string }>(pool, 'SELECT count(*) AS n FROM search_outbox WHERE id <= $1 AND urn >= $2 AND urn < $2 || chr(1114111)', [
          mark,
          `urn:li:${entityType}:`,
        ]);
        const done = Math.max(0, total - Number(r!.n));
        if (done !== reported || ctx.task.total === null) {
          await ctx.progress({ total, doneDelta: done - reported });
          reported = done;
        }
        if (Number(r!.n) === 0) break;
        if (ctx.stopping) return;
        await new Promise((res) => setTimeout(res, WAIT_MS));
      }
      await backend.refreshIndex(index);
      await backend.swapAlias(entityType, index);
      log.info({ entityType, index }, 'index rebuild: alias swapped to the new index');
    } else {
      // Resumed after the swap: the old indices may still be there.
      await backend.swapAlias(entityType, index);
    }
    await query(pool, 'DELETE FROM search_rebuilds WHERE entity_type = $1', [entityType]);
  };
}

/**
 * Registers the rebuild (the dispatcher writes to the new index from its commit on) and queues every
 * entity of the type again, in one transaction; a resumed rebuild finds its registration.
 */
async function register(pool: Pool, entityType: string, index: string): Promise<{ mark: number; total: number }> {
  return inTransaction(pool, async (tx) => {
    const [existing] = await query<{ index: string; mark: string; total: string }>(tx, 'SELECT index, mark, total FROM search_rebuilds WHERE entity_type = $1 FOR UPDATE', [
      entityType,
    ]);
    if (existing?.index === index) return { mark: Number(existing.mark), total: Number(existing.total) };
    const keyAspect = registry.entity(entityType).keyAspect;
    const [q] = await query<{ n: string; mark: string | null }>(
      tx,
      `WITH q AS (INSERT INTO search_outbox (urn) SELECT urn FROM aspects WHERE aspect = $1 AND version = 0 ORDER BY urn RETURNING id)
       SELECT count(*) AS n, max(id) AS mark FROM q`,
      [keyAspect],
    );
    const mark = Number(q!.mark ?? 0);
    const total = Number(q!.n);
    await query(
      tx,
      `INSERT INTO search_rebuilds (entity_type, index, mark, total) VALUES ($1, $2, $3, $4)
         ON CONFLICT (entity_type) DO UPDATE SET index = $2, mark = $3, total = $4`,
      [entityType, index, mark, total],
    );
    return { mark, total };
  });
}

/**
 * Structured properties plugged into the entity core: the rules of definition writes and value writes,
 * hiding values on read (soft-deleted, hard-deleted or older-version properties), and the durable
 * cleanup queued by a hard delete or a versioned change. Every surface goes through these.
 */
import { SvcError } from '../errors.ts';
import type { Db } from '../db/pool.ts';
import type { AspectHook, PendingWrite } from '../entities/aspectHooks.ts';
import type { PatchOperation } from '../entities/jsonPatch.ts';
import { aspectVersion, type StoredAspect } from '../entities/aspectStore.ts';
import { registry } from '../registry/registry.ts';
import { enqueueTask, getTask } from '../tasks/taskQueue.ts';
import { checkDefinition } from './definitionRules.ts';
import { normalizeDefinition } from './normalize.ts';
import {
  existingUrns,
  isSoftDeleted,
  loadProperties,
  replaceValueRows,
  loadReadContext,
  lockPropertiesShared,
  qualifiedNameHolder,
  loadWriteContext,
} from './propertyStore.ts';
import { DATA_TYPES, entityTypeUrn, type Assignment, type PropertyDefinition, type StructuredProperties } from './types.ts';
import { checkAssignments, checkImmutable, type PropertyState, type Violation } from './valueRules.ts';

export const HARD_DELETE_TASK = 'property-hard-delete';
export const STALE_VALUES_TASK = 'property-stale-values';

const versionOf = (state: PropertyState | undefined) => state?.definition.version ?? '';

/**
 * Why an assignment is not shown: its property is soft deleted, gone, or its values were written under
 * an older version than the definition's (versions are yyyyMMddhhmmss strings; none is the oldest).
 */
function hiddenReason(a: Assignment, states: ReadonlyMap<string, PropertyState>, recorded: Map<string, string> | undefined): 'soft' | 'stale' | undefined {
  const state = states.get(a.propertyUrn);
  if (!state) return 'stale'; // hard deleted: its values are being removed
  const at = recorded?.get(a.propertyUrn);
  if (at !== undefined && at < versionOf(state)) return 'stale';
  if (state.softDeleted) return 'soft';
  return undefined;
}

/** The property URNs a patch addresses (`/properties/<urn>`): what the caller gave, as opposed to carried over. */
function addressedByPatch(ops: PatchOperation[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const op of ops ?? []) {
    for (const path of [op.path, op.from]) {
      const [, field, key] = (path ?? '').split('/');
      if (field === 'properties' && key) out.add(key.replace(/~1/g, '/').replace(/~0/g, '~'));
    }
  }
  return out;
}

function sameAssignment(a: Assignment, b: Assignment | undefined): boolean {
  return b !== undefined && JSON.stringify(a.values) === JSON.stringify(b.values);
}

function fail(violations: Violation[]): never {
  const code = violations.every((v) => v.precondition) ? 'PRECONDITION' : 'VALIDATION';
  throw new SvcError(code, violations.map((v) => v.message).join('; '), { violations: violations.map((v) => v.message) });
}

/** Rules of `propertyDefinition` writes (see definitionRules.ts), with the short forms normalised. */
function definitionHook(onTaskQueued: () => void): AspectHook {
  return {
    aspects: ['propertyDefinition'],
    async prepareWrite(w: PendingWrite, tx: Db) {
      const previous = w.previous?.value as PropertyDefinition | undefined;
      const given = normalizeDefinition(w.value as PropertyDefinition);
      // An update without a version keeps the current one (a version never goes away or down).
      const next = given.version === undefined && previous?.version !== undefined ? { ...given, version: previous.version } : given;
      const holder = await qualifiedNameHolder(tx, next.qualifiedName, w.target.urn, HARD_DELETE_TASK);
      if (holder?.cleanupTask !== undefined) {
        const task = await getTask(tx, holder.cleanupTask);
        throw new SvcError(
          'CONFLICT',
          `Structured property ${holder.urn} was hard deleted and its values are still being removed ` +
            `(task ${task.id}: ${task.done} of ${task.total ?? '?'} entities done); its qualified name ${next.qualifiedName} can be used again once that task has finished`,
        );
      }
      if (holder) throw new SvcError('CONFLICT', `Qualified name ${next.qualifiedName} is already used by structured property ${holder.urn}`);
      const violations = checkDefinition(next, {
        urn: w.target.urn,
        previous,
        softDeleted: await isSoftDeleted(tx, w.target.urn),
        dataTypes: await existingUrns(tx, 'dataTypeKey'),
        entityTypes: await existingUrns(tx, 'entityTypeKey'),
      });
      if (violations.length) throw SvcError.validation(violations);
      return next;
    },
    async afterWrite(w: PendingWrite, stored: unknown, tx: Db) {
      const previous = w.previous?.value as PropertyDefinition | undefined;
      const next = stored as PropertyDefinition;
      if (previous && (next.version ?? '') > (previous.version ?? '')) {
        // Values written under the previous version stop being returned now; this task deletes them.
        await enqueueTask(tx, STALE_VALUES_TASK, w.target.urn, { version: next.version ?? '' });
        onTaskQueued();
      }
    },
  };
}

/** Rules of `structuredProperties` writes (see valueRules.ts), and hiding values on read. */
function valuesHook(): AspectHook {
  return {
    aspects: ['structuredProperties'],
    async beforeWrites(writes, tx) {
      // Every property the request names, locked (shared) in URN order before any entity: the same order
      // batches of definitions take theirs, so the two cannot wait on each other in a cycle.
      const named = writes.flatMap((w) => {
        const properties = (w.value as Partial<StructuredProperties> | undefined)?.properties;
        return Array.isArray(properties) ? properties.map((a) => a.propertyUrn) : [];
      });
      await lockPropertiesShared(tx, named);
    },
    async prepareWrite(w: PendingWrite, tx: Db) {
      const incoming = (w.value as StructuredProperties).properties;
      const before = (w.previous?.value as StructuredProperties | undefined)?.properties ?? [];
      const referenced = [...before, ...incoming].map((a) => a.propertyUrn);
      await lockPropertiesShared(tx, referenced);
      const context = await loadWriteContext(tx, w.target.urn, w.target.spec.keyAspect, referenced);
      if (!context.entityExists) {
        fail([{ message: `Entity ${w.target.urn} does not exist: create it before setting structured properties on it`, precondition: true }]);
      }
      const states = context.properties;
      const recorded = context.recorded;
      const hidden = new Map(before.map((a) => [a.propertyUrn, hiddenReason(a, states, recorded)]));
      const previousOf = new Map(before.map((a) => [a.propertyUrn, a]));
      // What the caller gave: all of a set; the assignments a patch addresses. The rest is carried over.
      const given = w.kind === 'set' ? new Set(incoming.map((a) => a.propertyUrn)) : addressedByPatch(w.patch);

      let next = incoming;
      if (w.kind === 'set') {
        // A set replaces what the caller can see; values of soft-deleted properties are kept for a restore.
        next = [...incoming, ...before.filter((a) => hidden.get(a.propertyUrn) === 'soft' && !given.has(a.propertyUrn))];
      }
      // Values of a deleted property or of an older version go, unless the caller gives them again.
      next = next.filter((a) => hidden.get(a.propertyUrn) !== 'stale' || given.has(a.propertyUrn));
      // Checked and recorded under the current version: what changed, and what was stale and is given again.
      const fresh = next.filter((a) => !sameAssignment(a, previousOf.get(a.propertyUrn)) || hidden.get(a.propertyUrn) === 'stale');
      const visibleBefore = w.previous ? before.filter((a) => hidden.get(a.propertyUrn) !== 'stale') : undefined;
      const violations = [
        ...checkAssignments(fresh, next, states, entityTypeUrn(w.target.spec.name)),
        ...checkImmutable(visibleBefore, next, states),
      ];
      if (violations.length) fail(violations);
      w.scratch.states = states;
      w.scratch.recorded = recorded;
      w.scratch.fresh = new Set(fresh.map((a) => a.propertyUrn));
      return { ...(w.value as object), properties: next };
    },
    async afterWrite(w: PendingWrite, stored: unknown, tx: Db) {
      const states = w.scratch.states as Map<string, PropertyState>;
      const recorded = w.scratch.recorded as Map<string, string>;
      const fresh = w.scratch.fresh as Set<string>;
      // Fresh assignments take the current version; carried-over ones keep the one they were written under.
      await replaceValueRows(tx, w.target.urn, (stored as StructuredProperties).properties, (a) =>
        !fresh.has(a.propertyUrn) && recorded.has(a.propertyUrn) ? recorded.get(a.propertyUrn)! : versionOf(states.get(a.propertyUrn)),
      );
    },
    async filterRead(aspects: StoredAspect[], db: Db) {
      const all = aspects.flatMap((a) => (a.value as StructuredProperties).properties ?? []);
      if (all.length === 0) return;
      const { properties: states, recorded } = await loadReadContext(db, [...new Set(aspects.map((a) => a.urn))], all.map((a) => a.propertyUrn));
      for (const a of aspects) {
        const value = a.value as StructuredProperties;
        const shown = value.properties.filter((p) => hiddenReason(p, states, recorded.get(a.urn)) === undefined);
        if (shown.length !== value.properties.length) a.value = { ...value, properties: shown };
      }
    },
  };
}

/** A hard delete of a property (entity, key or definition) queues the removal of its values everywhere. */
function deleteHook(onTaskQueued: () => void): AspectHook {
  return {
    aspects: [],
    cascades: (target, aspect) => target.spec.name === 'structuredProperty' && aspect === 'propertyDefinition',
    async onDelete(target, aspect, tx) {
      if (target.spec.name === 'structuredProperty' && (aspect === undefined || aspect === 'propertyDefinition')) {
        const state = (await loadProperties(tx, [target.urn])).get(target.urn);
        if (!state) return;
        await enqueueTask(tx, HARD_DELETE_TASK, target.urn, { qualifiedName: state.definition.qualifiedName });
        onTaskQueued();
      } else if (aspect === 'structuredProperties') {
        // Deleting the aspect drops every assignment: immutable ones may not go, as with any other write.
        const stored = (await aspectVersion(tx, target.urn, 'structuredProperties', 0))?.value as StructuredProperties | undefined;
        if (stored) {
          const states = await loadProperties(tx, stored.properties.map((a) => a.propertyUrn));
          const violations = checkImmutable(stored.properties, [], states);
          if (violations.length) fail(violations);
        }
        await replaceValueRows(tx, target.urn, [], () => '');
      } else if (aspect === undefined) {
        await replaceValueRows(tx, target.urn, [], () => '');
      }
    },
  };
}

/** Every hook of structured properties; `onTaskQueued` wakes the task runner. */
export function structuredPropertyHooks(onTaskQueued: () => void): AspectHook[] {
  return [definitionHook(onTaskQueued), valuesHook(), deleteHook(onTaskQueued)];
}

/** The data types and one entity type per registry entity, as entities (written at every start, idempotent). */
export function bootstrapAspects(): { urn: string; aspect: string; value: unknown }[] {
  const dataTypes = DATA_TYPES.map((t) => ({
    urn: `urn:li:dataType:svc.${t.id}`,
    aspect: 'dataTypeInfo',
    value: { qualifiedName: `svc.${t.id}`, displayName: t.displayName, description: t.description },
  }));
  const entityTypes = registry.entities.map((e) => ({
    urn: entityTypeUrn(e.name),
    aspect: 'entityTypeInfo',
    value: { qualifiedName: `svc.${e.name}`, displayName: e.name },
  }));
  return [...dataTypes, ...entityTypes];
}

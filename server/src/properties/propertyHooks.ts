/**
 * Structured properties plugged into the entity core: the rules of definition writes and value writes,
 * hiding values on read (soft-deleted, hard-deleted or older-version properties), and the durable
 * cleanup queued by a hard delete or a versioned change. Every surface goes through these.
 */
import { SvcError, type Reason } from '../shared/errors.ts';
import type { Db } from '../db/pool.ts';
import { lockShared } from '../db/locks.ts';
import type { AspectHook, PendingWrite, SpeculativeState, WriteIntent } from '../entities/aspectHooks.ts';
import type { PatchOperation } from '../entities/jsonPatch.ts';
import { aspectVersion, type StoredAspect } from '../entities/aspectStore.ts';
import { type Guard } from '../entities/writeStatement.ts';
import { registry } from '../registry/registry.ts';
import { enqueueTask } from '../tasks/taskQueue.ts';
import { breakingChanges, checkDefinition, storedDefinition } from './definitionRules.ts';
import { normalizeDefinition } from '../contract/definitions.ts';
import {
  historicKey,
  loadDefinitionContexts,
  loadHistoricRecords,
  lockQualifiedName,
  loadProperties,
  loadReadContext,
  loadWriteContexts,
  READ_CONTEXT_SQL,
  readContextOf,
  type DefinitionContext,
  type PropertyVisibility,
  type ReadContextRow,
  type WriteContext,
} from './propertyStore.ts';
import { LastReadStates } from './lastReadStates.ts';
import { DATA_TYPES, entityTypeUrn, type Assignment, type PropertyDefinition, type StructuredProperties } from './types.ts';
import { checkAssignments, checkImmutable, type PropertyState, type Violation } from './valueRules.ts';
import { compareVersions, isOlder } from './versions.ts';
import { HARD_DELETE_TASK, STALE_VALUES_TASK } from '../contract/tasks.ts';


/** What a property's state says about showing its values (see hiddenReason). */
const visibilityOf = (state: PropertyState | undefined): PropertyVisibility | undefined => state && { version: state.definition.version ?? '', softDeleted: state.softDeleted };

/**
 * Why an assignment is not shown: its property is soft deleted, gone, or its values were written under
 * an older version than the definition's.
 */
function hiddenReason(a: Assignment, visibility: PropertyVisibility | undefined, recorded: Map<string, string> | undefined): 'soft' | 'stale' | undefined {
  if (!visibility) return 'stale'; // hard deleted: its values are being removed
  const at = recorded?.get(a.propertyUrn);
  if (at !== undefined && isOlder(at, visibility.version)) return 'stale';
  if (visibility.softDeleted) return 'soft';
  return undefined;
}

/** The property URNs a patch addresses (`/properties/<urn>`, and the URNs of the values it adds). */
function addressedByPatch(ops: PatchOperation[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const op of ops ?? []) {
    for (const path of [op.path, op.from]) {
      const [, field, key] = (path ?? '').split('/');
      if (field === 'properties' && key) out.add(key.replace(/~1/g, '/').replace(/~0/g, '~'));
    }
    const added = (op.value as Partial<Assignment> | undefined)?.propertyUrn;
    if (typeof added === 'string') out.add(added);
  }
  return out;
}

function sameAssignment(a: Assignment, b: Assignment | undefined): boolean {
  return b !== undefined && JSON.stringify(a.values) === JSON.stringify(b.values);
}

function fail(violations: Violation[]): never {
  const code = violations.every((v) => v.precondition) ? 'PRECONDITION' : 'VALIDATION';
  throw SvcError.listing(code, violations.map((v) => v.message), violations.length, violations.find((v) => v.reason)?.reason);
}

/**
 * The kind of a refused definition write: soft deleted first (restoring the property comes before
 * anything else can be written), then a breaking change without a greater version.
 */
function definitionRefusal(softDeleted: boolean, previous: PropertyDefinition | undefined, given: PropertyDefinition): Reason | undefined {
  if (softDeleted) return 'SoftDeleted';
  if (previous && breakingChanges(previous, given).length > 0) return 'BreakingChange';
  return undefined;
}

/** What a definition write checks, read under the lock of the qualified name it claims (in its transaction). */
async function readUnderNameLock(tx: Db, urn: string, qualifiedName: string): Promise<DefinitionContext> {
  await lockQualifiedName(tx, qualifiedName);
  return (await loadDefinitionContexts(tx, [{ urn, qualifiedName }], HARD_DELETE_TASK))[0]!.state;
}

/**
 * Rules of `propertyDefinition` writes (see definitionRules.ts), with the short forms normalised. An
 * update is checked against the state it read (its status, the types it names), unless it raises the
 * version (what follows it, afterWrite, queues the stale-values cleanup in the write's transaction); a
 * new property is written under locks, claiming its qualified name under the name's lock.
 */
function definitionHook(): AspectHook<DefinitionContext> {
  return {
    aspect: 'propertyDefinition',
    deletesMore: true,
    readState: (ws, db) =>
      loadDefinitionContexts(db, ws.map((w) => ({ urn: w.target.urn, qualifiedName: (w.value as Partial<PropertyDefinition> | undefined)?.qualifiedName })), HARD_DELETE_TASK),
    async check(w: PendingWrite, tx: Db, read?: DefinitionContext) {
      const previous = w.previous?.value as PropertyDefinition | undefined;
      const given = normalizeDefinition(w.value as PropertyDefinition);
      // Checked as written; stored with a version that never goes away or down.
      const next = storedDefinition(given, previous);
      const versionRaised = previous !== undefined && compareVersions(next.version, previous.version) > 0;
      if (read && (!previous || versionRaised || !read.names.has(next.qualifiedName))) return { value: next, needsLock: true };
      const { holders, cleanup, softDeleted, dataTypes, entityTypes } = read ?? (await readUnderNameLock(tx, w.target.urn, next.qualifiedName));
      if (cleanup) {
        const name =
          cleanup.subject === w.target.urn || cleanup.qualifiedName === next.qualifiedName
            ? `its qualified name ${next.qualifiedName}`
            : `the qualified name ${next.qualifiedName}, whose search field is that of ${cleanup.qualifiedName},`;
        throw new SvcError(
          'CONFLICT',
          `Structured property ${cleanup.subject} was hard deleted and its values are still being removed ` +
            `(task ${cleanup.id}: ${cleanup.done} of ${cleanup.total ?? '?'} entities done); ${name} can be used again once that task has finished`,
          { reason: 'CleanupPending' },
        );
      }
      const sameName = holders.find((h) => h.qualifiedName === next.qualifiedName);
      if (sameName) throw new SvcError('CONFLICT', `Qualified name ${next.qualifiedName} is already used by structured property ${sameName.urn}`);
      // A new name whose search field another property's name has is refused (definitionRules).
      const fieldHolder = previous ? undefined : holders[0]?.urn;
      const violations = checkDefinition(given, { urn: w.target.urn, previous, softDeleted, dataTypes, entityTypes, fieldHolder });
      if (violations.length) throw SvcError.validation(violations, violations.length, definitionRefusal(softDeleted, previous, given));
      if (!read) return { value: next };
      // The write goes ahead only if the status and the types named are as read.
      const guards: Guard[] = [
        { urn: w.target.urn, aspect: 'status', text: read.statusText },
        { urn: next.valueType, aspect: 'dataTypeKey', text: read.typeTexts.get(next.valueType) ?? null },
        ...[...next.entityTypes, ...(next.typeQualifier?.allowedTypes ?? [])].map((t) => ({ urn: t, aspect: 'entityTypeKey', text: read.typeTexts.get(t) ?? null })),
      ];
      return { value: next, guards };
    },
    async afterWrite(w: PendingWrite, stored: unknown, tx: Db) {
      const previous = w.previous?.value as PropertyDefinition | undefined;
      const next = stored as PropertyDefinition;
      if (previous && compareVersions(next.version, previous.version) > 0) {
        // Values written under the previous version stop being returned now; this task deletes them.
        await enqueueTask(tx, STALE_VALUES_TASK, w.target.urn, { version: next.version ?? '' });
      }
    },
    async onDelete(target, tx) {
      // A hard delete of the property (its entity, key or definition) queues the removal of its values everywhere.
      const state = (await loadProperties(tx, [target.urn])).get(target.urn);
      if (!state) return;
      await enqueueTask(tx, HARD_DELETE_TASK, target.urn, { qualifiedName: state.definition.qualifiedName });
    },
  };
}

/** The property URNs a value write names before any lock: all of a set, what a patch addresses. */
function namedBy(w: WriteIntent): string[] {
  if (w.kind === 'patch') return [...addressedByPatch(w.patch)];
  const properties = (w.value as Partial<StructuredProperties> | undefined)?.properties;
  return Array.isArray(properties) ? properties.map((a) => a.propertyUrn) : [];
}

/** The assignments a read of the entity shows, of those stored (`state`: what its write read). */
function shownOf(stored: Assignment[], state: WriteContext): Assignment[] {
  return stored.filter((a) => hiddenReason(a, visibilityOf(state.properties.get(a.propertyUrn)), state.recorded) === undefined);
}

/**
 * Hides values in older versions of entities' aspects (`?version=N`) as latest reads hide them, by the
 * record kept for each such row (db/migrations/R__svc_keep_assignment_history.sql): values of a
 * soft-deleted or hard-deleted property, and values written under an older version than the property's
 * current one.
 */
async function hideInHistory(aspects: StoredAspect[], db: Db): Promise<void> {
  const held = aspects.flatMap((a) => (a.value as StructuredProperties).properties.map((p) => p.propertyUrn));
  const [states, records] = await Promise.all([loadProperties(db, held), loadHistoricRecords(db, aspects)]);
  for (const a of aspects) {
    const value = a.value as StructuredProperties;
    const record = records.get(historicKey(a.urn, a.version));
    const shown = value.properties.filter((p) => record?.has(p.propertyUrn) && hiddenReason(p, visibilityOf(states.get(p.propertyUrn)), record) === undefined);
    if (shown.length !== value.properties.length) a.value = { ...value, properties: shown };
  }
}

/**
 * What reads show of `structuredProperties`: values of soft-deleted or hard-deleted properties, and
 * values written under an older version than the property's, are hidden (`rows`: the read context read
 * with the aspects, see READ_CONTEXT_SQL; read here when absent).
 */
async function showValues(all: StoredAspect[], db: Db, rows?: ReadContextRow[]): Promise<void> {
  const holding = all.filter((a) => (a.value as StructuredProperties).properties?.length);
  const historic = holding.filter((a) => a.version !== 0);
  if (historic.length) await hideInHistory(historic, db);
  const aspects = holding.filter((a) => a.version === 0);
  if (aspects.length === 0) return;
  const { properties: states, recorded } = rows ? readContextOf(rows) : await loadReadContext(db, [...new Set(aspects.map((a) => a.urn))]);
  for (const a of aspects) {
    const value = a.value as StructuredProperties;
    // The record follows the latest row in the statement that writes it: a property of the row read
    // here without its record was removed by a write since (e.g. a cleanup), so it is not shown.
    const record = recorded.get(a.urn);
    const shown = value.properties.filter((p) => record?.has(p.propertyUrn) && hiddenReason(p, states.get(p.propertyUrn), record) === undefined);
    if (shown.length !== value.properties.length) a.value = { ...value, properties: shown };
  }
}

/**
 * What lets a value write start from something other than a read (see SpeculativeState): the state
 * its entity's last write left, completed with the properties' states as last read, or a guess.
 */
function valuesSpeculation(lastRead: LastReadStates): SpeculativeState<WriteContext> {
  return {
    // After a write, the record holds every property of the value stored under its definition's current
    // version (db/migrations/R__svc_record_assignments.sql), the definition as read: the write's guards
    // held it so.
    stateAfter: (w, state) => ({
      ...state,
      recorded: new Map((w.value as StructuredProperties).properties.map((a) => [a.propertyUrn, visibilityOf(state.properties.get(a.propertyUrn))?.version ?? ''])),
    }),
    // A kept state serves a write to an entity that existed (its key is guarded) naming properties
    // whose state it holds, or whose state was read for another entity (e.g. a property the entity gets
    // for the first time); otherwise the write reads (the property may be new, or absent).
    stateFor(w, kept) {
      if (kept.entityKey === undefined) return undefined;
      const lacking = namedBy(w).filter((urn) => !kept.properties.has(urn));
      if (lacking.length === 0) return kept;
      const states = lastRead.statesOf(lacking);
      if (!states) return undefined;
      return { ...kept, properties: new Map([...kept.properties, ...states.properties]), texts: new Map([...kept.texts, ...states.texts]) };
    },
    // An entity's first value, most often: no row yet, its key as svc writes it (from the URN), no
    // record, and the properties named as the last read found them (all of them known, or no guess).
    guess(w) {
      const states = lastRead.statesOf(namedBy(w));
      if (!states) return undefined;
      return { previous: undefined, token: null, state: { entityKey: JSON.stringify(registry.keyAspectValue(w.target)), recorded: new Map(), ...states } };
    },
  };
}

/** Rules of `structuredProperties` writes (see valueRules.ts), and what reads show of them. */
function valuesHook(): AspectHook<WriteContext> {
  const lastRead = new LastReadStates();
  return {
    aspect: 'structuredProperties',
    async readState(ws, db) {
      const reads = await loadWriteContexts(db, 'structuredProperties', ws.map((w) => ({ urn: w.target.urn, keyAspect: w.target.spec.keyAspect, named: namedBy(w) })));
      // The reads of a group share the properties' states (see loadWriteContexts).
      if (reads[0]) lastRead.remember(reads[0].state, ws.flatMap(namedBy));
      return reads;
    },
    speculative: valuesSpeculation(lastRead),
    async patchBase(target, stored, db, read?) {
      // A patch acts on the value as reads show it: a hidden assignment cannot be removed (the path
      // does not exist for the caller) nor seen by an update; check keeps what the caller cannot see.
      const state = read ?? (await loadWriteContexts(db, 'structuredProperties', [{ urn: target.urn, keyAspect: target.spec.keyAspect, named: [] }]))[0]!.state;
      const value = stored.value as StructuredProperties;
      return { ...value, properties: shownOf(value.properties, state) };
    },
    async lockReferenced(writes, tx) {
      // Under locks (a write retried after conflicts): shared locks on every property the request names,
      // after the entities' locks, the order the write statement takes its guards in.
      await lockShared(tx, writes.flatMap(namedBy));
    },
    async check(w: PendingWrite, db: Db, read?: WriteContext) {
      const incoming = (w.value as StructuredProperties).properties;
      const before = (w.previous?.value as StructuredProperties | undefined)?.properties ?? [];
      const referenced = [...new Set([...before, ...incoming].map((a) => a.propertyUrn))];
      // Read with the stored row (without locks), or here under the entity's lock.
      const state = read ?? (await loadWriteContexts(db, w.aspect.name, [{ urn: w.target.urn, keyAspect: w.target.spec.keyAspect, named: referenced }]))[0]!.state;
      if (state.entityKey === undefined && !w.entityCreatedHere) {
        fail([{ message: `Entity ${w.target.urn} does not exist: create it before setting structured properties on it`, precondition: true }]);
      }
      const { properties: states, recorded } = state;
      const hidden = new Map(before.map((a) => [a.propertyUrn, hiddenReason(a, visibilityOf(states.get(a.propertyUrn)), recorded)]));
      const previousOf = new Map(before.map((a) => [a.propertyUrn, a]));
      // What the caller gave: all of a set; the assignments a patch addresses; nothing of a refresh.
      // The rest is carried over.
      const given = w.kind === 'set' ? new Set(incoming.map((a) => a.propertyUrn)) : w.kind === 'patch' ? addressedByPatch(w.patch) : new Set<string>();

      // A set or a patch replaces what the caller can see (a patch applies to that, see patchBase):
      // values of soft-deleted properties that the result does not hold are kept for a restore.
      // (A refresh starts from the stored value, which holds them.)
      const kept = before.filter((a) => hidden.get(a.propertyUrn) === 'soft' && !incoming.some((b) => b.propertyUrn === a.propertyUrn));
      let next = [...incoming, ...kept];
      // Values of a deleted property or of an older version go, unless the caller gives them again.
      next = next.filter((a) => hidden.get(a.propertyUrn) !== 'stale' || given.has(a.propertyUrn));
      // Checked: what changed, and what was stale and is given again (it is recorded under the current version).
      const fresh = next.filter((a) => !sameAssignment(a, previousOf.get(a.propertyUrn)) || hidden.get(a.propertyUrn) === 'stale');
      const visibleBefore = w.previous ? before.filter((a) => hidden.get(a.propertyUrn) !== 'stale') : undefined;
      const violations = [...checkAssignments(fresh, next, states, entityTypeUrn(w.target.spec.name)), ...checkImmutable(visibleBefore, next, states)];
      if (violations.length) fail(violations);
      // The write goes ahead only if the definitions and statuses relied on, and the entity, are as read.
      const guards: Guard[] = referenced.flatMap((urn) =>
        (['propertyDefinition', 'status'] as const).map((aspect) => ({ urn, aspect, text: state.texts.get(`${urn} ${aspect}`) ?? null })),
      );
      if (state.entityKey !== undefined) guards.push({ urn: w.target.urn, aspect: w.target.spec.keyAspect, text: state.entityKey });
      const value = { ...(w.value as object), properties: next };
      // Every assignment left is recorded under its property's current version (by a trigger,
      // db/migrations/R__svc_record_inserted_assignments.sql): a read right after hides only those of
      // soft-deleted properties.
      const shown = { ...value, properties: next.filter((a) => !states.get(a.propertyUrn)?.softDeleted) };
      return { value, guards, shown };
    },
    show: {
      sql: READ_CONTEXT_SQL,
      apply: (all, db, rows) => showValues(all, db, rows as ReadContextRow[] | undefined),
    },
    async onDelete(target, tx, withEntity) {
      // Deleting the aspect alone drops every assignment: immutable ones may not go, as with any other
      // write. (The record of assignments follows the deletion by itself: a trigger,
      // db/migrations/R__svc_record_assignments.sql.)
      if (withEntity) return;
      const stored = (await aspectVersion(tx, target.urn, 'structuredProperties', 0))?.value as StructuredProperties | undefined;
      if (!stored) return;
      const states = await loadProperties(tx, stored.properties.map((a) => a.propertyUrn));
      const violations = checkImmutable(stored.properties, [], states);
      if (violations.length) fail(violations);
    },
  };
}

/** The hooks of structured properties (the tasks they queue wake the runners themselves, see taskQueue.ts). */
export function structuredPropertyHooks(): [AspectHook<DefinitionContext>, AspectHook<WriteContext>] {
  return [definitionHook(), valuesHook()];
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
